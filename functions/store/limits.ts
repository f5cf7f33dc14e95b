import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { ItemReader, num, str } from './attributes';
import type { StoreTable } from './store-table';
import { writeIf } from './write';
import { StoreError } from './errors';
import { buildUpdate, type UpdateSpec } from './expressions';
import { queryAll } from './range';
import {
  DAY_SECONDS,
  ItemKind,
  daySk,
  epochSeconds,
  limitKey,
  limitPk,
  monthSk,
  MONTHLY_RETENTION_SECONDS,
  utcDay,
  windowSk,
} from './keys';
import { TABLE } from './table';
import { type HeldWindow, LimitKind } from './types';

/** Limit and spend items outlive their window by this much (see {@link MONTHLY_RETENTION_SECONDS}). */
export const LIMIT_RETENTION_SECONDS = MONTHLY_RETENTION_SECONDS;

/** A cap on messages per fixed window. */
export interface MessagesLimit {
  /** Messages allowed per window; 0 holds everything. */
  readonly max: number;
  /** Windows are aligned to the epoch: `[k × windowSeconds, (k + 1) × windowSeconds)`. */
  readonly windowSeconds: number;
}

/** A cap on estimated credits per UTC day. */
export interface CreditsLimit {
  /** Credits allowed per UTC day. */
  readonly maxPerDay: number;
  /** What this message will cost (segments × recipients, at the service's rate). */
  readonly estimate: number;
}

/** A cap on estimated credits per calendar month in the route's time zone. */
export interface MonthCreditsLimit {
  /** Credits allowed per month. */
  readonly maxPerMonth: number;
  /** What this message will cost (as for {@link CreditsLimit}). */
  readonly estimate: number;
  /** The month's bounds: `monthBounds(now, route.timeZone)` (core/local-time). */
  readonly month: { readonly month: string; readonly startsAt: number; readonly endsAt: number };
}

/** What `reserveLimit` checks: any of the limits, or none (then it always allows). */
export interface ReserveInput {
  readonly route: string;
  readonly now?: Date;
  readonly messages?: MessagesLimit;
  readonly credits?: CreditsLimit;
  readonly monthCredits?: MonthCreditsLimit;
}

/** Where a route stands in its month after a reservation the month limit allowed. */
export interface MonthUse {
  /** The month item's sort key; pass it to `markBudgetWarned`. */
  readonly window: string;
  /** `YYYY-MM`. */
  readonly month: string;
  /** Credits reserved this month, this reservation included. */
  readonly reserved: number;
  readonly max: number;
  /** Whether the 80 % warning of this month was already recorded. */
  readonly warned: boolean;
}

/**
 * What an allowed reservation took, window by window: pass it to `releaseLimit` when the send
 * certainly did not go out.
 */
export interface LimitsTaken {
  readonly route: string;
  /** The messages window's sort key, when one message was counted in it. */
  readonly messages?: string;
  /** The UTC day's sort key and the credits reserved in it. */
  readonly day?: { readonly window: string; readonly credits: number };
  /** The month's sort key and the credits reserved in it. */
  readonly month?: { readonly window: string; readonly credits: number };
}

/** Whether the message may be sent now, and if not which window held it. */
export type Reservation =
  | { readonly allowed: true; readonly month?: MonthUse; readonly taken: LimitsTaken }
  | {
      readonly allowed: false;
      readonly reason: LimitKind;
      /** The window that held it; it appears in `heldSummaryDue` once finished. */
      readonly window: string;
    };

/** A limit window: its item's sort key and its bounds in epoch seconds. */
export interface Window {
  readonly sk: string;
  readonly limit: LimitKind;
  readonly startsAt: number;
  readonly endsAt: number;
}

export const messagesWindow = (now: Date, windowSeconds: number): Window => {
  const startsAt = Math.floor(epochSeconds(now) / windowSeconds) * windowSeconds;
  return { sk: windowSk(startsAt), limit: LimitKind.Messages, startsAt, endsAt: startsAt + windowSeconds };
};

