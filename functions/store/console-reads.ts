/**
 * The reads behind the console's Activity (and `logs` without a state or route) and its routes'
 * "last webhook": candidates from the indexes' own entries, then only the records shown.
 */
import type { Item } from './attributes';
import { nextCursor, pages } from './cursor';
import { getRecords, MAX_PAGE_SIZE, pkOf, queryIndex, queryIndexEntries, STATES, timeBounds } from './record-reads';
import type { StoreTable } from './store-table';
import { type MessageState, TABLE } from './table';
import type { MessageRecord } from './types';

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
