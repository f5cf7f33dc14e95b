import {
  describeSmsError,
  SmsBadRequestError,
  SmsDelivery,
  SmsInsufficientBalanceError,
  SmsUnauthorizedError,
  SmsValidationError,
  type SendResult as ServiceSendResult,
  type SmsClient,
} from '../core/provider';
import type { RelayConfigView } from '../core/config/view';
import { maskMsisdn } from '../core/recipients/mask';
import { Delivery, type LastError, type MessageRecord } from '../store';
import { observeBalance } from './balance';
import { SmsClientUnavailableError } from './errors';
import { backoffMs, NOTICE_KEY_PREFIX, RelayMetric, type RelayContext } from './ports';

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
} as const;
export type SendOutcome = (typeof SendOutcome)[keyof typeof SendOutcome];

/**
 * Sends one recorded message, at most once per claim: the record moves PENDING → SENDING with a
 * conditional update before the SMS service is called, so a second invocation (a stream retry, the
 * sweeper, a restarted runtime) never sends it again. The outcome is then stored:
 * - sent → SENT with the service's answer; its `remainingBalance` feeds the balance watch;
 * - certainly not sent → retried with backoff (PENDING with `nextAttemptAt`), FAILED when attempts
 *   run out or the service called the request invalid;
 * - maybe sent → UNKNOWN on at-most-once routes; retried on at-least-once routes;
 * - 402 → PARKED until a top-up and `redrive`; the balance watch is told at once;
 * - over a route limit → HELD, counted for the route's summary SMS.
 *
 * @example
 * ```ts
 * for (const id of idsFromStream) await sendMessage(context, id);
 * ```
 */
export async function sendMessage(context: RelayContext<RelayConfigView>, id: string): Promise<SendOutcome> {
  const { store, logger, clock } = context;
  const claimed = await store.claimMessage(id, { now: clock() });
  if (claimed === undefined) return SendOutcome.Skipped;
  const token = claimed.claimToken!;

  let held: string | undefined;
  try {
    held = await reserveLimits(context, claimed);
    if (held !== undefined) await store.markHeld(id, token, held, { now: clock() });
  } catch (error) {
    await releaseUnsent(context, claimed, token, error);
    throw error;
  }
  if (held !== undefined) {
    context.metrics.add(RelayMetric.HeldBack, 1, claimed.route);
    logSend(context, claimed, 'HELD', { reason: held });
    return SendOutcome.Held;
  }

  let result: ServiceSendResult;
  try {
    result = await sendWithKeyRefresh(context, claimed);
  } catch (error) {
    return settleFailure(context, claimed, token, error);
  }

  const sent = await store.markSent(
    id,
    token,
    {
      deducted: result.deducted,
      remainingBalance: result.remainingBalance,
      message: result.message,
      senderId: result.senderId,
      recipients: result.recipients,
    },
    { now: clock() },
  );
  learnPrice(claimed, result.deducted);
  // The SMS went out and its record says so: a failure of the bookkeeping after that must not make
  // the caller report (and the stream retry) a send that succeeded.
  await store.recordCreditsSpent({ route: claimed.route, deducted: result.deducted, now: clock() }).catch((error: unknown) => {
    logger.error('credits spent not recorded', { id, route: claimed.route, error: errorName(error) });
  });
  const { metrics } = context;
  metrics.add(RelayMetric.Sent, 1, claimed.route);
  metrics.add(RelayMetric.Segments, claimed.segments * claimed.to.length, claimed.route);
  metrics.add(RelayMetric.CreditsSpent, result.deducted, claimed.route);
  metrics.add(RelayMetric.RemainingBalance, result.remainingBalance);
  logSend(context, sent, 'SENT', { credits: result.deducted, remainingBalance: result.remainingBalance });
  await observeBalance(context, result.remainingBalance).catch((error: unknown) => {
    logger.error('balance watch update failed', { error: errorName(error) });
  });
  return SendOutcome.Sent;
}

async function sendWithKeyRefresh(context: RelayContext<RelayConfigView>, record: MessageRecord): Promise<ServiceSendResult> {
  const request = { phoneNumbers: record.to, message: record.text, ...(record.senderId === undefined ? {} : { senderId: record.senderId }) };
  const client = await smsClient(() => context.sms.client());
  try {
    return await client.send(request);
  } catch (error) {
    // A 401 certainly sent nothing; the key may have been rotated since it was cached.
    if (!(error instanceof SmsUnauthorizedError)) throw error;
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
    throw new SmsClientUnavailableError({ cause: error });
  }
}

async function reserveLimits(context: RelayContext<RelayConfigView>, record: MessageRecord): Promise<string | undefined> {
  if (record.dedupeKey.startsWith(NOTICE_KEY_PREFIX)) return undefined;
  const limits = context.config.routes.get(record.route)?.config.limits;
  if (limits === undefined || (limits.messages === undefined && limits.creditsPerDay === undefined)) return undefined;
  const reservation = await context.store.reserveLimit({
    route: record.route,
    now: context.clock(),
    ...(limits.messages === undefined ? {} : { messages: { max: limits.messages, windowSeconds: limits.window } }),
    ...(limits.creditsPerDay === undefined
      ? {}
      : { credits: { maxPerDay: limits.creditsPerDay, estimate: estimateCredits(record) } }),
  });
  if (reservation.allowed) return undefined;
  return reservation.reason === 'messages'
    ? `route limit: more than ${limits.messages} messages per ${limits.window} s`
    : `route limit: more than ${limits.creditsPerDay} credits per day`;
}

