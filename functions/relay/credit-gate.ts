import { describeSmsError, SendCertainty, type SendResult as ServiceSendResult } from '../core/provider';
import type { RelayConfigView, RouteView } from '../core/config/view';
import { RoutePriority } from '../core/config/policies';
import {
  LimitKind,
  type LimitsTaken,
  MessageState,
  type MessageStore,
  NoticeKind,
  type BalanceState,
  type MessageRecord,
} from '../store';
import { SWEEP_PENDING_GRACE_MS } from '../core/defaults';
import { monthBounds } from '../core/local-time';
import { reasonText } from '../core/reasons';
import { type BalanceWatchStore, observeBalance } from './balance';
import { type BudgetStore, warnMonthBudget } from './budget';
import { errorName } from './error-name';
import { mutedReason } from './mutes';
import type { RelayContext } from './ports';

/** What the credit gate uses of the store: the projected balance, the price, the route limits and mutes. */
export type CreditGateStore = Pick<
  MessageStore,
  | 'getBalanceState'
  | 'getMute'
  | 'reserveCredit'
  | 'settleCredit'
  | 'observeSentCredit'
  | 'recordPrice'
  | 'reserveLimit'
  | 'releaseLimit'
  | 'recordCreditsSpent'
  | 'recordSpend'
> &
  BalanceWatchStore &
  BudgetStore;

/**
 * The credit gate: what a send may spend, checked between the claim and the SMS service call
 * (`checkBeforeSend`), and settled after it (`settleGateAfterSend`, `settleGateAfterFailure`). It
 * keeps `balance.reserve` for critical routes through the projected balance in the store, holds
 * messages over a route's limits, parks those the balance cannot pay and drops stale low-balance
 * notices. The sender (`./sender`) owns the claim and the record's outcome.
 */

/** What the gate decided; each stop is also the sender's outcome of that name. */
export const GateOutcome = {
  /** Go ahead and send. */
  Send: 'send',
  Held: 'held',
  Parked: 'parked',
  /** A low-balance notice whose balance is back above the threshold, or a message on a muted route. */
  Dropped: 'dropped',
} as const;
export type GateOutcome = (typeof GateOutcome)[keyof typeof GateOutcome];

/** What to do with a claimed record before any send: go ahead, or hold, park or drop it, and why. */
export type Gate =
  | {
      readonly outcome: typeof GateOutcome.Send;
      /** The estimate taken from the projected balance (with `balance.reserve` set), settled after the send. */
      readonly credit?: Credit;
      /** What the route's limits took, given back when the send certainly did not go out. */
      readonly limits?: LimitsTaken;
    }
  | {
      readonly outcome: typeof GateOutcome.Held | typeof GateOutcome.Parked | typeof GateOutcome.Dropped;
      readonly reason: string;
      /** Dropped by a planned mute: counted as `Muted`, not as a fault (`Dropped`). */
      readonly muted?: true;
    };

/** An estimate taken from the projected balance by `reserveCredit`. */
interface Credit {
  /** The send's claim token, the reservation's name. */
  readonly token: string;
  readonly estimate: number;
  /** The store's `charged` when it was taken (see `observeSentCredit`). */
  readonly basis: number;
}

const GO: Gate = { outcome: GateOutcome.Send };

/**
 * The checks that keep credit safe, in order: a low-balance notice whose balance recovered is
 * stale; a `normal` route's message whose estimate the projected balance cannot pay while keeping
 * `balance.reserve` is parked; one over a route limit is held. Costs are estimated from the price
 * kept in the store, so every check holds from the first send of a fresh process.
 *
 * With a reserve, every send takes its estimate from the projected balance kept in the store by one
 * conditional write (see `reserveCredit`), so concurrent senders cannot together go below the
 * reserve: a normal route's messages only while the reserve stays; critical routes' messages, those of
 * an alert its source calls critical (`critical` on the record: Opsgenie's P1, P2) and
 * every notice (the low-balance SMS, and a route's held summary, budget warning and dead-man's
 * switch, whatever the route's priority) whatever is left, so that normal routes see what they
 * spend. A store that knows no price or projected balance yet reads the balance first, for every
 * send alike; a critical message is never held up by the balance: when that read fails it goes out
 * untracked.
 */
