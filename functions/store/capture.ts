import { type AttributeValue, GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { type Item, ItemReader, num, str, strList } from './attributes';
import type { StoreTable } from './store-table';
import { lastEvaluatedKey, pages } from './cursor';
import { StoreError } from './errors';
import { ID_PATTERN, idTime, newId } from './ids';
import { captureKey, capturePk, epochSeconds, ItemKind } from './keys';
import { TABLE } from './table';
import { RECENT_LIMIT } from '../core/defaults';

/** A webhook payload as it was received, kept for `routes.<id>.capture` (the console shows it). */
export interface CapturedPayload {
  readonly id: string;
  readonly route: string;
  readonly receivedAt: string;
  /** Lower-cased names; only those the capture was told to keep (see `keptHeaders`). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as UTF-8 text, or base64 when it was not valid UTF-8 (`bodyEncoding`). */
  readonly body: string;
  readonly bodyEncoding: 'utf8' | 'base64';
  /** The records the webhook became (none for a ping). */
  readonly recordIds: readonly string[];
  /** TTL, epoch seconds. */
  readonly expiresAt: number;
}

/** What `capturePayload` keeps. */
export interface CaptureInput {
  readonly route: string;
  readonly receivedAt: Date;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The header names to keep (lower case), every other header is dropped: an allow-list, so that
   * no credential is stored whatever its header is called. Ingest passes `capturedHeaderNames`.
   */
  readonly keepHeaders: readonly string[];
  readonly body: Uint8Array;
  readonly recordIds: readonly string[];
  /** How long it is kept: the route's `capture`. */
  readonly keepSeconds: number;
}

/**
 * The headers a capture keeps: only those named in `keep` (an allow-list, matched without regard
 * to case), never any other.
 *
 * @example
 * ```typescript
 * keptHeaders({ 'content-type': 'application/json', 'x-webhook-auth': 'hunter2' }, ['content-type']); // { 'content-type': 'application/json' }
 * ```
 */
export const keptHeaders = (
  headers: Readonly<Record<string, string>>,
  keep: readonly string[],
): Record<string, string> => {
  const allowed = new Set(keep.map((name) => name.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => allowed.has(name.toLowerCase())));
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Keeps one received payload for `keepSeconds` (DynamoDB TTL removes it after that), with only
 * the headers named in `keepHeaders`. The console lists a route's captures newest first.
 *
 * @example
 * ```typescript
 * await store.capturePayload({ route: 'orders', receivedAt, headers, keepHeaders: ['content-type'], body, recordIds: ids, keepSeconds: 86_400 });
 * ```
 */
export const capturePayload = async (table: StoreTable, input: CaptureInput): Promise<CapturedPayload> => {
  if (!Number.isInteger(input.keepSeconds) || input.keepSeconds < 1) {
    throw new StoreError(`keepSeconds must be a whole number ≥ 1, got ${input.keepSeconds}`);
  }
  let body: string;
  let bodyEncoding: CapturedPayload['bodyEncoding'];
  try {
    body = utf8.decode(input.body);
    bodyEncoding = 'utf8';
  } catch {
    body = Buffer.from(input.body).toString('base64');
    bodyEncoding = 'base64';
  }
  const receivedAt = input.receivedAt.toISOString();
  const captured: CapturedPayload = {
    id: newId(input.receivedAt),
    route: input.route,
    receivedAt,
    headers: keptHeaders(input.headers, input.keepHeaders),
    body,
    bodyEncoding,
    recordIds: [...input.recordIds],
    expiresAt: epochSeconds(input.receivedAt) + input.keepSeconds,
  };
  await table.client.send(
    new PutItemCommand({
      TableName: table.tableName,
      Item: {
        ...captureKey(input.route, receivedAt, captured.id),
        kind: str(ItemKind.Capture),
        id: str(captured.id),
        route: str(input.route),
        receivedAt: str(receivedAt),
        headers: str(JSON.stringify(captured.headers)),
        body: str(body),
        bodyEncoding: str(bodyEncoding),
        recordIds: strList(captured.recordIds),
        [TABLE.timeToLive]: num(captured.expiresAt),
      },
    }),
  );
  return captured;
};

/**
 * A route's captured payloads, newest first, leaving out any whose time has passed (TTL deletes
 * them some time later).
 *
 * @example
 * ```typescript
 * const [latest] = await store.listCaptures('orders', { limit: 1 });
 * ```
 */
export const listCaptures = async (
  table: StoreTable,
  route: string,
  { limit = RECENT_LIMIT, now = table.clock() }: { readonly limit?: number; readonly now?: Date } = {},
): Promise<CapturedPayload[]> => {
  const { Items: items = [] } = await table.client.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: '#pk = :pk',
      FilterExpression: '#expiresAt > :now',
      ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#expiresAt': TABLE.timeToLive },
      ExpressionAttributeValues: { ':pk': str(capturePk(route)), ':now': num(epochSeconds(now)) },
      ScanIndexForward: false,
      Limit: limit,
      ConsistentRead: true,
    }),
  );
  return items.map(captureFromItem);
};

