import {
  type AttributeValue,
  BatchGetItemCommand,
  GetItemCommand,
  QueryCommand,
  type QueryCommandInput,
  type QueryCommandOutput,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { type Item, ItemReader, str } from './attributes';
import { messageFromItem } from './codec';
import type { StoreTable, UndecodableRecord } from './store-table';
import { decodeCursor, encodeCursor, nextCursor, pages } from './cursor';
import { corruptRecord, StoreError } from './errors';
import { ItemKind, messageKey } from './keys';
import { PAGE_SIZE } from '../core/defaults';
import { allPages } from './range';
import { MessageState, TABLE } from './table';
import type { MessageRecord, Page } from './types';

const DEFAULT_PAGE_SIZE = PAGE_SIZE.default;
const MAX_PAGE_SIZE = PAGE_SIZE.max;
/** Keys per `BatchGetItem`, DynamoDB's maximum. */
const BATCH_GET_SIZE = 100;
/** Requests per batch before giving up on keys DynamoDB keeps returning unprocessed (throttling). */
const BATCH_GET_ATTEMPTS = 8;
const BATCH_GET_BACKOFF_MS = 50;

/** Each index by the name of the index it replaced, which a table made before the replacement still has instead. */
const REPLACED: Readonly<Record<string, string>> = { [TABLE.indexes.byState.name]: TABLE.retiredIndexes.byState.name };

/**
 * One query of an index; on a table made before the index replaced another (a local data
 * directory: dynalite cannot add an index to a table), the same query of the one it replaced,
 * which has the same keys and projects at least as much.
 */
export const queryIndexed = async (
  table: StoreTable,
  input: QueryCommandInput & { IndexName: string },
): Promise<QueryCommandOutput> => {
  try {
    return await table.client.send(new QueryCommand(input));
  } catch (error) {
    const replaced = REPLACED[input.IndexName];
    if (replaced === undefined || !isMissingIndex(error, input.IndexName)) throw error;
    return await table.client.send(new QueryCommand({ ...input, IndexName: replaced }));
  }
};

/**
 * Reads one message record, strongly consistent.
 *
 * @example
 * ```typescript
 * const record = await store.getMessage('01JGFJJZ000000000000000000');
 * if (record?.state === 'SENT') console.log(record.result?.remainingBalance);
 * ```
 */
export const getMessage = async (table: StoreTable, id: string): Promise<MessageRecord | undefined> => {
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: messageKey(id), ConsistentRead: true }),
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
  /** Query the index even where the store otherwise scans (`readIndexes: false`): candidates only. */
  readonly candidatesFromIndex?: boolean;
}

/**
 * A listing's window as the index's sort-key bounds, both inclusive; `undefined` when it is empty.
 * Timestamps carry milliseconds, so "before T" is "at or before T − 1 ms", which BETWEEN can
 * express together with `since` (a key condition allows one range operator).
 */
const timeBounds = (
  since: Date | undefined,
  before: Date | undefined,
): { readonly lower: string | undefined; readonly upper: string | undefined } | undefined => {
  const lower = since?.toISOString();
  const upper = before === undefined ? undefined : new Date(before.getTime() - 1).toISOString();
  return lower !== undefined && upper !== undefined && lower > upper ? undefined : { lower, upper };
};

export const queryIndex = async (
  table: StoreTable,
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
    candidatesFromIndex = false,
  }: IndexQuery,
): Promise<Page<MessageRecord>> => {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new StoreError(`page size must be 1–${MAX_PAGE_SIZE}, got ${limit}`);
  }
  const bounds = timeBounds(since, before);
  if (bounds === undefined) return { items: [] };
  const { lower, upper } = bounds;
  if (!table.readIndexes && !candidatesFromIndex) {
    return await scanAsIndex(table, {
      index,
      partition,
      lower,
      upper,
      limit,
      cursor,
      newestFirst,
      filter,
      filterValues,
    });
  }
  const { entries, cursor: cursorOut } = await queryIndexEntries(table, {
    index,
    partition,
    lower,
    upper,
    limit,
    cursor,
    newestFirst,
    filter,
    filterValues,
  });
  // The indexes hold no whole record: read the records themselves, in the index's order.
  const items = await getRecords(table, entries);
  return { items, ...(cursorOut === undefined ? {} : { cursor: cursorOut }) };
};

