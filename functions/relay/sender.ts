import {
  describeSmsError,
  SendCertainty,
  SmsErrorCode,
  SmsOperation,
  SmsServiceError,
  type SendResult as ServiceSendResult,
  type SmsClient,
} from '../core/provider';
import type { RelayConfigView } from '../core/config/view';
import { DeliveryPolicy, RoutePriority } from '../core/config/policies';
import { maskMsisdn } from '../core/recipients/mask';
import { ClaimLostError, LimitKind, type LimitsTaken, MessageState, NoticeKind, type BalanceState, type LastError, type MessageRecord, type SendResult } from '../store';
import { SWEEP_PENDING_GRACE_MS } from '../core/defaults';
import { monthBounds } from '../core/local-time';
import { type BalanceReading, creditBasis, observeBalance } from './balance';
import { warnMonthBudget } from './budget';
import { mutedReason } from './mutes';
import { noteServiceAnswered, noteServiceFailure, sendsMustWait } from './circuit';
import { backoffMs, RelayMetric, type RelayContext } from './ports';
import { mayRetry } from './retry';

/** What the sender did with one record. */
export const SendOutcome = {
  Sent: 'sent',
  /** Another sender holds it, or it is not due / not pending: nothing done. */
  Skipped: 'skipped',
  Retrying: 'retrying',
  Failed: 'failed',
  Unknown: 'unknown',
  Parked: 'parked',
  Held: 'held',
  /** A low-balance notice whose balance is back above the threshold: dropped, never sent. */
  Dropped: 'dropped',
  /** The SMS service is unreachable (its circuit is open): left PENDING, untouched, for when it is back. */
  Waiting: 'waiting',
} as const;
export type SendOutcome = (typeof SendOutcome)[keyof typeof SendOutcome];

/** Options of {@link sendMessage}. */
export interface SendMessageOptions {
  /**
   * Told when the record went back to PENDING for another attempt at `nextAttemptAt` (a send that
   * certainly did not go out, or any failure on an at-least-once route), so the caller can send it
   * again on time instead of waiting for the sweeper.
   */
  readonly onRetry?: (nextAttemptAt: Date) => void;
}

/**
 * Sends one recorded message, at most once per claim: the record moves PENDING → SENDING with a
 * conditional update before the SMS service is called, so a second invocation (a stream retry, the
 * sweeper, a restarted runtime) never sends it again. The outcome is then stored:
 * - sent → SENT with the service's answer; its `remainingBalance` feeds the balance watch;
 * - certainly not sent → retried with backoff (PENDING with `nextAttemptAt`), FAILED when attempts
 *   run out or the service called the request invalid;
 * - maybe sent → UNKNOWN on at-most-once routes; retried on at-least-once routes;
 * - 402 → PARKED until a top-up and `redrive`; the balance watch is told at once;
 * - over a route limit → HELD, counted for the route's summary SMS;
 * - on a muted route → DROPPED with the mute's reason;
 * - while the SMS service is unreachable (see `./circuit`) → not claimed at all: it stays PENDING,
 *   no attempt spent, and goes out when a probe finds the service back.
 *
 * @example
 * ```ts
 * for (const id of idsFromStream) await sendMessage(context, id);
 * ```
 */