/** A calendar month's window (bounds in epoch milliseconds, as `monthBounds` gives them). */
export const monthWindow = ({ month, startsAt, endsAt }: MonthCreditsLimit['month']): Window => ({
  sk: monthSk(month),
  limit: LimitKind.MonthCredits,
  startsAt: Math.floor(startsAt / 1000),
  endsAt: Math.floor(endsAt / 1000),
});

export const dayWindow = (now: Date): Window => {
  const day = utcDay(now);
  const startsAt = Date.parse(`${day}T00:00:00.000Z`) / 1000;
  return { sk: daySk(day), limit: LimitKind.Credits, startsAt, endsAt: startsAt + DAY_SECONDS };
};

const windowFields = (window: Window): Record<string, AttributeValue> => ({
  kind: str(ItemKind.Limit),
  limit: str(window.limit),
  windowStartsAt: num(window.startsAt),
  windowEndsAt: num(window.endsAt),
  [TABLE.timeToLive]: num(window.endsAt + LIMIT_RETENTION_SECONDS),
});

/** Applies an update to a limit item; `false` when its condition refused it. */
const updateLimit = async (table: StoreTable, route: string, sk: string, spec: UpdateSpec): Promise<boolean> =>
  (await writeIf(table, { Key: limitKey(route, sk), ...buildUpdate(spec) })).applied;

/** Applies a conditional update to a limit item and returns the item after it, or `undefined` when its condition refused it. */
const updateLimitReturning = async (
  table: StoreTable,
  route: string,
  sk: string,
  spec: UpdateSpec,
): Promise<Record<string, AttributeValue> | undefined> => {
  const outcome = await writeIf(table, { Key: limitKey(route, sk), ...buildUpdate(spec), ReturnValues: 'ALL_NEW' });
  return outcome.applied ? outcome.item : undefined;
};

/**
 * Takes `estimate` credits from a credits window (a day or a month) when what was reserved and what
 * was spent in it both leave room for it. A condition cannot add, so "credits + estimate <= max"
 * becomes "credits <= max - estimate".
 */
const takeCredits = async (
  table: StoreTable,
  route: string,
  window: Window,
  max: number,
  estimate: number,
): Promise<Record<string, AttributeValue> | undefined> => {
  const room = max - estimate;
  if (room < 0) return undefined;
  return await updateLimitReturning(table, route, window.sk, {
    set: windowFields(window),
    add: { credits: num(estimate) },
    condition:
      '(attribute_not_exists(#credits) OR #credits <= :room) AND (attribute_not_exists(#spent) OR #spent <= :room)',
    values: { ':room': num(room) },
  });
};

const hold = async (table: StoreTable, route: string, window: Window): Promise<Reservation> => {
  await updateLimit(table, route, window.sk, { set: windowFields(window), add: { held: num(1) } });
  return { allowed: false, reason: window.limit, window: window.sk };
};

/**
 * Reserves one message against a route's limits: at most `messages.max` per window and at most
 * `credits.maxPerDay` credits per UTC day, counting both the estimates reserved and the credits
 * actually spent (`recordCreditsSpent`) that day, and at most `monthCredits.maxPerMonth` credits per
 * calendar month in the route's time zone, counted the same way. Each counter is one conditional `ADD`, so
 * concurrent senders never admit more than the limit. A refusal adds 1 to the refusing window's
 * `held` count for the summary SMS.
 *
 * What an allowed reservation took (`taken`) is given back by `releaseLimit` when its send
 * certainly did not go out (a 402, a refused or unreachable service, each retry of one); a send
 * that may have gone out, or whose sender died, keeps it. When the credit limit refuses after the
 * message count was taken, the count is given back by a second write. A concurrent reservation may
 * see a count before it is given back and be held too: both err on the side of sending less.
 *
 * @example
 * ```typescript
 * const reservation = await store.reserveLimit({
 *   route: 'alerts',
 *   messages: { max: 20, windowSeconds: 3600 },
 *   credits: { maxPerDay: 500, estimate: record.segments * record.to.length },
 * });
 * if (!reservation.allowed) await store.settle(record.id, token, { state: 'HELD', reason: `${reservation.reason} limit` });
 * ```
 */
