import { type AttributeValue, BatchGetItemCommand, GetItemCommand, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { type Item, str } from './attributes';
import { messageFromItem } from './codec';
import type { StoreTable } from './context';
import { decodeCursor, encodeCursor } from './cursor';
import { InvalidArgumentError, StoreError } from './errors';
import { ItemKind, messageKey } from './keys';
import { MessageState, TABLE } from './table';
import type { MessageRecord, Page } from './types';

const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;
/** Keys per `BatchGetItem`, DynamoDB's maximum. */
const BATCH_GET_SIZE = 100;
/** Requests per batch before giving up on keys DynamoDB keeps returning unprocessed (throttling). */
const BATCH_GET_ATTEMPTS = 8;
const BATCH_GET_BACKOFF_MS = 50;

/**
 * Reads one message record, strongly consistent.
 *
 * @example
 * ```typescript
 * const record = await store.getMessage('01JGFJJZ000000000000000000');
 * if (record?.state === 'SENT') console.log(record.result?.remainingBalance);
 * ```
 */
export const getMessage = async (context: StoreTable, id: string): Promise<MessageRecord | undefined> => {
  const { Item: item } = await context.client.send(
    new GetItemCommand({ TableName: context.tableName, Key: messageKey(id), ConsistentRead: true }),
  );
  return item === undefined ? undefined : messageFromItem(item);
};

/**
 * Time range and paging of a listing. Index queries are eventually consistent on AWS: a record
 * written or changed a moment ago may be missing, or (`byState`) listed in its previous state.
 */
export interface ListOptions {
  /** Only records whose index time (`updatedAt` or `createdAt`) is at or after this. */
  readonly since?: Date;
  /** Only records whose index time is strictly before this. */
  readonly before?: Date;
  /** Page size, 1–1000; default 100. */
  readonly limit?: number;
  readonly cursor?: string;
  /** Newest first instead of oldest first. */
  readonly newestFirst?: boolean;
}

interface IndexQuery extends ListOptions {
  readonly index: (typeof TABLE.indexes)[keyof typeof TABLE.indexes];
  readonly partition: string;
  readonly filter?: string;
  readonly filterValues?: Readonly<Record<string, AttributeValue>>;
}

const queryIndex = async (
  context: StoreTable,
  {
    index,
    partition,
    since,
    before,
    limit = DEFAULT_PAGE_SIZE,
    cursor,
    newestFirst = false,
    filter,
    filterValues = {},
  }: IndexQuery,
): Promise<Page<MessageRecord>> => {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new InvalidArgumentError(`page size must be 1–${MAX_PAGE_SIZE}, got ${limit}`);
  }
  // Timestamps carry milliseconds, so "before T" is "at or before T − 1 ms", which BETWEEN can
  // express together with `since` (a key condition allows one range operator).
  const upper = before === undefined ? undefined : new Date(before.getTime() - 1).toISOString();
  const lower = since?.toISOString();
  if (lower !== undefined && upper !== undefined && lower > upper) return { items: [] };
  if (!context.readIndexes) {
    return await scanAsIndex(context, { index, partition, lower, upper, limit, cursor, newestFirst, filter, filterValues });
  }
  const values: Record<string, AttributeValue> = { ':partition': str(partition), ...filterValues };
  if (lower !== undefined) values[':lower'] = str(lower);
  if (upper !== undefined) values[':upper'] = str(upper);
  let range = '';
  if (lower !== undefined && upper !== undefined) range = ' AND #sort BETWEEN :lower AND :upper';
  else if (lower !== undefined) range = ' AND #sort >= :lower';
  else if (upper !== undefined) range = ' AND #sort <= :upper';

  const result = await context.client.send(
    new QueryCommand({
      TableName: context.tableName,
      IndexName: index.name,
      KeyConditionExpression: `#partition = :partition${range}`,
      ...(filter === undefined ? {} : { FilterExpression: filter }),
      ExpressionAttributeNames: {
        '#partition': index.partitionKey,
        ...(range === '' ? {} : { '#sort': index.sortKey }),
        ...namesIn(filter),
      },
      ExpressionAttributeValues: values,
      Limit: limit,
      ScanIndexForward: !newestFirst,
      ExclusiveStartKey: decodeCursor(cursor),
    }),
  );
  const cursorOut = encodeCursor(result.LastEvaluatedKey);
  const entries = result.Items ?? [];
  // A keys-only index holds no record: read the records themselves, in the index's order.
  const items = index.projection === 'KEYS_ONLY' ? await getRecords(context, entries) : entries.map(messageFromItem);
  return { items, ...(cursorOut === undefined ? {} : { cursor: cursorOut }) };
};