export async function sendMessage(context: RelayContext<RelayConfigView>, id: string, { onRetry }: SendMessageOptions = {}): Promise<SendOutcome> {
  const { store, logger, clock } = context;
  if ((await sendsMustWait(context)) !== undefined) return SendOutcome.Waiting;
  const claimed = await store.claimMessage(id, { now: clock() });
  if (claimed === undefined) return SendOutcome.Skipped;
  const token = claimed.claimToken!;

  let gate: Gate;
  try {
    gate = await checkBeforeSend(context, claimed);
    if (gate.outcome !== SendOutcome.Sent) await store.settle(id, token, { state: GATE_STATE[gate.outcome], reason: gate.reason }, { now: clock() });
  } catch (error) {
    await noteCircuit(context, () => noteServiceFailure(context, error));
    if (await releaseUnsent(context, claimed, token, error, onRetry)) return SendOutcome.Failed;
    throw error;
  }
  if (gate.outcome !== SendOutcome.Sent) {
    if (gate.outcome === SendOutcome.Held) context.metrics.add(RelayMetric.HeldBack, 1, claimed.route);
    if (gate.outcome === SendOutcome.Parked) context.metrics.add(RelayMetric.Parked, 1, claimed.route);
    if (gate.outcome === SendOutcome.Dropped) context.metrics.add(RelayMetric.Dropped, 1, claimed.route);
    logSend(context, claimed, gate.outcome.toUpperCase(), { reason: gate.reason });
    return gate.outcome;
  }

  let result: ServiceSendResult;
  try {
    result = await sendWithKeyRefresh(context, claimed);
  } catch (error) {
    await noteCircuit(context, () => noteServiceFailure(context, error));
    await settleGateAfterFailure(context, gate, error);
    return settleFailure(context, claimed, token, error, onRetry);
  }

  // The SMS went out: from here on nothing may make it go out again. Every write below is
  // bookkeeping; a failure is logged, never thrown (a throw would make the caller report, and the
  // stream retry, a send that succeeded).
  const sent = await recordSent(context, claimed, token, result);
  const note = (what: string) => (error: unknown) => logger.error(what, { id, route: claimed.route, error: errorName(error) });
  // The spend views add up the sent records; only a credits limit needs the route's day or month counter.
  const routeConfig = claimed.notice === undefined ? context.config.routes.get(claimed.route)?.config : undefined;
  const capsDay = routeConfig?.limits?.creditsPerDay !== undefined;
  const capsMonth = routeConfig?.limits?.creditsPerMonth !== undefined;
  await Promise.all([
    capsDay || capsMonth
      ? store
          .recordCreditsSpent({ route: claimed.route, deducted: result.deducted, now: clock(), day: capsDay, ...(capsMonth ? { month: monthBounds(clock(), routeConfig!.timeZone) } : {}) })
          .catch(note('credits spent not recorded'))
      : undefined,
    recordPrice(context, claimed, result.deducted).catch(note('price not recorded')),
    correctCredit(context, gate.credit, result).catch(note('projected balance not corrected')),
    noteServiceAnswered(context).catch(note('SMS service circuit not updated')),
  ]);
  const { metrics } = context;
  metrics.add(RelayMetric.Sent, 1, claimed.route);
  metrics.add(RelayMetric.Segments, claimed.segments * claimed.to.length, claimed.route);
  metrics.add(RelayMetric.CreditsSpent, result.deducted, claimed.route);
  metrics.add(RelayMetric.RemainingBalance, result.remainingBalance);
  logSend(context, sent ?? claimed, 'SENT', { credits: result.deducted, remainingBalance: result.remainingBalance });
  await observeBalance(context, { balance: result.remainingBalance }).catch(note('balance watch update failed'));
  return SendOutcome.Sent;
}

/** What to do with a claimed record before any send: go ahead, or hold, park or drop it, and why. */
type Gate =
  | {
      readonly outcome: typeof SendOutcome.Sent;
      /** The estimate taken from the projected balance (with `balance.reserve` set), settled after the send. */
      readonly credit?: Credit;
      /** What the route's limits took, given back when the send certainly did not go out. */
      readonly limits?: LimitsTaken;
    }
  | { readonly outcome: typeof SendOutcome.Held | typeof SendOutcome.Parked | typeof SendOutcome.Dropped; readonly reason: string };

/** An estimate taken from the projected balance by `reserveCredit`. */
interface Credit {
  /** The send's claim token, the reservation's name. */
  readonly token: string;
  readonly estimate: number;
  /** The store's `charged` when it was taken (see `observeSentCredit`). */
  readonly basis: number;
}

const GO: Gate = { outcome: SendOutcome.Sent };

const GATE_STATE = { [SendOutcome.Held]: MessageState.Held, [SendOutcome.Parked]: MessageState.Parked, [SendOutcome.Dropped]: MessageState.Dropped } as const;

