/** The paged listings of message records: by state, by route, and what the sweeper lists (stale claims, due records). */
import { str } from './attributes';
import { DEFAULT_PAGE_SIZE, isMissingIndex, type ListOptions, queryIndex } from './record-reads';
import type { StoreTable, UndecodableRecord } from './store-table';
import { MessageState, TABLE } from './table';
import type { MessageRecord, Page } from './types';

/** The paging of {@link listByState}, and where it reads on a store that otherwise scans. */
export interface StateListOptions extends ListOptions {
  /**
   * Read the state index even where the store scans its table (`readIndexes: false`, locally): a
   * few index entries instead of the whole table, for what only shows. The records are read from
   * the table and are current, but a kill can leave an entry naming a record now in another state:
   * the caller keeps those in `state` (a write that acts on them checks the state itself).
   * @default false
   */
  readonly candidatesFromIndex?: boolean;
}

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
  options: StateListOptions = {},
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