/**
 * One captured payload by its id, if it is still kept: its key is the time in the id and the id,
 * so this is one read, not a listing.
 *
 * @example
 * ```typescript
 * const capture = await store.getCapture('orders', captureId);
 * ```
 */
export const getCapture = async (
  table: StoreTable,
  route: string,
  id: string,
  now: Date = table.clock(),
): Promise<CapturedPayload | undefined> => {
  if (!ID_PATTERN.test(id)) return undefined;
  const { Item: item } = await table.client.send(
    new GetItemCommand({
      TableName: table.tableName,
      Key: captureKey(route, idTime(id).toISOString(), id),
      ConsistentRead: true,
    }),
  );
  const capture = item === undefined ? undefined : captureFromItem(item);
  return capture !== undefined && capture.expiresAt > epochSeconds(now) ? capture : undefined;
};

const captureFromItem = (item: Item): CapturedPayload => {
  const read = new ItemReader(item, item[TABLE.partitionKey]?.S ?? '(no key)');
  return {
    id: read.str('id'),
    route: read.str('route'),
    receivedAt: read.str('receivedAt'),
    headers: JSON.parse(read.str('headers')) as Record<string, string>,
    body: read.str('body'),
    bodyEncoding: read.str('bodyEncoding') === 'base64' ? 'base64' : 'utf8',
    recordIds: read.strList('recordIds'),
    expiresAt: read.num(TABLE.timeToLive),
  };
};

/** How far before a record's creation its webhook's capture can have been received. */
const CAPTURE_LEAD_MS = 10 * 60_000;

/**
 * The captured payload a record came from, if the route kept it and it has not expired: looked up
 * among the route's captures received up to ten minutes before the record was created.
 *
 * @example
 * ```typescript
 * const capture = await store.findCapture(record.route, record.id, record.createdAt);
 * ```
 */
export const findCapture = async (
  table: StoreTable,
  route: string,
  recordId: string,
  createdAt: string,
  now: Date = table.clock(),
): Promise<CapturedPayload | undefined> => {
  const created = Date.parse(createdAt);
  if (Number.isNaN(created)) throw new StoreError(`createdAt must be an ISO time, got "${createdAt}"`);
  const found = pages(
    async (start: Record<string, AttributeValue> | undefined) =>
      await table.client.send(
        new QueryCommand({
          TableName: table.tableName,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          FilterExpression: '#expiresAt > :now AND contains(#recordIds, :id)',
          ExpressionAttributeNames: {
            '#pk': TABLE.partitionKey,
            '#sk': TABLE.sortKey,
            '#expiresAt': TABLE.timeToLive,
            '#recordIds': 'recordIds',
          },
          ExpressionAttributeValues: {
            ':pk': str(capturePk(route)),
            ':from': str(new Date(created - CAPTURE_LEAD_MS).toISOString()),
            // `~` sorts after the `#id` suffix of a capture received in the same millisecond.
            ':to': str(`${createdAt}~`),
            ':now': num(epochSeconds(now)),
            ':id': str(recordId),
          },
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      ),
    lastEvaluatedKey,
  );
  for await (const page of found) {
    const item = page.Items?.[0];
    if (item !== undefined) return captureFromItem(item);
  }
  return undefined;
};

/**
 * Captured payloads: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const captureOperations = (table: StoreTable) => ({
  /** Keeps one received payload for the route's `capture` time. See {@link capturePayload}. */
  capturePayload: async (input: CaptureInput): Promise<CapturedPayload> => await capturePayload(table, input),
  /** A route's captured payloads, newest first. */
  listCaptures: async (
    route: string,
    options?: { readonly limit?: number; readonly now?: Date },
  ): Promise<CapturedPayload[]> => await listCaptures(table, route, options),
  /** One captured payload by its id, if it is still kept. See {@link getCapture}. */
  getCapture: async (route: string, id: string): Promise<CapturedPayload | undefined> =>
    await getCapture(table, route, id),
  /** The captured payload a record came from, if it is still kept. See {@link findCapture}. */
  findCapture: async (route: string, recordId: string, createdAt: string): Promise<CapturedPayload | undefined> =>
    await findCapture(table, route, recordId, createdAt),
});