export async function checkBeforeSend(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  record: MessageRecord,
): Promise<Gate> {
  const reserve = context.config.settings.balance?.reserve ?? 0;
  if (record.notice === NoticeKind.LowBalance) {
    const gate = await checkNotice(context);
    return gate.outcome === GateOutcome.Send && reserve > 0
      ? await takeCredit(context, record, await context.store.getBalanceState())
      : gate;
  }
  const routeView = context.config.routes.get(record.route);
  const muted = await droppedIfMuted(context, record, routeView);
  if (muted !== undefined) return muted;
  // A notice is the relay's own word to the people who run it, never a route's traffic; an alert
  // its source calls critical (Opsgenie's P1, P2) is as a critical route's.
  const guardsReserve =
    reserve > 0 &&
    record.notice === undefined &&
    record.critical !== true &&
    routeView?.config.priority !== RoutePriority.Critical;
  const limits = record.notice === undefined ? routeView?.config.limits : undefined;
  const capsCredits = limits?.creditsPerDay !== undefined || limits?.creditsPerMonth !== undefined;
  if (reserve === 0 && limits?.messages === undefined && !capsCredits) return GO;

  let state = reserve > 0 || capsCredits ? await context.store.getBalanceState() : undefined;
  if (state !== undefined && (guardsReserve || capsCredits) && !knowsCredit(state, reserve > 0))
    state = await readBalanceOnce(context, state);
  const estimate = state === undefined ? 0 : estimateCredits(record, state.creditsPerUnit ?? 0);

  const go = guardsReserve
    ? await keepReserve(context, record, { estimate, reserve, state })
    : reserve > 0 && state !== undefined
      ? await takeCredit(context, record, state)
      : GO;
  if (go.outcome !== GateOutcome.Send || limits === undefined || (limits.messages === undefined && !capsCredits))
    return go;
  return await takeLimits(context, record, { route: routeView!, limits, estimate, credit: go.credit });
}

/**
 * A message that waited (a retry, a redrive, a backlog) may have been accepted before its route was
 * muted: it is dropped like a new one. A fresh one was checked at accept, a second earlier.
 */
async function droppedIfMuted(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  record: MessageRecord,
  route: RouteView | undefined,
): Promise<Gate | undefined> {
  const now = context.clock();
  if (
    record.notice !== undefined ||
    route === undefined ||
    !(now.getTime() - Date.parse(record.createdAt) > SWEEP_PENDING_GRACE_MS)
  )
    return undefined;
  const mute = await context.store.getMute({ route: record.route, now });
  return mute === undefined
    ? undefined
    : { outcome: GateOutcome.Dropped, reason: mutedReason(route, mute, now), muted: true };
}

/**
 * A normal route's message takes its estimate from the projected balance only while `reserve`
 * stays; else it is parked. One redriven since the last balance read sees a fresh balance first.
 */
async function keepReserve(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  record: MessageRecord,
  {
    estimate,
    reserve,
    state,
  }: { readonly estimate: number; readonly reserve: number; readonly state: BalanceState | undefined },
): Promise<Gate> {
  const token = record.claimToken!;
  let taken = await context.store.reserveCredit({ estimate, floor: reserve, token });
  if (!taken.reserved && state !== undefined && needsFreshBalance(record, state)) {
    // Redriven since the last balance read: a top-up made in the service's dashboard is seen
    // before this message is parked again.
    await freshBalance(context, lastRequeueAt(record)!);
    taken = await context.store.reserveCredit({ estimate, floor: reserve, token });
  }
  if (!taken.reserved) {
    const left = (taken.projected ?? 0) - estimate;
    // A balance that cannot pay the send at all is the balance's fault, not the reserve's.
    return {
      outcome: GateOutcome.Parked,
      reason:
        taken.projected !== undefined && left < 0
          ? reasonText('insufficientBalance')
          : reasonText(
              'balanceReserve',
              `${formatCredits(estimate)} credits would leave ${formatCredits(left)}, below the reserve of ${formatCredits(reserve)} kept for critical routes`,
            ),
    };
  }
  return { outcome: GateOutcome.Send, credit: { token, estimate, basis: taken.basis } };
}

interface LimitsInput {
  readonly route: RouteView;
  readonly limits: NonNullable<RouteView['config']['limits']>;
  readonly estimate: number;
  /** What the message took from the projected balance, given back when a limit holds it. */
  readonly credit: Credit | undefined;
}