/**
 * The checks that keep credit safe, in order: a low-balance notice whose balance recovered is
 * stale; a `normal` route's message whose estimate the projected balance cannot pay while keeping
 * `balance.reserve` is parked; one over a route limit is held. Costs are estimated from the price
 * kept in the store, so every check holds from the first send of a fresh process.
 *
 * With a reserve, every send takes its estimate from the projected balance kept in the store by one
 * conditional write (see `reserveCredit`), so concurrent senders cannot together go below the
 * reserve: a normal route's messages only while the reserve stays; critical routes' messages and
 * every notice (the low-balance SMS, and a route's held summary, budget warning and dead-man's
 * switch, whatever the route's priority) whatever is left, so that normal routes see what they
 * spend. A store that knows no price or projected balance yet reads the balance first, for every
 * send alike; a critical message is never held up by the balance: when that read fails it goes out
 * untracked.
 */
async function checkBeforeSend(context: RelayContext<RelayConfigView>, record: MessageRecord): Promise<Gate> {
  const reserve = context.config.config.balance?.reserve ?? 0;
  if (record.notice === NoticeKind.LowBalance) {
    const gate = await checkNotice(context);
    return gate.outcome === SendOutcome.Sent && reserve > 0 ? await takeCredit(context, record, await context.store.getBalanceState()) : gate;
  }
  const routeView = context.config.routes.get(record.route);
  const route = routeView?.config;
  const now = context.clock();
  if (record.notice === undefined && routeView !== undefined && now.getTime() - Date.parse(record.createdAt) > SWEEP_PENDING_GRACE_MS) {
    // A message that waited (a retry, a redrive, a backlog) may have been accepted before its route
    // was muted: it is dropped like a new one. A fresh one was checked at accept, a second earlier.
    const mute = await context.store.getMute({ route: record.route, now });
    if (mute !== undefined) return { outcome: SendOutcome.Dropped, reason: mutedReason(routeView, mute, now) };
  }
  // A notice is the relay's own word to the people who run it, never a route's traffic.
  const guardsReserve = reserve > 0 && record.notice === undefined && route?.priority !== RoutePriority.Critical;
  const limits = record.notice === undefined ? route?.limits : undefined;
  const capsCredits = limits?.creditsPerDay !== undefined || limits?.creditsPerMonth !== undefined;
  if (reserve === 0 && limits?.messages === undefined && !capsCredits) return GO;

  let state = reserve > 0 || capsCredits ? await context.store.getBalanceState() : undefined;
  if (state !== undefined && (guardsReserve || capsCredits) && !knowsCredit(state, reserve > 0)) state = await readBalanceOnce(context, state);
  const estimate = state === undefined ? 0 : estimateCredits(record, state.creditsPerUnit ?? 0);

  let credit: Credit | undefined;
  if (guardsReserve) {
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
      return {
        outcome: SendOutcome.Parked,
        reason: `balance reserve: ${formatCredits(estimate)} credits would leave ${formatCredits(left)}, below the reserve of ${formatCredits(reserve)} kept for critical routes; waiting for a top-up and redrive`,
      };
    }
    credit = { token, estimate, basis: taken.basis };
  } else if (reserve > 0 && state !== undefined) {
    const gate = await takeCredit(context, record, state);
    credit = gate.outcome === SendOutcome.Sent ? gate.credit : undefined;
  }
  const go: Gate = credit === undefined ? GO : { outcome: SendOutcome.Sent, credit };
  if (limits === undefined || (limits.messages === undefined && !capsCredits)) return go;
  let reservation;
  // One reading of the clock: the month a reservation counts in is the one its time falls in.
  const reservedAt = context.clock();
  try {
    reservation = await context.store.reserveLimit({
      route: record.route,
      now: reservedAt,
      ...(limits.messages === undefined ? {} : { messages: { max: limits.messages, windowSeconds: limits.window } }),
      ...(limits.creditsPerDay === undefined ? {} : { credits: { maxPerDay: limits.creditsPerDay, estimate } }),
      ...(limits.creditsPerMonth === undefined ? {} : { monthCredits: { maxPerMonth: limits.creditsPerMonth, estimate, month: monthBounds(reservedAt, route!.timeZone) } }),
    });
  } catch (error) {
    await giveBack(context, credit);
    throw error;
  }
  if (reservation.allowed) {
    if (reservation.month !== undefined) {
      // Bookkeeping beside the send: a failure must not stop the message the budget allowed.
      await warnMonthBudget(context, routeView!, reservation.month).catch((error: unknown) => context.logger.error('monthly budget warning not recorded', { route: record.route, error: errorName(error) }));
    }
    return { outcome: SendOutcome.Sent, ...(credit === undefined ? {} : { credit }), limits: reservation.taken };
  }
  await giveBack(context, credit);
  const reason = reservation.reason === LimitKind.Messages
    ? `route limit: more than ${limits.messages} messages per ${limits.window} s`
    : reservation.reason === LimitKind.MonthCredits
      ? `route limit: more than ${limits.creditsPerMonth} credits per month`
      : `route limit: more than ${limits.creditsPerDay} credits per day`;
  return { outcome: SendOutcome.Held, reason };
}

