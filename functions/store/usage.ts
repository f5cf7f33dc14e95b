import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ItemReader } from './attributes';
import type { StoreTable } from './store-table';
import { StoreError } from './errors';
import { DAY_SECONDS, limitKey, limitPk, utcDay } from './keys';
import {
  dayWindow,
  LIMIT_RETENTION_SECONDS,
  messagesWindow,
  type MonthCreditsLimit,
  monthWindow,
  type Window,
} from './limits';
import { type RecordSummary, sentSince } from './summaries';
import { MessageState } from './table';

/** Which route's limits `limitUsage` reads. */
export interface LimitUsageInput {
  readonly route: string;
  /** The route's messages window; omitted, the window is not read (the route has no messages limit). */
  readonly messagesWindowSeconds?: number;
  /** The route's calendar month (`monthBounds(now, route.timeZone)`); omitted, the month is not read (no `creditsPerMonth`). */
  readonly month?: MonthCreditsLimit['month'];
  readonly now?: Date;
  /**
   * Summaries of every record changed since the start of today (UTC) or earlier, when the caller
   * already holds them (`summarizeRecords`, as the console's Routes view does): today's spend is
   * added up from them instead of read again.
   */
  readonly changedToday?: readonly RecordSummary[];
}

/** Where a route stands against its limits now. Items not written yet read as zeros. */
export interface LimitUsage {
  /** The current messages window; present only when `messagesWindowSeconds` was given. */
  readonly messages?: {
    /** Messages reserved in the window (a reserved message that then failed still counts). */
    readonly used: number;
    /** Messages the messages limit held back in the window. */
    readonly held: number;
    readonly windowStartsAt: string;
    readonly windowEndsAt: string;
  };
  /** The current UTC day. */
  readonly day: {
    /** Credits reserved by the credits limit (estimates). */
    readonly reserved: number;
    /** Credits the SMS service actually deducted for the route's sends, limited or not. */
    readonly spent: number;
    /** Messages the credits limit held back. */
    readonly held: number;
    /** `YYYY-MM-DD`. */
    readonly day: string;
  };
  /** The current calendar month; present only when `month` was given. */
  readonly month?: {
    /** Credits reserved by the month limit (estimates). */
    readonly reserved: number;
    /** Credits the SMS service deducted for the route's sends this month. */
    readonly spent: number;
    readonly held: number;
    /** `YYYY-MM`. */
    readonly month: string;
    readonly endsAt: string;
  };
}

/** Which route and days `spendByDay` reads. */
export interface SpendByDayInput {
  readonly route: string;
  /** UTC days to return, today included: 1–35. */
  readonly days: number;
  readonly now?: Date;
}

/** Credits a route spent on one UTC day. */
export interface DaySpend {
  /** `YYYY-MM-DD`. */
  readonly day: string;
  readonly credits: number;
}

const readItem = async (table: StoreTable, route: string, sk: string): Promise<ItemReader> => {
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: limitKey(route, sk), ConsistentRead: true }),
  );
  return new ItemReader(item ?? {}, `${limitPk(route)}/${sk}`);
};

const isoOf = (epoch: number): string => new Date(epoch * 1000).toISOString();

const messagesUsage = async (table: StoreTable, route: string, window: Window): Promise<LimitUsage['messages']> => {
  const read = await readItem(table, route, window.sk);
  return {
    used: read.optNum('count') ?? 0,
    held: read.optNum('held') ?? 0,
    windowStartsAt: isoOf(window.startsAt),
    windowEndsAt: isoOf(window.endsAt),
  };
};

const dayUsage = async (
  table: StoreTable,
  route: string,
  now: Date,
  changedToday?: readonly RecordSummary[],
): Promise<LimitUsage['day']> => {
  const [read, spent] = await Promise.all([
    readItem(table, route, dayWindow(now).sk),
    changedToday === undefined
      ? spentPerDay(table, { days: 1, now, route })
      : addUpSpend(changedToday, { days: 1, now, route }),
  ]);
  return {
    reserved: read.optNum('credits') ?? 0,
    spent: spent.get(utcDay(now)) ?? 0,
    held: read.optNum('held') ?? 0,
    day: utcDay(now),
  };
};

/**
 * Where a route stands against its limits now: the current messages window (read only when its
 * length is given, since windows are keyed by it) and the current UTC day, whose `spent` counts
 * every sent message of the route whether or not it has a credits limit. Strongly consistent.
 *
 * @example
 * ```typescript
 * const usage = await store.limitUsage({ route: 'alerts', messagesWindowSeconds: 3600 });
 * console.log(`${usage.messages?.used} of 20 this hour; ${usage.day.spent} credits spent today`);
 * ```
 */