/** One page of an index's own entries (keys and projected attributes), no record read. */
const queryIndexEntries = async (
  table: StoreTable,
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
  }: Pick<IndexQuery, 'index' | 'partition' | 'filter' | 'cursor'> & {
    readonly lower: string | undefined;
    readonly upper: string | undefined;
    readonly limit: number;
    readonly newestFirst: boolean;
    readonly filterValues: Readonly<Record<string, AttributeValue>>;
  },
): Promise<{ readonly entries: Item[]; readonly cursor?: string }> => {
  const values: Record<string, AttributeValue> = { ':partition': str(partition), ...filterValues };
  if (lower !== undefined) values[':lower'] = str(lower);
  if (upper !== undefined) values[':upper'] = str(upper);
  let range = '';
  if (lower !== undefined && upper !== undefined) range = ' AND #sort BETWEEN :lower AND :upper';
  else if (lower !== undefined) range = ' AND #sort >= :lower';
  else if (upper !== undefined) range = ' AND #sort <= :upper';

  const result = await queryIndexed(table, {
    TableName: table.tableName,
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
  });
  const cursorOut = encodeCursor(result.LastEvaluatedKey);
  return { entries: result.Items ?? [], ...(cursorOut === undefined ? {} : { cursor: cursorOut }) };
};

/**
 * What `queryIndex` returns, read from the table itself: every message item of the partition by
 * one filtered scan (all pages) that returns only the keys and the index's sort key, ordered as the
 * index orders them (sort key, then key), then the page's records by consistent `BatchGetItem`.
 * The cursor names the last record returned. Returning keys only makes a scan about 2.5× faster
 * on 10,000 records than returning whole records, whatever the page size.
 */
const scanAsIndex = async (
  table: StoreTable,
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
  }: Pick<IndexQuery, 'index' | 'filter'> & {
    /** Absent: every partition (every state, every route). */
    readonly partition: string | undefined;
    readonly lower: string | undefined;
    readonly upper: string | undefined;
    readonly limit: number;
    readonly cursor: string | undefined;
    readonly newestFirst: boolean;
    readonly filterValues: Readonly<Record<string, AttributeValue>>;
  },
): Promise<Page<MessageRecord>> => {
  const entries = await scanMessages(table, {
    filters: [
      ...(partition === undefined ? [] : [`#${index.partitionKey} = :partition`]),
      ...(lower === undefined ? [] : [`#${index.sortKey} >= :lower`]),
      ...(upper === undefined ? [] : [`#${index.sortKey} <= :upper`]),
      ...(filter === undefined ? [] : [`(${filter})`]),
    ],
    values: {
      ...(partition === undefined ? {} : { ':partition': str(partition) }),
      ...(lower === undefined ? {} : { ':lower': str(lower) }),
      ...(upper === undefined ? {} : { ':upper': str(upper) }),
      ...filterValues,
    },
    attributes: [TABLE.partitionKey, TABLE.sortKey, index.sortKey],
  });
  const position = (item: Item): string => `${item[index.sortKey]?.S ?? ''}\u0000${pkOf(item)}`;
  const direction = newestFirst ? -1 : 1;
  entries.sort((a, b) => direction * (position(a) < position(b) ? -1 : position(a) > position(b) ? 1 : 0));
  const after = decodeCursor(cursor)?.['position']?.S;
  const remaining =
    after === undefined
      ? entries
      : entries.filter((item) => direction * (position(item) > after ? 1 : position(item) < after ? -1 : 0) > 0);
  const page = remaining.slice(0, limit);
  const last = page.at(-1);
  const more = remaining.length > limit && last !== undefined;
  return {
    items: await getRecords(table, page),
    ...(more ? { cursor: encodeCursor({ position: str(position(last)) })! } : {}),
  };
};

/**
 * Every message item matching `filters` (joined by AND; `#name` placeholders for attribute names),
 * by one consistent scan of all pages, returning only `attributes` (dotted paths allowed).
 */