/** Takes the message's share of its route's limits, or holds it when one is used up. */
async function takeLimits(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  record: MessageRecord,
  { route, limits, estimate, credit }: LimitsInput,
): Promise<Gate> {
  let reservation;
  // One reading of the clock: the month a reservation counts in is the one its time falls in.
  const reservedAt = context.clock();
  try {
    reservation = await context.store.reserveLimit({
      route: record.route,
      now: reservedAt,
      ...(limits.messages === undefined ? {} : { messages: { max: limits.messages, windowSeconds: limits.window } }),
      ...(limits.creditsPerDay === undefined ? {} : { credits: { maxPerDay: limits.creditsPerDay, estimate } }),
      ...(limits.creditsPerMonth === undefined
        ? {}
        : {
            monthCredits: {
              maxPerMonth: limits.creditsPerMonth,
              estimate,
              month: monthBounds(reservedAt, route.config.timeZone),
            },
          }),
    });
  } catch (error) {
    await giveBack(context, credit);
    throw error;
  }
  if (reservation.allowed) {
    if (reservation.month !== undefined) {
      // Bookkeeping beside the send: a failure must not stop the message the budget allowed.
      await warnMonthBudget(context, route, reservation.month).catch((error: unknown) =>
        context.logger.error('monthly budget warning not recorded', { route: record.route, error: errorName(error) }),
      );
    }
    return { outcome: GateOutcome.Send, ...(credit === undefined ? {} : { credit }), limits: reservation.taken };
  }
  await giveBack(context, credit);
  const reason =
    reservation.reason === LimitKind.Messages
      ? `route limit: more than ${limits.messages} messages per ${limits.window} s`
      : reservation.reason === LimitKind.MonthCredits
        ? `route limit: more than ${limits.creditsPerMonth} credits per month`
        : `route limit: more than ${limits.creditsPerDay} credits per day`;
  return { outcome: GateOutcome.Held, reason };
}

/**
 * Takes a critical message's (or a notice's) estimate from the projected balance whatever is left,
 * so normal routes see what it spends. Without a projected balance or a price yet the balance is
 * read first, as for a normal route: a send that went out untracked would be missing from the
 * projected balance a normal route rebases on while it is in flight, and that route would spend the
 * reserve. Only when that read fails does the message go out untracked (the next read accounts for
 * it): a critical message is never held up by the balance.
 */
async function takeCredit(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  record: MessageRecord,
  state: BalanceState,
): Promise<Gate> {
  let known = state;
  if (!knowsCredit(known, true)) {
    try {
      known = await readBalanceOnce(context, known);
    } catch (error) {
      context.logger.warn('balance unreadable: sending untracked by the projected balance', {
        id: record.id,
        route: record.route,
        error: errorName(error),
      });
      return GO;
    }
  }
  if (known.projected === undefined || known.creditsPerUnit === undefined) return GO;
  const estimate = estimateCredits(record, known.creditsPerUnit);
  const token = record.claimToken!;
  const taken = await context.store.reserveCredit({ estimate, token });
  return taken.reserved ? { outcome: GateOutcome.Send, credit: { token, estimate, basis: taken.basis } } : GO;
}

/** Whether the store knows what a send costs and, when `projected` is needed (a reserve), what is projected to be left. */
function knowsCredit(state: BalanceState, projected: boolean): boolean {
  return state.creditsPerUnit !== undefined && (!projected || state.projected !== undefined);
}

/**
 * After a send: its estimate is replaced by the actual `deducted`, and the service's
 * `remainingBalance` moves the projected balance where it proves it wrong (a top-up, credit spent
 * elsewhere).
 */
async function correctCredit(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  credit: Credit | undefined,
  result: ServiceSendResult,
): Promise<void> {
  if (!((context.config.settings.balance?.reserve ?? 0) > 0)) return;
  // A provider whose answer carries no balance (Africa's Talking): the reservation takes what it cost, no more.
  if (!Number.isFinite(result.remainingBalance)) {
    if (credit !== undefined)
      await context.store.settleCredit({ token: credit.token, estimate: credit.estimate, charged: result.deducted });
    return;
  }
  await context.store.observeSentCredit({
    balance: result.remainingBalance,
    deducted: result.deducted,
    ...(credit === undefined ? {} : { reservation: credit }),
  });
}