/**
 * What `queryIndex` returns, read from the table itself: every message item of the partition
 * (filtered scan, all pages), in the index's order (sort key, then key), paged by a cursor that
 * names the last record returned.
 */
const scanAsIndex = async (
  context: StoreTable,
  {
    index,
    partition,
    lower,
    upper,
    limit,
    cursor,
    newestFirst,
    filter,
    filterValues,
  }: Pick<IndexQuery, 'index' | 'partition' | 'filter'> & {
    readonly lower: string | undefined;
    readonly upper: string | undefined;
    readonly limit: number;
    readonly cursor: string | undefined;
    readonly newestFirst: boolean;
    readonly filterValues: Readonly<Record<string, AttributeValue>>;
  },
): Promise<Page<MessageRecord>> => {
  const conditions = ['#kind = :kind', '#partition = :partition'];
  if (lower !== undefined) conditions.push('#sort >= :lower');
  if (upper !== undefined) conditions.push('#sort <= :upper');
  if (filter !== undefined) conditions.push(`(${filter})`);
  const expression = conditions.join(' AND ');
  const items: Item[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await context.client.send(
      new ScanCommand({
        TableName: context.tableName,
        FilterExpression: expression,
        ExpressionAttributeNames: {
          '#kind': 'kind',
          '#partition': index.partitionKey,
          ...(lower === undefined && upper === undefined ? {} : { '#sort': index.sortKey }),
          ...namesIn(filter),
        },
        ExpressionAttributeValues: {
          ':kind': str(ItemKind.Message),
          ':partition': str(partition),
          ...(lower === undefined ? {} : { ':lower': str(lower) }),
          ...(upper === undefined ? {} : { ':upper': str(upper) }),
          ...filterValues,
        },
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);

  const position = (item: Item): string => `${item[index.sortKey]?.S ?? ''}\u0000${pkOf(item)}`;
  const direction = newestFirst ? -1 : 1;
  items.sort((a, b) => direction * (position(a) < position(b) ? -1 : position(a) > position(b) ? 1 : 0));
  const after = decodeCursor(cursor)?.['position']?.S;
  const remaining = after === undefined ? items : items.filter((item) => direction * (position(item) > after ? 1 : position(item) < after ? -1 : 0) > 0);
  const page = remaining.slice(0, limit);
  const last = page.at(-1);
  const more = remaining.length > limit && last !== undefined;
  return { items: page.map(messageFromItem), ...(more ? { cursor: encodeCursor({ position: str(position(last)) })! } : {}) };
};

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms));

const pkOf = (item: Item): string => item[TABLE.partitionKey]?.S ?? '';

/**
 * The records of index entries, by consistent `BatchGetItem`s of up to 100 keys, in the order of
 * `entries`. An entry whose record is gone (deleted by TTL since the index was read) is left out.
 */
const getRecords = async (context: StoreTable, entries: readonly Item[]): Promise<MessageRecord[]> => {
  const keys = entries.map((entry) => ({
    [TABLE.partitionKey]: entry[TABLE.partitionKey] as AttributeValue,
    [TABLE.sortKey]: entry[TABLE.sortKey] as AttributeValue,
  }));
  const batches: Item[][] = [];
  for (let start = 0; start < keys.length; start += BATCH_GET_SIZE) batches.push(keys.slice(start, start + BATCH_GET_SIZE));
  const found = new Map<string, Item>();
  await Promise.all(
    batches.map(async (batch) => {
      let pending = batch;
      for (let attempt = 1; pending.length > 0; attempt += 1) {
        if (attempt > BATCH_GET_ATTEMPTS) {
          throw new StoreError(`${pending.length} records still unprocessed after ${BATCH_GET_ATTEMPTS} BatchGetItem requests`);
        }
        if (attempt > 1) await sleep(BATCH_GET_BACKOFF_MS * 2 ** (attempt - 2));
        const result = await context.client.send(
          new BatchGetItemCommand({ RequestItems: { [context.tableName]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const item of result.Responses?.[context.tableName] ?? []) found.set(pkOf(item), item);
        pending = result.UnprocessedKeys?.[context.tableName]?.Keys ?? [];
      }
    }),
  );
  return keys.flatMap((key) => {
    const item = found.get(pkOf(key));
    return item === undefined ? [] : [messageFromItem(item)];
  });
};

const namesIn = (expression: string | undefined): Record<string, string> => {
  const names: Record<string, string> = {};
  for (const [, name] of (expression ?? '').matchAll(/#(\w+)/g)) if (name !== undefined) names[`#${name}`] = name;
  return names;
};

/**
 * Lists message records in one state by `updatedAt` (index `byState`), oldest first.
 *
 * @example
 * ```typescript
 * let cursor: string | undefined;
 * do {
 *   const page = await store.listByState('PARKED', { limit: 50, cursor });
 *   for (const record of page.items) console.log(record.id, record.reason);
 *   cursor = page.cursor;
 * } while (cursor !== undefined);
 * ```
 */
export const listByState = async (
  context: StoreTable,
  state: MessageState,
  options: ListOptions = {},
): Promise<Page<MessageRecord>> =>
  await queryIndex(context, { ...options, index: TABLE.indexes.byState, partition: state });

/**
 * Lists a route's message records by `createdAt` (index `byRoute`), oldest first. The index holds
 * keys only: each page is one `Query` plus one consistent `BatchGetItem` per 100 records, so the
 * records are current even where the index lags. A record deleted by TTL between the two is left
 * out, so a page may hold fewer than `limit` records and still have a cursor.
 *
 * @example
 * ```typescript
 * const page = await store.listByRoute('orders', { since: new Date(Date.now() - 86_400_000), newestFirst: true });
 * ```
 */
export const listByRoute = async (
  context: StoreTable,
  route: string,
  options: ListOptions = {},
): Promise<Page<MessageRecord>> =>
  await queryIndex(context, { ...options, index: TABLE.indexes.byRoute, partition: route });

/** The cut-off and paging of `findStaleSending`. */
export interface StaleOptions {
  /** Claims at or after this time are not stale. */
  readonly olderThan: Date;
  readonly limit?: number;
  readonly cursor?: string;
}

/**
 * Lists `SENDING` records claimed before `olderThan`: their sender presumably died. The sweeper
 * marks at-most-once ones `UNKNOWN` and releases or re-claims at-least-once ones, presenting the
 * record's `claimToken` (or `claimMessage` with `staleAfterMs`).
 *
 * @example
 * ```typescript
 * const page = await store.findStaleSending({ olderThan: new Date(Date.now() - 120_000) });
 * ```
 */
export const findStaleSending = async (
  context: StoreTable,
  { olderThan, limit, cursor }: StaleOptions,
): Promise<Page<MessageRecord>> =>
  // A claim sets updatedAt = claimedAt, and nothing else touches a SENDING record.
  await listByState(context, MessageState.Sending, {
    before: olderThan,
    ...(limit === undefined ? {} : { limit }),
    ...(cursor === undefined ? {} : { cursor }),
  });

/** The time and paging of `findDuePending`. */
export interface DueOptions {
  readonly now?: Date;
  /**
   * Only records last changed before this, e.g. a few seconds ago, to leave fresh inserts to the
   * stream-triggered sender. Claims are conditional, so overlapping is safe, only wasteful.
   */
  readonly updatedBefore?: Date;
  readonly limit?: number;
  readonly cursor?: string;
}

/**
 * Lists `PENDING` records that are due (no `nextAttemptAt`, or it has passed): retries, requeued
 * records, and inserts whose stream trigger was lost. The filter runs after the page is read, so a
 * page may hold fewer than `limit` records and still have a cursor.
 *
 * @example
 * ```typescript
 * const page = await store.findDuePending({ updatedBefore: new Date(Date.now() - 10_000) });
 * for (const { id } of page.items) {
 *   const record = await store.claimMessage(id);
 *   if (record) await send(record);
 * }
 * ```
 */
export const findDuePending = async (
  context: StoreTable,
  { now = context.clock(), updatedBefore, limit, cursor }: DueOptions = {},
): Promise<Page<MessageRecord>> =>
  await queryIndex(context, {
    index: TABLE.indexes.byState,
    partition: MessageState.Pending,
    ...(updatedBefore === undefined ? {} : { before: updatedBefore }),
    ...(limit === undefined ? {} : { limit }),
    ...(cursor === undefined ? {} : { cursor }),
    filter: 'attribute_not_exists(#nextAttemptAt) OR #nextAttemptAt <= :now',
    filterValues: { ':now': str(now.toISOString()) },
  });