const scanMessages = async (
  table: StoreTable,
  {
    filters,
    values,
    attributes,
  }: {
    readonly filters: readonly string[];
    readonly values: Readonly<Record<string, AttributeValue>>;
    readonly attributes: readonly string[];
  },
): Promise<Item[]> => {
  const expression = ['#kind = :kind', ...filters].join(' AND ');
  const projection = projectionOf(attributes);
  return await allPages(
    async (start) =>
      await table.client.send(
        new ScanCommand({
          TableName: table.tableName,
          FilterExpression: expression,
          ProjectionExpression: projection.expression,
          ExpressionAttributeNames: { ...namesIn(expression), ...projection.names },
          ExpressionAttributeValues: { ':kind': str(ItemKind.Message), ...values },
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      ),
  );
};

/** `a.b` → `#a.#b`, with the names each placeholder stands for. */
const projectionOf = (attributes: readonly string[]): { expression: string; names: Record<string, string> } => {
  const names: Record<string, string> = {};
  const paths = attributes.map((path) =>
    path
      .split('.')
      .map((name) => {
        names[`#${name}`] = name;
        return `#${name}`;
      })
      .join('.'),
  );
  return { expression: [...new Set(paths)].join(', '), names };
};

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms));

const pkOf = (item: Item): string => item[TABLE.partitionKey]?.S ?? '';

/**
 * The records of index entries, by consistent `BatchGetItem`s of up to 100 keys, in the order of
 * `entries`, each once. An entry whose record is gone (deleted by TTL since the index was read) is left out.
 */