export const reserveLimit = async (
  table: StoreTable,
  { route, now = table.clock(), messages, credits, monthCredits }: ReserveInput,
): Promise<Reservation> => {
  validateLimits(messages, credits);
  if (
    monthCredits !== undefined &&
    (!Number.isFinite(monthCredits.maxPerMonth) ||
      monthCredits.maxPerMonth < 0 ||
      !Number.isFinite(monthCredits.estimate) ||
      monthCredits.estimate < 0)
  ) {
    throw new StoreError(
      `monthCredits needs maxPerMonth and estimate ≥ 0, got ${monthCredits.maxPerMonth} and ${monthCredits.estimate}`,
    );
  }
  let counted: Window | undefined;
  if (messages !== undefined) {
    const window = messagesWindow(now, messages.windowSeconds);
    const taken =
      messages.max >= 1 &&
      (await updateLimit(table, route, window.sk, {
        set: windowFields(window),
        add: { count: num(1) },
        condition: 'attribute_not_exists(#count) OR #count < :max',
        values: { ':max': num(messages.max) },
      }));
    if (!taken) return await hold(table, route, window);
    counted = window;
  }
  let took: LimitsTaken = { route, ...(counted === undefined ? {} : { messages: counted.sk }) };
  if (credits !== undefined) {
    const window = dayWindow(now);
    // Both what was reserved and what the service actually deducted must leave room: an estimate
    // below the real price is caught by the spend it is recorded beside.
    const taken = await takeCredits(table, route, window, credits.maxPerDay, credits.estimate);
    if (taken === undefined) {
      if (counted !== undefined) await updateLimit(table, route, counted.sk, { add: { count: num(-1) } });
      return await hold(table, route, window);
    }
    took = { ...took, day: { window: window.sk, credits: credits.estimate } };
  }
  if (monthCredits !== undefined) {
    const window = monthWindow(monthCredits.month);
    const taken = await takeCredits(table, route, window, monthCredits.maxPerMonth, monthCredits.estimate);
    if (taken === undefined) {
      // Given back like the message count: what the day took was not spent.
      if (counted !== undefined) await updateLimit(table, route, counted.sk, { add: { count: num(-1) } });
      if (credits !== undefined)
        await updateLimit(table, route, dayWindow(now).sk, { add: { credits: num(-credits.estimate) } });
      return await hold(table, route, window);
    }
    const read = new ItemReader(taken, limitPk(route));
    return {
      allowed: true,
      month: {
        window: window.sk,
        month: monthCredits.month.month,
        reserved: read.optNum('credits') ?? 0,
        max: monthCredits.maxPerMonth,
        warned: read.optStr('warnedAt') !== undefined,
      },
      taken: { ...took, month: { window: window.sk, credits: monthCredits.estimate } },
    };
  }
  return { allowed: true, taken: took };
};

/**
 * Gives back what an allowed reservation took (see {@link reserveLimit}), each window by one `ADD`,
 * in the window it was taken in (a window that has ended since gets it back too, which changes
 * nothing). Call it once per reservation, for a send that certainly did not go out. A window whose
 * item is gone (TTL) is left alone.
 *
 * @example
 * ```typescript
 * const reservation = await store.reserveLimit({ route, monthCredits });
 * // …the service answered 402: nothing went out
 * if (reservation.allowed) await store.releaseLimit(reservation.taken);
 * ```
 */
export const releaseLimit = async (table: StoreTable, { route, messages, day, month }: LimitsTaken): Promise<void> => {
  const exists = `attribute_exists(#${TABLE.partitionKey})`;
  await Promise.all([
    messages === undefined
      ? undefined
      : updateLimit(table, route, messages, { add: { count: num(-1) }, condition: exists }),
    ...[day, month].map((credits) =>
      credits === undefined || credits.credits === 0
        ? undefined
        : updateLimit(table, route, credits.window, { add: { credits: num(-credits.credits) }, condition: exists }),
    ),
  ]);
};