/**
 * The cost of a send is only known afterwards (the seed does not say how `deducted` is computed), so
 * the estimate uses the price per recipient-segment the service charged last time in this process.
 */
let lastCreditsPerRecipientSegment = 0;

function estimateCredits(record: MessageRecord): number {
  return lastCreditsPerRecipientSegment * record.to.length * Math.max(1, record.segments);
}

export function learnPrice(record: Pick<MessageRecord, 'to' | 'segments'>, deducted: number): void {
  const units = record.to.length * Math.max(1, record.segments);
  if (units > 0 && deducted > 0) lastCreditsPerRecipientSegment = deducted / units;
}

async function settleFailure(context: RelayContext<RelayConfigView>, record: MessageRecord, token: string, error: unknown): Promise<SendOutcome> {
  const { store, clock, metrics, policy } = context;
  // describeSmsError takes any error that is not the client's as maybe-sent; a missing client is not.
  const description = error instanceof SmsClientUnavailableError
    ? { ...describeSmsError(error), delivery: SmsDelivery.NOT_SENT }
    : describeSmsError(error);
  const lastError: LastError = {
    name: description.name,
    ...(description.status === undefined ? {} : { status: description.status }),
    delivery: description.delivery,
    message: error instanceof SmsClientUnavailableError ? error.message : (description.serviceError ?? description.code ?? description.name),
  };
  const now = clock();

  if (error instanceof SmsInsufficientBalanceError) {
    await store.markParked(record.id, token, 'insufficient balance (402): waiting for a top-up and redrive', { now, lastError });
    metrics.add(RelayMetric.Parked, 1, record.route);
    logSend(context, record, 'PARKED', { error: description });
    const { balance, currency } = await balanceAfterRefusal(context);
    await observeBalance(context, balance, currency).catch((failure: unknown) => {
      context.logger.error('balance watch update failed', { error: errorName(failure) });
    });
    return SendOutcome.Parked;
  }

  const permanent = error instanceof SmsBadRequestError || error instanceof SmsValidationError;
  const maySend = description.delivery === SmsDelivery.MAYBE_SENT;
  const canRetry = !permanent && (!maySend || record.delivery === Delivery.AtLeastOnce);
  const attemptsLeft = record.attempts < policy.maxAttempts;

  if (canRetry && attemptsLeft) {
    const nextAttemptAt = new Date(now.getTime() + backoffMs(policy, record.attempts));
    await store.releaseForRetry(record.id, token, { nextAttemptAt, lastError, now });
    logSend(context, record, 'RETRY', { error: description, nextAttemptAt: nextAttemptAt.toISOString() });
    return SendOutcome.Retrying;
  }

  if (maySend) {
    const reason = record.delivery === Delivery.AtLeastOnce
      ? `may have been sent; gave up after ${record.attempts} attempts`
      : 'may have been sent (at-most-once route: not retried)';
    await store.markUnknown(record.id, token, reason, lastError, { now });
    metrics.add(RelayMetric.Unknown, 1, record.route);
    logSend(context, record, 'UNKNOWN', { error: description });
    return SendOutcome.Unknown;
  }

  const reason = permanent ? `refused by the SMS service: ${lastError.message}` : `not sent after ${record.attempts} attempts: ${lastError.message}`;
  await store.markFailed(record.id, token, reason, lastError, { now });
  metrics.add(RelayMetric.Failed, 1, record.route);
  logSend(context, record, 'FAILED', { error: description });
  return SendOutcome.Failed;
}

/**
 * Puts back a claimed record after a failure before the SMS service was called (the store failing
 * on the limit check). Left in SENDING it would go stale, and an at-most-once route can only settle
 * a stale record as UNKNOWN: a message never sent would be lost. Best effort: if the store is still
 * failing, the stale recovery is all there is.
 */
async function releaseUnsent(context: RelayContext<RelayConfigView>, record: MessageRecord, token: string, error: unknown): Promise<void> {
  const now = context.clock();
  const name = errorName(error);
  try {
    await context.store.releaseForRetry(record.id, token, {
      nextAttemptAt: new Date(now.getTime() + backoffMs(context.policy, record.attempts)),
      lastError: { name, delivery: SmsDelivery.NOT_SENT, message: `failed before sending: ${name}` },
      now,
    });
  } catch (releaseError) {
    context.logger.error('claimed message not released; it is recovered once stale', { id: record.id, error: errorName(releaseError) });
  }
}

/** How long the free balance look-up after a 402 may take: it runs inside the sender's time budget. */
const BALANCE_LOOKUP_TIMEOUT_MS = 2_000;

/**
 * The balance after a 402, for the low-balance notice: a 402 says only that the balance does not
 * cover this send, which may be well above zero. Taken as 0 when it cannot be read.
 */
async function balanceAfterRefusal(context: RelayContext<RelayConfigView>): Promise<{ balance: number; currency?: string }> {
  try {
    const { balance, currency } = await (await context.sms.client()).getBalance({ timeoutMs: BALANCE_LOOKUP_TIMEOUT_MS });
    return { balance, currency };
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

/** Test seam: the estimate is process-wide state. */
export function resetPriceEstimate(): void {
  lastCreditsPerRecipientSegment = 0;
}