const getRecords = async (table: StoreTable, entries: readonly Item[]): Promise<MessageRecord[]> => {
  // Each record once: an index can list one twice (dynalite after a kill between its writes), and
  // BatchGetItem refuses a request naming a key twice.
  const unique = new Map(entries.map((entry) => [pkOf(entry), entry]));
  const keys = [...unique.values()].map((entry) => ({
    [TABLE.partitionKey]: entry[TABLE.partitionKey] as AttributeValue,
    [TABLE.sortKey]: entry[TABLE.sortKey] as AttributeValue,
  }));
  const batches: Item[][] = [];
  for (let start = 0; start < keys.length; start += BATCH_GET_SIZE)
    batches.push(keys.slice(start, start + BATCH_GET_SIZE));
  const found = new Map<string, Item>();
  await Promise.all(
    batches.map(async (batch) => {
      let pending = batch;
      for (let attempt = 1; pending.length > 0; attempt += 1) {
        if (attempt > BATCH_GET_ATTEMPTS) {
          throw new StoreError(
            `${pending.length} records still unprocessed after ${BATCH_GET_ATTEMPTS} BatchGetItem requests`,
          );
        }
        if (attempt > 1) await sleep(BATCH_GET_BACKOFF_MS * 2 ** (attempt - 2));
        const result = await table.client.send(
          new BatchGetItemCommand({ RequestItems: { [table.tableName]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const item of result.Responses?.[table.tableName] ?? []) found.set(pkOf(item), item);
        pending = result.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
      }
    }),
  );
  return keys.flatMap((key) => {
    const item = found.get(pkOf(key));
    return item === undefined ? [] : decodedOrReported(table, item);
  });
};

/**
 * The record of an item, or none when this version cannot read it (a value a newer version wrote,
 * seen after a rollback): reported to the store's `onUndecodable` and left as it is, so one such
 * record never stops a listing or the sweeper that reads it.
 */
const decodedOrReported = (table: StoreTable, item: Item): MessageRecord[] => {
  try {
    return [messageFromItem(item)];
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    table.onUndecodable({ id: item['id']?.S ?? pkOf(item), error });
    return [];
  }
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
  table: StoreTable,
  state: MessageState,
  options: ListOptions = {},
): Promise<Page<MessageRecord>> =>
  await queryIndex(table, { ...options, index: TABLE.indexes.byState, partition: state });

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
  table: StoreTable,
  route: string,
  options: ListOptions = {},
): Promise<Page<MessageRecord>> =>
  await queryIndex(table, { ...options, index: TABLE.indexes.byRoute, partition: route });

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
  table: StoreTable,
  { olderThan, limit, cursor }: StaleOptions,
): Promise<Page<MessageRecord>> =>
  // A claim sets updatedAt = claimedAt, and nothing else touches a SENDING record.
  await listByState(table, MessageState.Sending, {
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
 * Lists `PENDING` records that are due (no `nextAttemptAt`, or it has passed), due longest first:
 * retries, requeued records, records the circuit kept waiting, and inserts whose stream trigger
 * was lost. With indexes (AWS), one query of `byDue` whose key condition (`dueAt <= now`) leaves
 * the records not yet due out, so however many wait for a later retry, a due record is on the
 * first page; `updatedBefore` is a filter after the page, which can only leave out records changed
 * since then, that come last by due time. The first page also takes in, after those, the due records
 * the state index lists that carry no `dueAt` (written before `byDue` existed; dedupe by id), as the
 * listing did before, so an upgrade strands none. Without indexes (locally), a scan of the table.
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
  table: StoreTable,
  { now = table.clock(), updatedBefore, limit = DEFAULT_PAGE_SIZE, cursor }: DueOptions = {},
): Promise<Page<MessageRecord>> => {
  const byState = async (on: StoreTable = table): Promise<Page<MessageRecord>> =>
    await queryIndex(on, {
      index: TABLE.indexes.byState,
      partition: MessageState.Pending,
      ...(updatedBefore === undefined ? {} : { before: updatedBefore }),
      limit,
      ...(cursor === undefined ? {} : { cursor }),
      filter: 'attribute_not_exists(#nextAttemptAt) OR #nextAttemptAt <= :now',
      filterValues: { ':now': str(now.toISOString()) },
    });
  if (!table.readIndexes) return await byState();
  // A record this version cannot read is reported once, though both listings below may meet it.
  const reported = new Set<string>();
  const reporting = (record: UndecodableRecord): void => {
    if (reported.has(record.id)) return;
    reported.add(record.id);
    table.onUndecodable(record);
  };
  const once: StoreTable = { ...table, onUndecodable: reporting };
  let due: Page<MessageRecord>;
  try {
    due = await queryIndex(once, {
      index: TABLE.indexes.byDue,
      partition: MessageState.Pending,
      before: new Date(now.getTime() + 1),
      limit,
      ...(cursor === undefined ? {} : { cursor }),
      ...(updatedBefore === undefined
        ? {}
        : {
            filter: '#updatedAt < :updatedBefore',
            filterValues: { ':updatedBefore': str(updatedBefore.toISOString()) },
          }),
    });
  } catch (error) {
    // A local table made before the index (dynalite cannot add one): the listing it had.
    if (isMissingIndex(error, TABLE.indexes.byDue.name)) return await byState();
    throw error;
  }
  if (cursor !== undefined || due.items.length >= limit) return due;
  const listed = new Set(due.items.map((record) => record.id));
  const older = (await byState(once)).items.filter((record) => !listed.has(record.id));
  return { ...due, items: [...due.items, ...older].slice(0, limit) };
};

/** True for a query refused because the table has no index of that name. */
const isMissingIndex = (error: unknown, name: string): boolean =>
  error instanceof Error &&
  error.name === 'ValidationException' &&
  error.message.includes(`does not have the specified index: ${name}`);

/** Which records `listRecent` lists. */
export interface RecentOptions {
  /** Only records last changed at or after this. */
  readonly since?: Date;
  /** Only records last changed strictly before this (the next page: the last record's time). */
  readonly before?: Date;
  /** The newest this many; absent: all of them. */
  readonly limit?: number;
  /** Only records in this state (one partition of the index); absent: every state. */
  readonly state?: MessageState;
}

const STATES: readonly MessageState[] = Object.values(MessageState);

/**
 * Message records of every state by last change, newest first: what Activity and `logs` show
 * without a state or route. One query of `byState` per state for its newest entries (keys and
 * times only), merged; then only the newest `limit` records are read, once each, by consistent
 * `BatchGetItem`: a page of 100 reads 100 records, not 100 per state.
 *
 * The local store (`readIndexes: false`) lists from the index too, for candidates only: each record
 * is read from the table and placed by its own state and time (a scan of every record would take
 * about half a second with 10,000 records, a page of candidates a few milliseconds). After a kill,
 * dynalite's index can list a record under an earlier state (it is read and shown as it is) or
 * not at all until its next change (a record just inserted, which the sweeper, reading the table,
 * claims within a second of the restart).
 *
 * @example
 * ```typescript
 * const newest = await store.listRecent({ limit: 100 });
 * const older = await store.listRecent({ before: new Date(newest.at(-1)!.updatedAt), limit: 100 });
 * ```
 */
export const listRecent = async (
  table: StoreTable,
  { since, before, limit, state }: RecentOptions = {},
): Promise<MessageRecord[]> => {
  const wanted = limit ?? Number.POSITIVE_INFINITY;
  const bounds = timeBounds(since, before);
  if (bounds === undefined) return [];
  const { lower, upper } = bounds;
  const newestOf = async (partition: MessageState): Promise<Item[]> => {
    const found: Item[] = [];
    const listed = pages(
      async (cursor: string | undefined) =>
        await queryIndexEntries(table, {
          index: TABLE.indexes.byState,
          partition,
          lower,
          upper,
          limit: Math.min(wanted, MAX_PAGE_SIZE),
          newestFirst: true,
          filterValues: {},
          ...(cursor === undefined ? {} : { cursor }),
        }),
      nextCursor,
    );
    for await (const page of listed) {
      found.push(...page.entries);
      if (found.length >= wanted) break;
    }
    return found;
  };
  const entries = (await Promise.all((state === undefined ? STATES : [state]).map(newestOf))).flat();
  // Each record once, at its newest entry: an index can list one twice, or under an old state too (dynalite after a kill).
  const candidates: Item[] = [];
  const seen = new Set<string>();
  for (const entry of entries.sort(newestEntryFirst)) {
    if (seen.has(pkOf(entry))) continue;
    seen.add(pkOf(entry));
    candidates.push(entry);
  }
  const kept = (record: MessageRecord): boolean =>
    // A candidate the index listed under another state is read as it is now (see above).
    (state === undefined || record.state === state) &&
    (table.readIndexes ||
      ((lower === undefined || record.updatedAt >= lower) && (upper === undefined || record.updatedAt <= upper)));
  const records: MessageRecord[] = [];
  // The newest candidates' records until `wanted` are in hand: more only when some were left out.
  for (let next = 0; records.length < wanted && next < candidates.length; ) {
    const batch = candidates.slice(next, next + (wanted - records.length));
    next += batch.length;
    records.push(...(await getRecords(table, batch)).filter(kept));
  }
  return records
    .sort((a, b) => (a.updatedAt === b.updatedAt ? (a.id < b.id ? 1 : -1) : a.updatedAt < b.updatedAt ? 1 : -1))
    .slice(0, wanted);
};

/** Index entries by their time, newest first, then by key (as records are ordered by id). */
const newestEntryFirst = (a: Item, b: Item): number => {
  const at = (entry: Item): string => entry[TABLE.indexes.byState.sortKey]?.S ?? '';
  if (at(a) !== at(b)) return at(a) < at(b) ? 1 : -1;
  return pkOf(a) === pkOf(b) ? 0 : pkOf(a) < pkOf(b) ? 1 : -1;
};

/** A message record reduced to what counting and charting need. */
export interface RecordSummary {
  readonly id: string;
  readonly route: string;
  readonly state: MessageState;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly sentAt?: string;
  /** The SMS service's answer to the send, when it was accepted. */
  readonly deducted?: number;
  readonly remainingBalance?: number;
}

const SUMMARY_ATTRIBUTES = [
  'id',
  'route',
  'state',
  'createdAt',
  'updatedAt',
  'sentAt',
  'result.deducted',
  'result.remainingBalance',
] as const;

/** Which records `summarizeRecords` summarises. */
export interface SummaryOptions {
  /** Records last changed at or after this. */
  readonly since: Date;
  /**
   * Read the state index's entries on the local store too (`readIndexes: false`), instead of a scan
   * of every record: 4–5× faster with 10,000 records of the day, for counts that a kill of the
   * local runtime between a record's write and its index's can leave one off (an entry under the
   * record's earlier state) until the record changes again. For a view of counts (the console's
   * Routes), never for what decides a send. @default false
   */
  readonly fromIndex?: boolean;
}

/**
 * Every message record changed since `since`, reduced to route, state, times and the amounts of
 * the send: the counts by state and the balance points of the console, without reading whole
 * records (texts, recipients, history). One `byState` query per state, or one scan locally
 * (unless `fromIndex`).
 *
 * @example
 * ```typescript
 * const day = await store.summarizeRecords({ since: new Date(Date.now() - 86_400_000) });
 * const sent = day.filter((record) => record.state === 'SENT').length;
 * ```
 */
export const summarizeRecords = async (
  table: StoreTable,
  { since, fromIndex = false }: SummaryOptions,
): Promise<RecordSummary[]> =>
  await summarize(fromIndex && !table.readIndexes ? { ...table, readIndexes: true } : table, since, STATES);

/** Which records `summarizeRecent` summarises. */
export interface RecentSummaryOptions {
  /** The one state (one partition of the state index). */
  readonly state: MessageState;
  /** Only records last changed at or after this. */
  readonly since: Date;
  /** The newest this many (1–1000). */
  readonly limit: number;
}

/**
 * The newest `limit` records of one state changed since `since`, summarised (see
 * {@link summarizeRecords}) from the state index's own entries, newest first: one query of
 * `limit` entries and no record read, whatever the volume, on both runtimes. What the console's
 * balance chart draws from its newest sends. Locally (dynalite) an entry can be missing after a
 * kill between a record's write and its index's; for a final state such as `SENT` that is one
 * point fewer, never a wrong one.
 *
 * @example
 * ```typescript
 * const sends = await store.summarizeRecent({ state: 'SENT', since: new Date(Date.now() - 14 * 86_400_000), limit: 500 });
 * ```
 */
export const summarizeRecent = async (
  table: StoreTable,
  { state, since, limit }: RecentSummaryOptions,
): Promise<RecordSummary[]> => {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE)
    throw new StoreError(`page size must be 1–${MAX_PAGE_SIZE}, got ${limit}`);
  const projection = projectionOf(SUMMARY_ATTRIBUTES);
  const { Items: items = [] } = await queryIndexed(table, {
    TableName: table.tableName,
    IndexName: TABLE.indexes.byState.name,
    KeyConditionExpression: '#state = :state AND #updatedAt >= :lower',
    ProjectionExpression: projection.expression,
    ExpressionAttributeNames: { ...projection.names, '#state': 'state', '#updatedAt': 'updatedAt' },
    ExpressionAttributeValues: { ':state': str(state), ':lower': str(since.toISOString()) },
    Limit: limit,
    ScanIndexForward: false,
  });
  return summariesOf(table, items);
};

/**
 * The `SENT` records sent since `since`, summarised (see {@link summarizeRecords}): what the spend
 * views add up. A sent record's `updatedAt` is its `sentAt` (nothing changes a SENT record's state
 * again), so this is one query of the `SENT` partition of the state index, or one scan locally.
 *
 * @example
 * ```typescript
 * const today = await sentSince(table, new Date('2025-03-01T00:00:00Z'));
 * const credits = today.reduce((sum, record) => sum + (record.deducted ?? 0), 0);
 * ```
 */
export const sentSince = async (table: StoreTable, since: Date): Promise<RecordSummary[]> =>
  await summarize(table, since, [MessageState.Sent]);

const summarize = async (table: StoreTable, since: Date, states: readonly MessageState[]): Promise<RecordSummary[]> => {
  const lower = str(since.toISOString());
  const projection = projectionOf(SUMMARY_ATTRIBUTES);
  const oneState = states.length === 1 ? states[0] : undefined;
  const items = table.readIndexes
    ? (
        await Promise.all(
          states.map(
            async (state) =>
              await allPages(
                async (start) =>
                  await queryIndexed(table, {
                    TableName: table.tableName,
                    IndexName: TABLE.indexes.byState.name,
                    KeyConditionExpression: '#state = :state AND #updatedAt >= :lower',
                    ProjectionExpression: projection.expression,
                    ExpressionAttributeNames: { ...projection.names, '#state': 'state', '#updatedAt': 'updatedAt' },
                    ExpressionAttributeValues: { ':state': str(state), ':lower': lower },
                    ExclusiveStartKey: start,
                  }),
              ),
          ),
        )
      ).flat()
    : await scanMessages(table, {
        filters: ['#updatedAt >= :lower', ...(oneState === undefined ? [] : ['#state = :state'])],
        values: { ':lower': lower, ...(oneState === undefined ? {} : { ':state': str(oneState) }) },
        attributes: SUMMARY_ATTRIBUTES,
      });
  return summariesOf(table, items);
};

/** Summaries of items read with {@link SUMMARY_ATTRIBUTES}; a state this version does not know is reported and left out. */
const summariesOf = (table: StoreTable, items: readonly Item[]): RecordSummary[] =>
  items.flatMap((item) => {
    const read = new ItemReader(item, item[TABLE.partitionKey]?.S ?? '(summary)');
    const state = read.str('state');
    // A state a newer version wrote (the local scan reads every state): no column of the counts.
    if (!(STATES as readonly string[]).includes(state)) {
      table.onUndecodable({
        id: item['id']?.S ?? pkOf(item),
        error: corruptRecord(pkOf(item), `unknown state ${state}`),
      });
      return [];
    }
    const sentAt = read.optStr('sentAt');
    const result = item['result']?.M;
    const amount = (name: string): number | undefined =>
      result?.[name]?.N === undefined ? undefined : Number(result[name]!.N);
    const deducted = amount('deducted');
    const remainingBalance = amount('remainingBalance');
    return [
      {
        id: read.str('id'),
        route: read.str('route'),
        state: state as MessageState,
        createdAt: read.str('createdAt'),
        updatedAt: read.str('updatedAt'),
        ...(sentAt === undefined ? {} : { sentAt }),
        ...(deducted === undefined ? {} : { deducted }),
        ...(remainingBalance === undefined ? {} : { remainingBalance }),
      },
    ];
  });

/**
 * When each route's newest record was created (routes without records are left out): the console's
 * "last webhook" of a quiet route. One `byRoute` query per route, also locally: its keys (route,
 * creation time) never change, so the index can only miss a record inserted just before a kill.
 *
 * @example
 * ```typescript
 * (await store.newestByRoute(['alerts', 'orders'])).get('alerts'); // '2025-01-31T08:00:00.000Z'
 * ```
 */
export const newestByRoute = async (table: StoreTable, routes: readonly string[]): Promise<Map<string, string>> => {
  const newest = new Map<string, string>();
  await Promise.all(
    routes.map(async (route) => {
      const page = await queryIndex(table, {
        index: TABLE.indexes.byRoute,
        partition: route,
        limit: 1,
        newestFirst: true,
        candidatesFromIndex: true,
      });
      const [record] = page.items;
      if (record !== undefined) newest.set(route, record.createdAt);
    }),
  );
  return newest;
};

/**
 * Reading and listing messages: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const queryOperations = (table: StoreTable) => ({
  /** One record, strongly consistent. */
  getMessage: async (id: string): Promise<MessageRecord | undefined> => await getMessage(table, id),
  /** Records in one state by `updatedAt`, paged. */
  listByState: async (state: MessageState, options?: ListOptions): Promise<Page<MessageRecord>> =>
    await listByState(table, state, options),
  /** A route's records by `createdAt`, paged: keys from the `byRoute` index, then the records by consistent `BatchGetItem`. */
  listByRoute: async (route: string, options?: ListOptions): Promise<Page<MessageRecord>> =>
    await listByRoute(table, route, options),
  /** Records of every state by last change, newest first. See {@link listRecent}. */
  listRecent: async (options?: RecentOptions): Promise<MessageRecord[]> => await listRecent(table, options),
  /** Every record changed since a time, reduced to route, state, times and amounts. See {@link summarizeRecords}. */
  summarizeRecords: async (options: SummaryOptions): Promise<RecordSummary[]> => await summarizeRecords(table, options),
  /** The newest records of one state, summarised from the state index alone. See {@link summarizeRecent}. */
  summarizeRecent: async (options: RecentSummaryOptions): Promise<RecordSummary[]> =>
    await summarizeRecent(table, options),
  /** When each route's newest record was created. See {@link newestByRoute}. */
  newestByRoute: async (routes: readonly string[]): Promise<Map<string, string>> => await newestByRoute(table, routes),
  /** `SENDING` records claimed before `olderThan`. */
  findStaleSending: async (options: StaleOptions): Promise<Page<MessageRecord>> =>
    await findStaleSending(table, options),
  /** `PENDING` records that are due. */
  findDuePending: async (options?: DueOptions): Promise<Page<MessageRecord>> => await findDuePending(table, options),
});