const validateLimits = (messages: MessagesLimit | undefined, credits: CreditsLimit | undefined): void => {
  if (messages !== undefined) {
    if (!Number.isInteger(messages.max) || messages.max < 0) {
      throw new StoreError(`messages.max must be a whole number ≥ 0, got ${messages.max}`);
    }
    if (!Number.isInteger(messages.windowSeconds) || messages.windowSeconds < 1) {
      throw new StoreError(`messages.windowSeconds must be a whole number ≥ 1, got ${messages.windowSeconds}`);
    }
  }
  if (credits !== undefined) {
    if (!Number.isFinite(credits.maxPerDay) || credits.maxPerDay < 0) {
      throw new StoreError(`credits.maxPerDay must be ≥ 0, got ${credits.maxPerDay}`);
    }
    if (!Number.isFinite(credits.estimate) || credits.estimate < 0) {
      throw new StoreError(`credits.estimate must be ≥ 0, got ${credits.estimate}`);
    }
  }
};

/** What `recordCreditsSpent` adds. */
export interface SpendInput {
  readonly route: string;
  /** Credits the SMS service reported as deducted. */
  readonly deducted: number;
  readonly now?: Date;
  /** Whether to add it to the route's UTC day (a `creditsPerDay` route). @default true */
  readonly day?: boolean;
  /** The month to add it to too (a `creditsPerMonth` route): `monthBounds(now, route.timeZone)`. */
  readonly month?: MonthCreditsLimit['month'];
}

/**
 * Records credits actually spent on the route's day item (`spent`, beside the reserved `credits`),
 * which `reserveLimit` holds a `credits.maxPerDay` route to: the sender writes it for such routes
 * only. What every route together spent per day is kept apart (`recordSpend`, for the forecast);
 * a route's own spend per day is added up from its sent records (`spendByDay`).
 *
 * @example
 * ```typescript
 * if (route.limits?.creditsPerDay !== undefined) await store.recordCreditsSpent({ route: record.route, deducted: result.deducted });
 * ```
 */
export const recordCreditsSpent = async (
  table: StoreTable,
  { route, deducted, now = table.clock(), day = true, month }: SpendInput,
): Promise<void> => {
  if (!Number.isFinite(deducted) || deducted < 0) {
    throw new StoreError(`deducted must be ≥ 0, got ${deducted}`);
  }
  const windows = [...(day ? [dayWindow(now)] : []), ...(month === undefined ? [] : [monthWindow(month)])];
  await Promise.all(
    windows.map((window) =>
      updateLimit(table, route, window.sk, { set: windowFields(window), add: { spent: num(deducted) } }),
    ),
  );
};

/** Which month `markBudgetWarned` marks. */
export interface BudgetWarnedInput {
  readonly route: string;
  /** `MonthUse.window`. */
  readonly window: string;
  readonly now?: Date;
}

/**
 * Marks a route's month as warned about (its 80 % SMS recorded). Conditional on no earlier mark, so
 * of concurrent senders exactly one gets `true`. The warning itself is recorded first as a notice
 * keyed by route and month (which records it once whoever calls), then marked: a sender that stops
 * between the two leaves the mark to the next send, and the notice is not recorded twice.
 */
export const markBudgetWarned = async (
  table: StoreTable,
  { route, window, now = table.clock() }: BudgetWarnedInput,
): Promise<boolean> =>
  await updateLimit(table, route, window, {
    set: { warnedAt: str(now.toISOString()) },
    condition: `attribute_exists(#${TABLE.partitionKey}) AND attribute_not_exists(#warnedAt)`,
  });

/** Which route's windows `heldSummaryDue` looks at. */
export interface HeldSummaryOptions {
  readonly route: string;
  readonly now?: Date;
  /** How far back to look for unsummarised windows; the sweeper runs every minute, so 2 days is ample. */
  readonly lookbackDays?: number;
}

/**
 * Finished windows of a route that held messages back and have no summary SMS yet. Send one
 * summary per window, then {@link markSummarySent}: only the sweeper that wins that mark sends.
 *
 * @example
 * ```typescript
 * for (const window of await store.heldSummaryDue({ route: 'alerts' })) {
 *   if (await store.markSummarySent({ route: 'alerts', window: window.window })) {
 *     await sendSummary(`${window.held} alerts held back by the ${window.limit} limit`);
 *   }
 * }
 * ```
 */
