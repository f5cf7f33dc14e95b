import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { invalidCursor } from './errors';

/**
 * Pagination cursors: DynamoDB's `LastEvaluatedKey` as base64url JSON. Every key attribute of
 * this table and its indexes is a string, so a cursor holds only `{ S }` values; anything else
 * was not made here.
 */

export const encodeCursor = (key: Record<string, AttributeValue> | undefined): string | undefined =>
  key === undefined ? undefined : Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');

export const decodeCursor = (cursor: string | undefined): Record<string, AttributeValue> | undefined => {
  if (cursor === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch (error) {
    throw invalidCursor({ cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalidCursor();
  const key: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(parsed)) {
    const s: unknown = typeof value === 'object' && value !== null ? (value as { S?: unknown }).S : undefined;
    if (typeof s !== 'string' || Object.keys(value as object).length !== 1) throw invalidCursor();
    key[name] = { S: s };
  }
  if (Object.keys(key).length === 0) throw invalidCursor();
  return key;
};