export const limitUsage = async (
  table: StoreTable,
  { route, messagesWindowSeconds, month, now = table.clock(), changedToday }: LimitUsageInput,
): Promise<LimitUsage> => {
  if (messagesWindowSeconds !== undefined && (!Number.isInteger(messagesWindowSeconds) || messagesWindowSeconds < 1)) {
    throw new StoreError(`messagesWindowSeconds must be a whole number ≥ 1, got ${messagesWindowSeconds}`);
  }
  const [messages, day, monthRead] = await Promise.all([
    messagesWindowSeconds === undefined
      ? undefined
      : messagesUsage(table, route, messagesWindow(now, messagesWindowSeconds)),
    dayUsage(table, route, now, changedToday),
    month === undefined ? undefined : readItem(table, route, monthWindow(month).sk),
  ]);
  const monthUse =
    month === undefined || monthRead === undefined
      ? undefined
      : {
          reserved: monthRead.optNum('credits') ?? 0,
          spent: monthRead.optNum('spent') ?? 0,
          held: monthRead.optNum('held') ?? 0,
          month: month.month,
          endsAt: new Date(month.endsAt).toISOString(),
        };
  return {
    ...(messages === undefined ? {} : { messages }),
    day,
    ...(monthUse === undefined ? {} : { month: monthUse }),
  };
};

const MAX_DAYS = LIMIT_RETENTION_SECONDS / DAY_SECONDS;

/** One entry per day of the `days` UTC days up to the day of `now`, oldest first, from `addUpSpend`'s totals. */
export const spendDays = (
  spent: ReadonlyMap<string, number>,
  { days, now }: { readonly days: number; readonly now: Date },
): DaySpend[] => daysUpTo(now, days).map((day) => ({ day, credits: spent.get(day) ?? 0 }));

/** The `days` UTC days up to the day of `now`, oldest first. */
const daysUpTo = (now: Date, days: number): string[] =>
  Array.from({ length: days }, (_, back) => utcDay(new Date(now.getTime() - (days - 1 - back) * DAY_SECONDS * 1000)));

/**
 * Credits the SMS service deducted per UTC day over the `days` days up to the day of `now`, from
 * the sent records (all routes, or `route`'s): one query of the state index's `SENT` entries, which
 * hold the route, `sentAt` and the service's answer. A send counts on the day of its `sentAt`.
 */
const spentPerDay = async (
  table: StoreTable,
  { days, now, route }: { readonly days: number; readonly now: Date; readonly route?: string },
): Promise<Map<string, number>> =>
  addUpSpend(await sentSince(table, new Date(`${daysUpTo(now, days)[0]}T00:00:00.000Z`)), {
    days,
    now,
    ...(route === undefined ? {} : { route }),
  });

/**
 * Adds up what sent records cost per UTC day (of their `sentAt`) over the `days` days up to the
 * day of `now`, for every route or one: what `spendByDay` reads, for a caller
 * that already holds the summaries (the console's Credit view).
 *
 * @example
 * ```typescript
 * const perDay = addUpSpend(await store.summarizeRecords({ since }), { days: 7, now, route: 'alerts' });
 * ```
 */
export const addUpSpend = (
  records: readonly RecordSummary[],
  { days, now, route }: { readonly days: number; readonly now: Date; readonly route?: string },
): Map<string, number> => {
  const first = daysUpTo(now, days)[0]!;
  const last = utcDay(now);
  const spent = new Map<string, number>();
  for (const record of records) {
    if (
      record.state !== MessageState.Sent ||
      record.deducted === undefined ||
      (route !== undefined && record.route !== route)
    )
      continue;
    const day = utcDay(new Date(record.sentAt ?? record.updatedAt));
    if (day < first || day > last) continue;
    spent.set(day, (spent.get(day) ?? 0) + record.deducted);
  }
  return spent;
};

/**
 * Credits a route spent per UTC day over the last `days` days, today included, oldest first: one
 * entry per day, 0 for a day without sends. Counts every sent message of the route, whether or not
 * it has a credits limit, from the sent records (so as far back as records are kept, `retentionDays`).
 *
 * @example
 * ```typescript
 * const week = await store.spendByDay({ route: 'alerts', days: 7 });
 * const total = week.reduce((sum, { credits }) => sum + credits, 0);
 * ```
 */
export const spendByDay = async (
  table: StoreTable,
  { route, days, now = table.clock() }: SpendByDayInput,
): Promise<DaySpend[]> => {
  if (!Number.isInteger(days) || days < 1 || days > MAX_DAYS) {
    throw new StoreError(`days must be 1–${MAX_DAYS}, got ${days}`);
  }
  return spendDays(await spentPerDay(table, { days, now, route }), { days, now });
};

/**
 * Routes' use of their limits: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const usageOperations = (table: StoreTable) => ({
  /**
   * A route's use of its limits now, for the console: messages in the current window (when its
   * length is given) and credits reserved, spent and held today. Unwritten counters read as 0.
   * See {@link limitUsage}.
   *
   * @example
   * ```typescript
   * const { messages, day } = await store.limitUsage({ route: 'alerts', messagesWindowSeconds: 3600 });
   * ```
   */
  limitUsage: async (input: LimitUsageInput): Promise<LimitUsage> => await limitUsage(table, input),
  /**
   * Credits a route spent per UTC day, the last `days` (1–35) days oldest first, 0 for a day
   * without sends. Every route's sends count, with a credits limit or not.
   */
  spendByDay: async (input: SpendByDayInput): Promise<DaySpend[]> => await spendByDay(table, input),
});