/**
 * Settles a reservation of the projected balance with what the send cost: `deducted` when it went
 * out (see {@link correctCredit}), 0 when it certainly did not, the estimate when it may have (the
 * next balance read corrects it). Never throws: the record's own outcome must still be stored.
 */
async function settleReservation(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  credit: Credit | undefined,
  charged: (estimate: number) => number,
): Promise<void> {
  if (credit === undefined) return;
  await context.store
    .settleCredit({ token: credit.token, estimate: credit.estimate, charged: charged(credit.estimate) })
    .catch((error: unknown) => {
      context.logger.error('projected balance not settled', { error: errorName(error) });
    });
}

/** Gives a reservation back: the send certainly did not go out. */
const giveBack = (context: RelayContext<RelayConfigView, CreditGateStore>, credit: Credit | undefined): Promise<void> =>
  settleReservation(context, credit, () => 0);

/**
 * After a failed send, what the gate took: the projected balance's estimate and the route's limits
 * are given back when it certainly did not go out (a 402, a refusal, each not-sent attempt), so a
 * message parked or retried does not count against `creditsPerMonth`/`creditsPerDay` (or
 * `limits.messages`) for a send that never happened; both are kept when it may have gone out.
 * Never throws: the record's own outcome must still be stored.
 */
export async function settleGateAfterFailure(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  gate: Gate,
  error: unknown,
): Promise<void> {
  if (gate.outcome !== GateOutcome.Send) return;
  const notSent = describeSmsError(error).delivery === SendCertainty.NOT_SENT;
  await Promise.all([
    settleReservation(context, gate.credit, (estimate) => (notSent ? 0 : estimate)),
    notSent && gate.limits !== undefined
      ? context.store.releaseLimit(gate.limits).catch((failure: unknown) =>
          context.logger.error('route limits not given back', {
            route: gate.limits!.route,
            error: errorName(failure),
          }),
        )
      : undefined,
  ]);
}

/**
 * Whether a message must see a fresh balance before it is parked: the first attempt after a
 * redrive, when the projected balance was last read from the service before that redrive.
 */
function needsFreshBalance(record: MessageRecord, state: BalanceState): boolean {
  if (record.redrives === 0) return false;
  const redrivenAt = lastRequeueAt(record);
  return redrivenAt !== undefined && (state.rebasedAt === undefined || state.rebasedAt < redrivenAt);
}

/** A balance read under way in this process for redriven messages, and when it began. */
const freshReads = new WeakMap<object, { readonly startedAt: string; readonly done: Promise<unknown> }>();

/**
 * Reads the balance once for the redriven messages deciding at the same time in this process: one
 * that began after `redrivenAt` is shared, so a redrive of many parked messages costs one read.
 */
async function freshBalance(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  redrivenAt: string,
): Promise<void> {
  const running = freshReads.get(context.store);
  if (running !== undefined && running.startedAt >= redrivenAt) {
    await running.done;
    return;
  }
  const startedAt = context.clock().toISOString();
  const done = context.store.getBalanceState().then((state) => readBalanceOnce(context, state));
  freshReads.set(context.store, { startedAt, done });
  try {
    await done;
  } finally {
    if (freshReads.get(context.store)?.done === done) freshReads.delete(context.store);
  }
}

const REDRIVEN_FROM: ReadonlySet<string> = new Set([MessageState.Parked, MessageState.Failed, MessageState.Held]);

/** When the record was last sent back to PENDING by a redrive, from its history. */
function lastRequeueAt(record: MessageRecord): string | undefined {
  const { history } = record;
  for (let index = history.length - 1; index > 0; index -= 1) {
    if (history[index]!.state === MessageState.Pending && REDRIVEN_FROM.has(history[index - 1]!.state))
      return history[index]!.at;
  }
  return undefined;
}

/** How long the balance look-ups inside a send may take: they run inside the sender's time budget. */
export const BALANCE_LOOKUP_TIMEOUT_MS = 2_000;

/**
 * A low-balance notice is checked again as it is about to go out (it may have waited parked for a
 * top-up): when the balance is back at or above the threshold it is stale and dropped. When the
 * balance cannot be read the notice goes out: a warning too many beats a warning lost.
 */
