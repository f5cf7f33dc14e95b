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

/**
 * Each page of a paginated read, fetched as the loop asks for it: `fetchPage` gets `undefined`, then
 * each page's `nextStart`, until a page has none or the loop stops (`break`, `return`). The one
 * pagination loop of the store: DynamoDB's `LastEvaluatedKey` ({@link lastEvaluatedKey}) and the
 * store's own page cursors ({@link nextCursor}) alike.
 *
 * @example
 * ```ts
 * for await (const page of pages((start) => client.send(new QueryCommand({ …, ExclusiveStartKey: start })), lastEvaluatedKey))
 *   items.push(...(page.Items ?? []));
 * ```
 */
export async function* pages<Page, Start>(
  fetchPage: (start: Start | undefined) => Promise<Page>,
  nextStart: (page: Page) => Start | undefined,
): AsyncGenerator<Page, void, undefined> {
  let start: Start | undefined;
  do {
    const page = await fetchPage(start);
    yield page;
    start = nextStart(page);
  } while (start !== undefined);
}

/** Where a DynamoDB Query or Scan page says the next one starts. */
export const lastEvaluatedKey = (page: {
  readonly LastEvaluatedKey?: Record<string, AttributeValue> | undefined;
}): Record<string, AttributeValue> | undefined => page.LastEvaluatedKey;

/** Where a store listing's page (`Page`) says the next one starts. */
export const nextCursor = (page: { readonly cursor?: string | undefined }): string | undefined => page.cursor;