/**
 * Takes a critical message's (or a notice's) estimate from the projected balance whatever is left,
 * so normal routes see what it spends. Without a projected balance or a price yet the balance is
 * read first, as for a normal route: a send that went out untracked would be missing from the
 * projected balance a normal route rebases on while it is in flight, and that route would spend the
 * reserve. Only when that read fails does the message go out untracked (the next read accounts for
 * it): a critical message is never held up by the balance.
 */
async function takeCredit(context: RelayContext<RelayConfigView>, record: MessageRecord, state: BalanceState): Promise<Gate> {
  let known = state;
  if (!knowsCredit(known, true)) {
    try {
      known = await readBalanceOnce(context, known);
    } catch (error) {
      context.logger.warn('balance unreadable: sending untracked by the projected balance', { id: record.id, route: record.route, error: errorName(error) });
      return GO;
    }
  }
  if (known.projected === undefined || known.creditsPerUnit === undefined) return GO;
  const estimate = estimateCredits(record, known.creditsPerUnit);
  const token = record.claimToken!;
  const taken = await context.store.reserveCredit({ estimate, token });
  return taken.reserved ? { outcome: SendOutcome.Sent, credit: { token, estimate, basis: taken.basis } } : GO;
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
async function correctCredit(context: RelayContext<RelayConfigView>, credit: Credit | undefined, result: ServiceSendResult): Promise<void> {
  if (!((context.config.config.balance?.reserve ?? 0) > 0)) return;
  await context.store.observeSentCredit({ balance: result.remainingBalance, deducted: result.deducted, ...(credit === undefined ? {} : { reservation: credit }) });
}

/**
 * Settles a reservation of the projected balance with what the send cost: `deducted` when it went
 * out (see {@link correctCredit}), 0 when it certainly did not, the estimate when it may have (the
 * next balance read corrects it). Never throws: the record's own outcome must still be stored.
 */
async function settleReservation(context: RelayContext<RelayConfigView>, credit: Credit | undefined, charged: (estimate: number) => number): Promise<void> {
  if (credit === undefined) return;
  await context.store.settleCredit({ token: credit.token, estimate: credit.estimate, charged: charged(credit.estimate) }).catch((error: unknown) => {
    context.logger.error('projected balance not settled', { error: errorName(error) });
  });
}

/** Gives a reservation back: the send certainly did not go out. */
const giveBack = (context: RelayContext<RelayConfigView>, credit: Credit | undefined): Promise<void> => settleReservation(context, credit, () => 0);

/**
 * After a failed send, what the gate took: the projected balance's estimate and the route's limits
 * are given back when it certainly did not go out (a 402, a refusal, each not-sent attempt), so a
 * message parked or retried does not count against `creditsPerMonth`/`creditsPerDay` (or
 * `limits.messages`) for a send that never happened; both are kept when it may have gone out.
 * Never throws: the record's own outcome must still be stored.
 */
async function settleGateAfterFailure(context: RelayContext<RelayConfigView>, gate: Gate, error: unknown): Promise<void> {
  if (gate.outcome !== SendOutcome.Sent) return;
  const notSent = describeSmsError(error).delivery === SendCertainty.NOT_SENT;
  await Promise.all([
    settleReservation(context, gate.credit, (estimate) => (notSent ? 0 : estimate)),
    notSent && gate.limits !== undefined
      ? context.store.releaseLimit(gate.limits).catch((failure: unknown) => context.logger.error('route limits not given back', { route: gate.limits!.route, error: errorName(failure) }))
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
async function freshBalance(context: RelayContext<RelayConfigView>, redrivenAt: string): Promise<void> {
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
    if (history[index]!.state === MessageState.Pending && REDRIVEN_FROM.has(history[index - 1]!.state)) return history[index]!.at;
  }
  return undefined;
}

/** How long the balance look-ups inside a send may take: they run inside the sender's time budget. */
const BALANCE_LOOKUP_TIMEOUT_MS = 2_000;

/**
 * A low-balance notice is checked again as it is about to go out (it may have waited parked for a
 * top-up): when the balance is back at or above the threshold it is stale and dropped. When the
 * balance cannot be read the notice goes out: a warning too many beats a warning lost.
 */
async function checkNotice(context: RelayContext<RelayConfigView>): Promise<Gate> {
  const threshold = context.config.config.balance?.threshold;
  if (threshold === undefined) return GO;
  let balance: number;
  try {
    ({ balance } = await (await context.sms.client()).getBalance({ timeoutMs: BALANCE_LOOKUP_TIMEOUT_MS }));
  } catch {
    return GO;
  }
  if (balance < threshold) return GO;
  await observeBalance(context, { balance });
  return { outcome: SendOutcome.Dropped, reason: `stale: the balance is back at ${formatCredits(balance)}, not below the threshold of ${formatCredits(threshold)}` };
}

/**
 * Fills in what the store does not know yet (no price recorded, no projected balance) with one
 * balance read: `smsRate` becomes the price, and the read is observed (rebasing the projected
 * balance on it, with `state.charged` read before it as the basis). A read that fails throws, so the
 * message is retried later instead of sent past a cap nobody could check.
 */
async function readBalanceOnce(context: RelayContext<RelayConfigView>, state: BalanceState): Promise<BalanceState> {
  const read = await (await context.sms.client()).getBalance({ timeoutMs: BALANCE_LOOKUP_TIMEOUT_MS });
  if (state.creditsPerUnit === undefined && read.smsRate > 0) await context.store.recordPrice({ creditsPerUnit: read.smsRate, now: context.clock() });
  await observeBalance(context, { ...read, basis: state.charged ?? 0 });
  const after = await context.store.getBalanceState();
  return { ...after, creditsPerUnit: after.creditsPerUnit ?? read.smsRate, lastBalance: after.lastBalance ?? read.balance };
}

/** What a send will cost: recipients × segments × the price of one SMS to one recipient. */
function estimateCredits(record: Pick<MessageRecord, 'to' | 'segments'>, creditsPerUnit: number): number {
  return creditsPerUnit * record.to.length * Math.max(1, record.segments);
}

/** Keeps what this send cost per recipient and segment: the price every process estimates with. */
async function recordPrice(context: RelayContext<RelayConfigView>, record: MessageRecord, deducted: number): Promise<void> {
  const units = record.to.length * Math.max(1, record.segments);
  if (units > 0 && deducted > 0) await context.store.recordPrice({ creditsPerUnit: deducted / units, now: context.clock() });
}

/** Pauses between attempts to store a send's result. */
const RECORD_SENT_DELAYS_MS = [0, 250, 1_000, 3_000] as const;

/**
 * Stores a send the service accepted as `SENT`. The stored answer is bounded by the store, so it
 * always fits; should the write still fail, the record is written `SENT` with the amounts alone,
 * retried a few times. Returns `undefined` when the claim was lost or every attempt failed (logged):
 * the SMS went out and nothing here may make it go out again.
 */
async function recordSent(context: RelayContext<RelayConfigView>, record: MessageRecord, token: string, result: ServiceSendResult): Promise<MessageRecord | undefined> {
  const full: SendResult = { deducted: result.deducted, remainingBalance: result.remainingBalance, message: result.message, senderId: result.senderId, recipients: result.recipients };
  const amountsOnly: SendResult = { ...full, message: '', recipients: { omitted: 'the full answer could not be stored' } };
  for (const [attempt, delayMs] of RECORD_SENT_DELAYS_MS.entries()) {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    try {
      return await context.store.settle(record.id, token, { state: MessageState.Sent, result: attempt === 0 ? full : amountsOnly }, { now: context.clock() });
    } catch (error) {
      if (error instanceof ClaimLostError) {
        context.logger.error('SMS sent, but its claim was taken over; the record keeps the other outcome', { id: record.id, route: record.route });
        return undefined;
      }
      context.logger.error('SMS sent, but the result was not stored', { id: record.id, route: record.route, attempt: attempt + 1, error: errorName(error) });
    }
  }
  return undefined;
}

function formatCredits(value: number): string {
  return String(Math.round(value * 100) / 100);
}

async function sendWithKeyRefresh(context: RelayContext<RelayConfigView>, record: MessageRecord): Promise<ServiceSendResult> {
  const request = { phoneNumbers: record.to, message: record.text, ...(record.senderId === undefined ? {} : { senderId: record.senderId }) };
  const client = await smsClient(() => context.sms.client());
  try {
    return await client.send(request);
  } catch (error) {
    // A 401 certainly sent nothing; the key may have been rotated since it was cached.
    if (!(error instanceof SmsServiceError && error.code === SmsErrorCode.UNAUTHORIZED)) throw error;
    context.logger.warn('SMS service refused the API key; reading the secret again', { id: record.id });
    const fresh = await smsClient(() => context.sms.refresh());
    // The same client means the same key, which would only be refused again.
    if (fresh === client) throw error;
    return await fresh.send(request);
  }
}

/** A failure to get a client happens before any request, so it is `not-sent`, whatever it was. */
async function smsClient(get: () => Promise<SmsClient>): Promise<SmsClient> {
  try {
    return await get();
  } catch (error) {
    throw new SmsServiceError(`no SMS client: the API key could not be read (${errorName(error)})`, {
      operation: SmsOperation.SEND,
      code: SmsErrorCode.CLIENT_UNAVAILABLE,
      delivery: SendCertainty.NOT_SENT,
      cause: error,
    });
  }
}

async function settleFailure(context: RelayContext<RelayConfigView>, record: MessageRecord, token: string, error: unknown, onRetry: SendMessageOptions['onRetry']): Promise<SendOutcome> {
  const { store, clock, metrics, policy } = context;
  // Any error that is not the client's counts as maybe-sent: nothing proves otherwise.
  const description = describeSmsError(error);
  const lastError: LastError = {
    name: description.name,
    ...(description.status === undefined ? {} : { status: description.status }),
    delivery: description.delivery,
    message: description.serviceError ?? description.systemCode ?? (error instanceof SmsServiceError ? error.message : description.name),
  };
  const now = clock();

  if (description.code === SmsErrorCode.INSUFFICIENT_BALANCE) {
    await store.settle(record.id, token, { state: MessageState.Parked, reason: 'insufficient balance (402): waiting for a top-up and redrive', lastError }, { now });
    metrics.add(RelayMetric.Parked, 1, record.route);
    logSend(context, record, 'PARKED', { error: description });
    await observeBalance(context, await balanceAfterRefusal(context)).catch((failure: unknown) => {
      context.logger.error('balance watch update failed', { error: errorName(failure) });
    });
    return SendOutcome.Parked;
  }

  const permanent = description.code === SmsErrorCode.BAD_REQUEST || description.code === SmsErrorCode.VALIDATION;
  const maySend = description.delivery === SendCertainty.MAYBE_SENT;
  const canRetry = !permanent && (!maySend || record.delivery === DeliveryPolicy.AtLeastOnce);

  if (canRetry && mayRetry(context, record, now)) {
    const nextAttemptAt = new Date(now.getTime() + backoffMs(policy, record.attempts));
    await store.settle(record.id, token, { state: MessageState.Pending, nextAttemptAt, lastError }, { now });
    logSend(context, record, 'RETRY', { error: description, nextAttemptAt: nextAttemptAt.toISOString() });
    onRetry?.(nextAttemptAt);
    return SendOutcome.Retrying;
  }

  if (maySend) {
    const reason = record.delivery === DeliveryPolicy.AtLeastOnce
      ? `may have been sent; still failing when its retry.for ran out (${record.attempts} attempts)`
      : 'may have been sent (at-most-once route: not retried)';
    await store.settle(record.id, token, { state: MessageState.Unknown, reason, lastError }, { now });
    metrics.add(RelayMetric.Unknown, 1, record.route);
    logSend(context, record, 'UNKNOWN', { error: description });
    return SendOutcome.Unknown;
  }

  const reason = permanent ? `refused by the SMS service: ${lastError.message}` : `not sent after ${record.attempts} attempts: ${lastError.message}`;
  await store.settle(record.id, token, { state: MessageState.Failed, reason, lastError }, { now });
  metrics.add(RelayMetric.Failed, 1, record.route);
  logSend(context, record, 'FAILED', { error: description });
  return SendOutcome.Failed;
}

/**
 * Puts back a claimed record after a failure before the SMS service was called (the balance read
 * or the store failing on a check). Left in SENDING it would go stale, and an at-most-once route can
 * only settle a stale record as UNKNOWN: a message never sent would be lost. Such a failure counts
 * as an attempt (the claim counted it): once attempts run out the record ends FAILED with what
 * failed, so a check that keeps failing cannot keep a message waiting for ever.
 *
 * @returns `true` when the record was settled FAILED. Best effort: if the store is still failing,
 * the stale recovery is all there is.
 */
async function releaseUnsent(context: RelayContext<RelayConfigView>, record: MessageRecord, token: string, error: unknown, onRetry: SendMessageOptions['onRetry']): Promise<boolean> {
  const { store, clock, policy, metrics } = context;
  const now = clock();
  const lastError: LastError = { name: errorName(error), delivery: SendCertainty.NOT_SENT, message: failedBeforeSending(error) };
  const exhausted = !mayRetry(context, record, now);
  try {
    if (!exhausted) {
      const nextAttemptAt = new Date(now.getTime() + backoffMs(policy, record.attempts));
      await store.settle(record.id, token, { state: MessageState.Pending, nextAttemptAt, lastError }, { now });
      onRetry?.(nextAttemptAt);
      return false;
    }
    await store.settle(record.id, token, { state: MessageState.Failed, reason: `not sent after ${record.attempts} attempts: ${lastError.message}`, lastError }, { now });
  } catch (releaseError) {
    context.logger.error('claimed message not released; it is recovered once stale', { id: record.id, error: errorName(releaseError) });
    return false;
  }
  metrics.add(RelayMetric.Failed, 1, record.route);
  logSend(context, record, 'FAILED', { error: lastError });
  return true;
}

/**
 * Tells the circuit what a failed call said about the service. Bookkeeping beside the record's own
 * outcome: a store failure here is logged, and the record is still settled.
 */
async function noteCircuit(context: RelayContext<RelayConfigView>, note: () => Promise<void>): Promise<void> {
  await note().catch((error: unknown) => context.logger.error('SMS service circuit not updated', { error: errorName(error) }));
}

/** What failed before the send, for the record: the balance read (with the service's answer), or the error's name. */
function failedBeforeSending(error: unknown): string {
  if (!(error instanceof SmsServiceError && error.operation === SmsOperation.BALANCE)) return `failed before sending: ${errorName(error)}`;
  const { serviceError, systemCode, status } = describeSmsError(error);
  return `failed before sending: the balance could not be read (${serviceError ?? systemCode ?? (status === undefined ? error.code : `HTTP ${status}`)})`;
}

/**
 * The balance after a 402, for the low-balance notice: a 402 says only that the balance does not
 * cover this send, which may be well above zero. Taken as 0 when it cannot be read.
 */
async function balanceAfterRefusal(context: RelayContext<RelayConfigView>): Promise<BalanceReading> {
  try {
    const basis = await creditBasis(context);
    const { balance, currency, smsRate } = await (await context.sms.client()).getBalance({ timeoutMs: BALANCE_LOOKUP_TIMEOUT_MS });
    return { balance, currency, smsRate, ...(basis === undefined ? {} : { basis }) };
  } catch {
    return { balance: 0 };
  }
}

function logSend(context: RelayContext<RelayConfigView>, record: MessageRecord, state: string, extra: Record<string, unknown>): void {
  const level = state === 'SENT' ? 'info' : state === 'RETRY' || state === 'HELD' ? 'warn' : 'error';
  context.logger[level]('sms', {
    id: record.id,
    route: record.route,
    to: record.to.map(maskMsisdn),
    state,
    segments: record.segments,
    attempt: record.attempts,
    ...extra,
  });
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