export const heldSummaryDue = async (
  table: StoreTable,
  { route, now = table.clock(), lookbackDays = 2 }: HeldSummaryOptions,
): Promise<readonly HeldWindow[]> => {
  const nowSeconds = epochSeconds(now);
  const from = new Date(now.getTime() - lookbackDays * DAY_SECONDS * 1000);
  const filter = {
    expression: '#held > :zero AND attribute_not_exists(#summarySentAt) AND #windowEndsAt <= :now',
    names: { '#held': 'held', '#summarySentAt': 'summarySentAt', '#windowEndsAt': 'windowEndsAt' },
    values: { ':zero': num(0), ':now': num(nowSeconds) },
  };
  const [windows, days] = await Promise.all([
    queryAll(table, limitPk(route), windowSk(epochSeconds(from)), windowSk(nowSeconds), filter),
    queryAll(table, limitPk(route), daySk(utcDay(from)), daySk(utcDay(now)), filter),
  ]);
  return [...windows, ...days].map((item) => {
    const read = new ItemReader(item, limitPk(route));
    const limit = read.str('limit') === LimitKind.Credits ? LimitKind.Credits : LimitKind.Messages;
    return {
      route,
      window: read.str(TABLE.sortKey),
      limit,
      startsAt: new Date(read.num('windowStartsAt') * 1000).toISOString(),
      endsAt: new Date(read.num('windowEndsAt') * 1000).toISOString(),
      held: read.num('held'),
    };
  });
};

/** Which window `markSummarySent` marks. */
export interface SummarySentInput {
  readonly route: string;
  /** `HeldWindow.window`. */
  readonly window: string;
  readonly now?: Date;
}

/**
 * Marks a window's summary as sent. Conditional on no earlier mark and on the window being
 * finished, so of concurrent sweepers exactly one gets `true` and sends the summary SMS.
 *
 * @example
 * ```typescript
 * if (await store.markSummarySent({ route, window: held.window })) await sendSummary(held);
 * ```
 */
export const markSummarySent = async (
  table: StoreTable,
  { route, window, now = table.clock() }: SummarySentInput,
): Promise<boolean> =>
  await updateLimit(table, route, window, {
    set: { summarySentAt: str(now.toISOString()) },
    condition:
      `attribute_exists(#${TABLE.partitionKey}) AND attribute_not_exists(#summarySentAt)` +
      ' AND #held > :zero AND #windowEndsAt <= :now',
    values: { ':zero': num(0), ':now': num(epochSeconds(now)) },
  });

/**
 * Routes' limits, held summaries and budget warnings: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const limitOperations = (table: StoreTable) => ({
  /** Takes one message from the route's window and day limits, or says which limit held it. */
  reserveLimit: async (input: ReserveInput): Promise<Reservation> => await reserveLimit(table, input),
  /** Gives back what an allowed reservation took, for a send that certainly did not go out. See {@link releaseLimit}. */
  releaseLimit: async (taken: LimitsTaken): Promise<void> => await releaseLimit(table, taken),
  /** Adds credits actually deducted to the route's day and to the global day total. */
  recordCreditsSpent: async (input: SpendInput): Promise<void> => await recordCreditsSpent(table, input),
  /** Finished windows with held messages and no summary yet. */
  heldSummaryDue: async (options: HeldSummaryOptions): Promise<readonly HeldWindow[]> =>
    await heldSummaryDue(table, options),
  /** `true` for exactly one caller per window: that one sends the summary SMS. */
  markSummarySent: async (input: SummarySentInput): Promise<boolean> => await markSummarySent(table, input),
  /** `true` for exactly one caller per route and month: its 80 % warning is marked recorded. See {@link markBudgetWarned}. */
  markBudgetWarned: async (input: BudgetWarnedInput): Promise<boolean> => await markBudgetWarned(table, input),
});