async function checkNotice(context: RelayContext<RelayConfigView, CreditGateStore>): Promise<Gate> {
  const threshold = context.config.settings.balance?.threshold;
  if (threshold === undefined) return GO;
  let balance: number;
  try {
    ({ balance } = await (await context.sms.client()).getBalance({ timeoutMs: BALANCE_LOOKUP_TIMEOUT_MS }));
  } catch {
    return GO;
  }
  if (balance < threshold) return GO;
  await observeBalance(context, { balance });
  return {
    outcome: GateOutcome.Dropped,
    reason: `stale: the balance is back at ${formatCredits(balance)}, not below the threshold of ${formatCredits(threshold)}`,
  };
}

/**
 * Fills in what the store does not know yet (no price recorded, no projected balance) with one
 * balance read: `smsRate` becomes the price, and the read is observed (rebasing the projected
 * balance on it, with `state.charged` read before it as the basis). A read that fails throws, so the
 * message is retried later instead of sent past a cap nobody could check.
 */
async function readBalanceOnce(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  state: BalanceState,
): Promise<BalanceState> {
  const read = await (await context.sms.client()).getBalance({ timeoutMs: BALANCE_LOOKUP_TIMEOUT_MS });
  if (state.creditsPerUnit === undefined && read.smsRate > 0)
    await context.store.recordPrice({ creditsPerUnit: read.smsRate, now: context.clock() });
  await observeBalance(context, { ...read, basis: state.charged ?? 0 });
  const after = await context.store.getBalanceState();
  return {
    ...after,
    creditsPerUnit: after.creditsPerUnit ?? read.smsRate,
    lastBalance: after.lastBalance ?? read.balance,
  };
}

/** What a send will cost: recipients × segments × the price of one SMS to one recipient. */
function estimateCredits(record: Pick<MessageRecord, 'to' | 'segments'>, creditsPerUnit: number): number {
  return creditsPerUnit * record.to.length * Math.max(1, record.segments);
}

/** Keeps what this send cost per recipient and segment: the price every process estimates with. */
async function recordPrice(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  record: MessageRecord,
  deducted: number,
): Promise<void> {
  const units = record.to.length * Math.max(1, record.segments);
  if (units > 0 && deducted > 0)
    await context.store.recordPrice({ creditsPerUnit: deducted / units, now: context.clock() });
}

function formatCredits(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/**
 * After a send that went out, the credit bookkeeping: the day's spend counter the forecast reads
 * (counted here, written with the window's other sends), the route's credits-spent counters (only
 * a credits limit needs them), the price per unit, and the projected balance corrected with what
 * the send cost. Never throws: a failure is logged, because the SMS went out and nothing may make
 * it go out again.
 */
export async function settleGateAfterSend(
  context: RelayContext<RelayConfigView, CreditGateStore>,
  record: MessageRecord,
  gate: Gate,
  result: ServiceSendResult,
): Promise<void> {
  const { store, clock, logger } = context;
  const note = (what: string) => (error: unknown) =>
    logger.error(what, { id: record.id, route: record.route, error: errorName(error) });
  const routeConfig = record.notice === undefined ? context.config.routes.get(record.route)?.config : undefined;
  const capsDay = routeConfig?.limits?.creditsPerDay !== undefined;
  const capsMonth = routeConfig?.limits?.creditsPerMonth !== undefined;
  // Not waited for: the day's counter is written per window with the process's other sends (see
  // `recordSpend`), and whoever must see it written flushes it (the Lambda handlers before they
  // return, the local runtime when it stops).
  void store
    .recordSpend({ deducted: result.deducted, route: record.route, now: clock() })
    .catch(note('spend not counted'));
  await Promise.all([
    capsDay || capsMonth
      ? store
          .recordCreditsSpent({
            route: record.route,
            deducted: result.deducted,
            now: clock(),
            day: capsDay,
            ...(capsMonth ? { month: monthBounds(clock(), routeConfig!.timeZone) } : {}),
          })
          .catch(note('credits spent not recorded'))
      : undefined,
    recordPrice(context, record, result.deducted).catch(note('price not recorded')),
    correctCredit(context, gate.outcome === GateOutcome.Send ? gate.credit : undefined, result).catch(
      note('projected balance not corrected'),
    ),
  ]);
}
