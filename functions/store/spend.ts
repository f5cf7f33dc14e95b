import { BatchGetItemCommand, type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { type Item, ItemReader, num, str } from './attributes';
import { coalesceInWindows, type WindowedWrites } from '../core/coalesce';
import { SPEND_WINDOW_MS } from '../core/defaults';
import { StoreError } from './errors';
import { buildUpdate } from './expressions';
import {
  DAY_SECONDS,
  epochSeconds,
  ItemKind,
  MONTHLY_RETENTION_SECONDS,
  SPEND_PK,
  spendDayKey,
  spendSinceKey,
  utcDay,
} from './keys';
import type { StoreTable } from './store-table';
import { TABLE } from './table';

/*
 * Spend per UTC day, all routes together: one counter item a day, added to by the sends that went
 * out (`recordSpend`, a process's sends of one window in one write), so the days-left forecast
 * reads `days` + 1 items whatever the volume (`recentSpend`), where adding up the sent records
 * read every one of them. The `SINCE` item holds
 * when the first counted send was: a table that had sends before the counters existed (an upgrade)
 * is forecast from then on, not from spend it never counted.
 */

/** What `recordSpend` adds. */
export interface SpendRecord {
  /** Credits the SMS service reported as deducted for one send. */
  readonly deducted: number;
  /** The send's route (the relay's notices have their own): counted apart as well, for the console's spend per route. */
  readonly route?: string;
  readonly now?: Date;
}

/** One UTC day's counter. */
export interface DaySpendByRoute {
  /** `YYYY-MM-DD`, UTC. */
  readonly day: string;
  /** Credits every route spent that day. */
  readonly credits: number;
  /** Credits per route, of the sends counted with their route (a send counted by an older version has none). */
  readonly routes: Readonly<Record<string, number>>;
}

/** What `recentSpend` read. */
export interface RecentSpend {
  /** Credits spent over the days asked for, today included. */
  readonly spent: number;
  /** When the first counted send was; absent before any. */
  readonly countedSince?: string;
  /** The days asked for, oldest first, each with its spend (0 for a day without sends). */
  readonly days: readonly DaySpendByRoute[];
}

/** The day item's attribute that counts a route's credits: `credits:<route>` (route ids are `[a-z0-9_-]`). */
const ROUTE_CREDITS_PREFIX = 'credits:';

/** UTC days `recentSpend` may look back on: as long as the day items are kept. */
export const MAX_SPEND_DAYS = MONTHLY_RETENTION_SECONDS / DAY_SECONDS;

/** Tables whose `SINCE` item this process has seen written: it is written once, by the first send. */
const sinceKnown = new WeakSet<StoreTable>();

/**
 * Makes sure the `SINCE` item exists, holding the first time it was asked for: by the first send a
 * process counts and by the balance watch, so that after an upgrade the forecast counts from the
 * first watch run or send of this version. Written once per process; later calls write nothing.
 *
 * @example
 * ```typescript
 * await store.startSpendCount();
 * ```
 */
export const startSpendCount = async (table: StoreTable, now: Date = table.clock()): Promise<void> => {
  // A send this process counted and has not written yet came first: its window marks its own time.
  await flushSpend(table).catch(() => undefined);
  await markSince(table, now.toISOString());
};

const markSince = async (table: StoreTable, at: string): Promise<void> => {
  if (sinceKnown.has(table)) return;
  await table.client.send(
    new UpdateItemCommand({
      TableName: table.tableName,
      Key: spendSinceKey(),
      ...buildUpdate({ set: { kind: str(ItemKind.Spend) }, setIfAbsent: { countedSince: str(at) } }),
    }),
  );
  sinceKnown.add(table);
};

/**
 * Adds one send's `deducted` to its UTC day's counter (ADD, so concurrent senders all count), kept
 * {@link MONTHLY_RETENTION_SECONDS} past the day. The first call of a process also makes sure the
 * `SINCE` item exists. Bookkeeping beside a send that went out: a lost one only makes the forecast
 * a little optimistic, never an SMS go out again.
 *
 * Written per window, not per send: the sends a process counts within {@link SPEND_WINDOW_MS} of
 * the first are added together in one update per day, when the window ends (see
 * `coalesceInWindows`), so a trickle costs one write a second instead of one per SMS, and the
 * write meets the next webhook's accept and claim once a second, not after every SMS. Each call
 * resolves once its own credits are written, so a sender does not wait for it: whatever must see
 * the counter written calls {@link flushSpend} first (a Lambda invocation before it returns, the
 * local runtime when it stops; {@link recentSpend} does it for the reads of this process). A
 * crash loses at most one window of this process's spend from the counter.
 *
 * @example
 * ```typescript
 * void store.recordSpend({ deducted: result.deducted }).catch(logLost);
 * ```
 */
export const recordSpend = async (
  table: StoreTable,
  { deducted, route, now = table.clock() }: SpendRecord,
): Promise<void> => {
  if (!Number.isFinite(deducted) || deducted < 0) throw new StoreError(`deducted must be ≥ 0, got ${deducted}`);
  let add = spendWindows.get(table);
  if (add === undefined) {
    add = coalesceInWindows(
      async (spends: readonly DatedSpend[]) => await addSpends(table, spends),
      table.spendWindowMs,
    );
    spendWindows.set(table, add);
  }
  await add.add({ deducted, ...(route === undefined ? {} : { route }), now });
};

/**
 * Writes now the spend this process counted and has not written yet, of every store on this
 * table's name (a process may hold several: the local runtime's sweeps and console read through
 * stores of their own), and resolves when it is written; rejects with the first write that
 * failed (the sends it counted were told already, each by its own `recordSpend`).
 *
 * @example
 * ```typescript
 * await store.flushSpend(); // before a Lambda invocation returns
 * ```
 */
export const flushSpend = async (table: StoreTable): Promise<void> =>
  await flushWindows(([counted]) => counted.tableName === table.tableName);

/**
 * Writes now the spend the stores on these clients counted and has not written yet: before a
 * process closes a store it runs itself (an in-process dynalite), so that no window's write reaches
 * it closed.
 *
 * @example
 * ```typescript
 * await flushSpendThrough([client]); // then close the local dynalite
 * ```
 */
export const flushSpendThrough = async (clients: readonly DynamoDBClient[]): Promise<void> =>
  await flushWindows(([counted]) => clients.includes(counted.client));

const flushWindows = async (which: (entry: [StoreTable, WindowedWrites<DatedSpend>]) => boolean): Promise<void> => {
  const flushing = [...spendWindows].filter(which);
  const outcomes = await Promise.allSettled(flushing.map(async ([, windowed]) => await windowed.flush()));
  // A store written and idle is forgotten: its next send opens a window again.
  for (const [counted, windowed] of flushing) if (!windowed.unwritten()) spendWindows.delete(counted);
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
};

/** A send's spend with the time it is counted at. */
type DatedSpend = SpendRecord & { readonly now: Date };

/**
 * Each store's spend window (see {@link recordSpend}). A `Map`, not a `WeakMap`, so that
 * {@link flushSpend} finds every store of a table name; it holds a store only until a flush
 * finds it written.
 */
const spendWindows = new Map<StoreTable, WindowedWrites<DatedSpend>>();

/** Adds sends counted together: one update per UTC day they fall in (two only across midnight). */
const addSpends = async (table: StoreTable, spends: readonly DatedSpend[]): Promise<void> => {
  const byDay = new Map<string, DatedSpend[]>();
  for (const spend of spends) {
    const day = utcDay(spend.now);
    byDay.set(day, [...(byDay.get(day) ?? []), spend]);
  }
  await Promise.all([
    markSince(table, spends[0]!.now.toISOString()),
    ...[...byDay].map(async ([day, daySpends]) => await addToDay(table, day, daySpends)),
  ]);
};

/** Credits are decimal: sums are cut to micro-credits, as the projected balance's are. */
const microCredits = (credits: number): number => Math.round(credits * 1e6) / 1e6;

const addToDay = async (table: StoreTable, day: string, spends: readonly DatedSpend[]): Promise<void> => {
  const dayEnd = epochSeconds(new Date(`${day}T00:00:00.000Z`)) + DAY_SECONDS;
  const byRoute = new Map<string, number>();
  for (const { route, deducted } of spends)
    if (route !== undefined) byRoute.set(route, (byRoute.get(route) ?? 0) + deducted);
  const update = buildUpdate({
    set: {
      kind: str(ItemKind.Spend),
      day: str(day),
      [TABLE.timeToLive]: num(dayEnd + MONTHLY_RETENTION_SECONDS),
    },
    add: {
      credits: num(microCredits(spends.reduce((sum, { deducted }) => sum + deducted, 0))),
      sends: num(spends.length),
    },
  });
  // Each route's own counter in the same ADD (the last clause): a route id is no placeholder name.
  const routes = [...byRoute];
  await table.client.send(
    new UpdateItemCommand({
      TableName: table.tableName,
      Key: spendDayKey(day),
      ...update,
      UpdateExpression: [
        update.UpdateExpression,
        ...routes.map((_, index) => `#routeCredits${index} :routeCredits${index}`),
      ].join(', '),
      ExpressionAttributeNames: {
        ...update.ExpressionAttributeNames,
        ...Object.fromEntries(
          routes.map(([route], index) => [`#routeCredits${index}`, `${ROUTE_CREDITS_PREFIX}${route}`]),
        ),
      },
      ExpressionAttributeValues: {
        ...update.ExpressionAttributeValues,
        ...Object.fromEntries(
          routes.map(([, credits], index) => [`:routeCredits${index}`, num(microCredits(credits))]),
        ),
      },
    }),
  );
};

/** Keys per `BatchGetItem` is 100; a month's days and `SINCE` are far fewer. */
const BATCH_GET_ATTEMPTS = 5;

/**
 * What every route spent over the last `days` UTC days, today included, in all and day by day (per
 * route too), and since when spend is counted: one consistent `BatchGetItem` of `days` + 1 items,
 * whatever was sent. The spend this process counted and has not written yet is written first
 * ({@link flushSpend}); another process's open window (at most {@link SPEND_WINDOW_MS}) is not seen.
 *
 * @example
 * ```typescript
 * const { spent, countedSince } = await store.recentSpend(7);
 * ```
 */
export const recentSpend = async (table: StoreTable, days: number, now: Date = table.clock()): Promise<RecentSpend> => {
  if (!Number.isInteger(days) || days < 1 || days > MAX_SPEND_DAYS) {
    throw new StoreError(`days must be 1–${MAX_SPEND_DAYS}, got ${days}`);
  }
  // What this process counted and has not written yet is written first, so a read here sees every
  // send this process made. A failed write was told to its sends (they log it): the read goes on.
  await flushSpend(table).catch(() => undefined);
  const dayKeys = Array.from({ length: days }, (_, back) =>
    spendDayKey(utcDay(new Date(now.getTime() - back * DAY_SECONDS * 1000))),
  );
  const items: Item[] = [];
  let keys: Item[] = [spendSinceKey(), ...dayKeys];
  for (let attempt = 1; keys.length > 0; attempt += 1) {
    if (attempt > BATCH_GET_ATTEMPTS)
      throw new StoreError(
        `${keys.length} spend items still unprocessed after ${BATCH_GET_ATTEMPTS} BatchGetItem requests`,
      );
    const answer = await table.client.send(
      new BatchGetItemCommand({ RequestItems: { [table.tableName]: { Keys: keys, ConsistentRead: true } } }),
    );
    items.push(...(answer.Responses?.[table.tableName] ?? []));
    keys = answer.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
  }
  let spent = 0;
  let countedSince: string | undefined;
  const byDay = new Map<string, DaySpendByRoute>();
  for (const item of items) {
    const read = new ItemReader(item, SPEND_PK);
    if (read.str(TABLE.sortKey) === 'SINCE') {
      countedSince = read.optStr('countedSince');
      continue;
    }
    // TTL deletes some time after expiry; the days asked for are all well within it.
    const credits = read.optNum('credits') ?? 0;
    spent += credits;
    const routes: Record<string, number> = {};
    for (const [name, value] of Object.entries(item))
      if (name.startsWith(ROUTE_CREDITS_PREFIX) && value.N !== undefined)
        routes[name.slice(ROUTE_CREDITS_PREFIX.length)] = Number(value.N);
    const day = read.optStr('day');
    if (day !== undefined) byDay.set(day, { day, credits, routes });
  }
  spent = microCredits(spent);
  const oldestFirst = Array.from({ length: days }, (_, index) =>
    utcDay(new Date(now.getTime() - (days - 1 - index) * DAY_SECONDS * 1000)),
  ).map((day) => byDay.get(day) ?? { day, credits: 0, routes: {} });
  return { spent, ...(countedSince === undefined ? {} : { countedSince }), days: oldestFirst };
};

/**
 * Spend per day, for the forecast: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const spendOperations = (table: StoreTable) => ({
  /**
   * Credits spent by all routes over the last `days` (1–35) UTC days, today included, from the
   * day counters: `days` + 1 items whatever the volume. See {@link recentSpend}.
   */
  spendLastDays: async (days: number, now?: Date): Promise<number> => (await recentSpend(table, days, now)).spent,
  /** The same, with since when spend is counted: what the days-left forecast rests on. See {@link recentSpend}. */
  recentSpend: async (days: number, now?: Date): Promise<RecentSpend> => await recentSpend(table, days, now),
  /** Adds one sent message's `deducted` to its UTC day's spend counter, written per window. See {@link recordSpend}. */
  recordSpend: async (input: SpendRecord): Promise<void> => await recordSpend(table, input),
  /** Writes now the spend this process counted and has not written yet. See {@link flushSpend}. */
  flushSpend: async (): Promise<void> => await flushSpend(table),
  /** Marks when spend began to be counted, once per process. See {@link startSpendCount}. */
  startSpendCount: async (now?: Date): Promise<void> => await startSpendCount(table, now),
});
