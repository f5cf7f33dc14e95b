import {
  DEFAULT_RETRY_AFTER_MS,
  describeSmsError,
  SendCertainty,
  SmsErrorCode,
  SmsOperation,
  SmsServiceError,
  type SendResult as ServiceSendResult,
  type SmsClient,
} from '../core/provider';
import type { RelayConfigView } from '../core/config/view';
import { DeliveryPolicy } from '../core/config/policies';
import { maskMsisdn } from '../core/recipients/mask';
import { reasonText } from '../core/reasons';
import {
  ClaimLostError,
  MessageState,
  type LastError,
  type MessageRecord,
  type ProviderAttempt,
  type SendResult,
} from '../store';
import { type BalanceReading, creditBasis, observeBalance } from './balance';
import {
  BALANCE_LOOKUP_TIMEOUT_MS,
  checkBeforeSend,
  type Gate,
  GateOutcome,
  settleGateAfterFailure,
  settleGateAfterSend,
} from './credit-gate';
import { errorName } from './error-name';
import { type CircuitPassage, enterCircuit } from './circuit';
import { backoffMs, RelayMetric, type RelayContext } from './ports';
import { mayRetry, retryDeadline } from './retry';
import { type ClosedIncident, closedIncident, noteNotSent } from './incident-sends';
import { takeSendSlot } from './provider-rate';
import { sendsThroughChain } from './provider-scope';
import { type ChainSettling, sendThroughChain } from './failover';
import { type SenderStore, SendOutcome, type SendMessageOptions } from './send-outcome';

export { type SenderStore, SendOutcome, type SendMessageOptions } from './send-outcome';

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
 * - 429 (or no slot of `provider.maxPerSecond` in time) → retried after its `Retry-After` on every
 *   route, at-most-once too (nothing was sent), while the route's `retry.for` allows;
 * - while the SMS service is unreachable (see `./circuit`) → not claimed at all: it stays PENDING,
 *   no attempt spent, and goes out when a probe finds the service back (after a probe, one send at
 *   a time until one goes through).
 *
 * @example
 * ```ts
 * for (const id of idsFromStream) await sendMessage(context, id);
 * ```
 */
export async function sendMessage(
  context: RelayContext<RelayConfigView, SenderStore>,
  id: string,
  { onRetry }: SendMessageOptions = {},
): Promise<SendOutcome> {
  if (context.providers !== undefined && sendsThroughChain(context.config.settings))
    return await sendThroughChain(context, context.providers, id, onRetry, CHAIN_SETTLING);
  const passage = await enterCircuit(context, id);
  if (passage === undefined) return SendOutcome.Waiting;
  try {
    return await sendThrough(context, id, passage, onRetry);
  } finally {
    // A trial or a probe whose send was never made goes back for the next send.
    await noteCircuit(context, () => passage.release());
  }
}

async function sendThrough(
  context: RelayContext<RelayConfigView, SenderStore>,
  id: string,
  passage: CircuitPassage,
  onRetry: SendMessageOptions['onRetry'],
): Promise<SendOutcome> {
  const { store, logger, clock } = context;
  const claimed = await store.claimMessage(id, { now: clock() });
  if (claimed === undefined) return SendOutcome.Skipped;
  const token = claimed.claimToken!;

  let gate: Gate;
  let incident: ClosedIncident | undefined;
  try {
    // An escalation recorded before its incident was acknowledged (or resolved) is not sent after.
    incident = await closedIncident(store, claimed);
    gate =
      incident === undefined
        ? await checkBeforeSend(context, claimed)
        : { outcome: GateOutcome.Dropped, reason: incident.reason };
    if (gate.outcome !== GateOutcome.Send)
      await store.settle(id, token, { state: GATE_STATE[gate.outcome], reason: gate.reason }, { now: clock() });
  } catch (error) {
    await noteCircuit(context, () => passage.failed(error));
    if (await releaseUnsent(context, claimed, token, error, onRetry)) return SendOutcome.Failed;
    throw error;
  }
  if (gate.outcome !== GateOutcome.Send) {
    if (gate.outcome === SendOutcome.Held) context.metrics.add(RelayMetric.HeldBack, 1, claimed.route);
    if (gate.outcome === SendOutcome.Parked) context.metrics.add(RelayMetric.Parked, 1, claimed.route);
    if (gate.outcome === SendOutcome.Dropped)
      context.metrics.add(gate.muted === true ? RelayMetric.Muted : RelayMetric.Dropped, 1, claimed.route);
    if (incident !== undefined) await noteNotSent(context, claimed, incident);
    logSend(context, claimed, gate.outcome.toUpperCase(), { reason: gate.reason });
    return gate.outcome;
  }

  let result: ServiceSendResult;
  try {
    await takeSendSlot(context, claimed.lane);
    result = await sendWithKeyRefresh(context, claimed);
  } catch (error) {
    await noteCircuit(context, () => passage.failed(error));
    await settleGateAfterFailure(context, gate, error);
    return settleFailure(context, claimed, token, error, onRetry);
  }

  // The SMS went out: from here on nothing may make it go out again. Every write below is
  // bookkeeping; a failure is logged, never thrown (a throw would make the caller report, and the
  // stream retry, a send that succeeded).
  const sent = await recordSent(context, claimed, token, result);
  const note = (what: string) => (error: unknown) =>
    logger.error(what, { id, route: claimed.route, error: errorName(error) });
  await Promise.all([
    settleGateAfterSend(context, claimed, gate, result),
    passage.answered().catch(note('SMS service circuit not updated')),
  ]);
  const { metrics } = context;
  metrics.add(RelayMetric.Sent, 1, claimed.route);
  // A redriven message waited for a person's decision, not for the relay: its wait is not the relay's latency.
  if (claimed.redrives === 0)
    metrics.add(RelayMetric.DeliveryLatency, context.clock().getTime() - Date.parse(claimed.createdAt), claimed.route);
  metrics.add(RelayMetric.Segments, claimed.segments * claimed.to.length, claimed.route);
  metrics.add(RelayMetric.CreditsSpent, result.deducted, claimed.route);
  metrics.add(RelayMetric.RemainingBalance, result.remainingBalance);
  logSend(context, sent ?? claimed, 'SENT', { credits: result.deducted, remainingBalance: result.remainingBalance });
  await observeBalance(context, { balance: result.remainingBalance }).catch(note('balance watch update failed'));
  return SendOutcome.Sent;
}

const GATE_STATE = {
  [SendOutcome.Held]: MessageState.Held,
  [SendOutcome.Parked]: MessageState.Parked,
  [SendOutcome.Dropped]: MessageState.Dropped,
} as const;

/** Pauses between attempts to store a send's result. */
const RECORD_SENT_DELAYS_MS = [0, 250, 1_000, 3_000] as const;

/**
 * Stores a send the service accepted as `SENT`. The stored answer is bounded by the store, so it
 * always fits; should the write still fail, the record is written `SENT` with the amounts alone,
 * retried a few times. Returns `undefined` when the claim was lost or every attempt failed (logged):
 * the SMS went out and nothing here may make it go out again.
 */
export async function recordSent(
  context: RelayContext<RelayConfigView, SenderStore>,
  record: MessageRecord,
  token: string,
  result: ServiceSendResult,
  attempt?: ProviderAttempt,
): Promise<MessageRecord | undefined> {
  const full: SendResult = {
    deducted: result.deducted,
    ...(Number.isFinite(result.remainingBalance) ? { remainingBalance: result.remainingBalance } : {}),
    message: result.message,
    senderId: result.senderId,
    recipients: result.recipients,
  };
  const amountsOnly: SendResult = {
    ...full,
    message: '',
    recipients: { omitted: 'the full answer could not be stored' },
  };
  for (const [tries, delayMs] of RECORD_SENT_DELAYS_MS.entries()) {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    try {
      return await context.store.settle(
        record.id,
        token,
        { state: MessageState.Sent, result: tries === 0 ? full : amountsOnly, ...attemptOf(attempt) },
        { now: context.clock() },
      );
    } catch (error) {
      if (error instanceof ClaimLostError) {
        context.logger.error('SMS sent, but its claim was taken over; the record keeps the other outcome', {
          id: record.id,
          route: record.route,
        });
        return undefined;
      }
      context.logger.error('SMS sent, but the result was not stored', {
        id: record.id,
        route: record.route,
        attempt: tries + 1,
        error: errorName(error),
      });
    }
  }
  return undefined;
}

async function sendWithKeyRefresh(
  context: RelayContext<RelayConfigView, SenderStore>,
  record: MessageRecord,
): Promise<ServiceSendResult> {
  const request = {
    phoneNumbers: record.to,
    message: record.text,
    ...(record.senderId === undefined ? {} : { senderId: record.senderId }),
  };
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

/** The settlement's `attempt` part: the provider of a send through the chain; nothing for the one-provider send. */
const attemptOf = (attempt: ProviderAttempt | undefined): { readonly attempt?: ProviderAttempt } =>
  attempt === undefined ? {} : { attempt };

/** The log fields of an attempt through the chain. */
export const attemptLog = (attempt: ProviderAttempt | undefined): Record<string, string> =>
  attempt === undefined
    ? {}
    : {
        provider: attempt.provider,
        ...(attempt.failoverFrom === undefined ? {} : { failoverFrom: attempt.failoverFrom }),
        ...(attempt.failoverReason === undefined ? {} : { failoverReason: attempt.failoverReason }),
      };

/** Where a failed send goes: back to waiting, or ended with its reason (its error added by `settleFailure`). */
type FailureOutcome =
  | { readonly state: typeof MessageState.Pending; readonly nextAttemptAt: Date }
  | {
      readonly state: typeof MessageState.Failed | typeof MessageState.Unknown | typeof MessageState.Parked;
      readonly reason: string;
    };

/**
 * Settles a send that failed by what the failure says (see `sendMessage`). `attempt`: the provider
 * it went to, for a send through the chain.
 */
export async function settleFailure(
  context: RelayContext<RelayConfigView, SenderStore>,
  record: MessageRecord,
  token: string,
  error: unknown,
  onRetry: SendMessageOptions['onRetry'],
  attempt?: ProviderAttempt,
): Promise<SendOutcome> {
  const { store, clock, metrics, policy } = context;
  const logged = attemptLog(attempt);
  // Any error that is not the client's counts as maybe-sent: nothing proves otherwise.
  const description = describeSmsError(error);
  const lastError: LastError = {
    name: description.name,
    ...(description.status === undefined ? {} : { status: description.status }),
    delivery: description.delivery,
    message:
      description.serviceError ??
      description.systemCode ??
      (error instanceof SmsServiceError ? error.message : description.name),
  };
  const now = clock();
  // Every outcome of a failure keeps its error and the provider it went to.
  const settleAs = async (outcome: FailureOutcome): Promise<void> => {
    await store.settle(record.id, token, { ...outcome, lastError, ...attemptOf(attempt) }, { now });
  };
  const retryAt = (nextAttemptAt: Date): SendOutcome => {
    logSend(context, record, 'RETRY', { error: description, nextAttemptAt: nextAttemptAt.toISOString(), ...logged });
    onRetry?.(nextAttemptAt, record.lane);
    return SendOutcome.Retrying;
  };

  if (description.code === SmsErrorCode.INSUFFICIENT_BALANCE) {
    await settleAs({ state: MessageState.Parked, reason: reasonText('insufficientBalance') });
    metrics.add(RelayMetric.Parked, 1, record.route);
    logSend(context, record, 'PARKED', { error: description, ...logged });
    await observeBalance(context, await balanceAfterRefusal(context)).catch((failure: unknown) => {
      context.logger.error('balance watch update failed', { error: errorName(failure) });
    });
    return SendOutcome.Parked;
  }

  if (error instanceof SmsServiceError && error.code === SmsErrorCode.RATE_LIMITED) {
    // Nothing was sent, on any route: again after the wait asked for, while the route's retry.for allows.
    if (now.getTime() < retryDeadline(context, record).getTime()) {
      const nextAttemptAt = new Date(now.getTime() + (error.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS));
      await settleAs({ state: MessageState.Pending, nextAttemptAt });
      return retryAt(nextAttemptAt);
    }
    const reason = `not sent: the SMS service kept answering 429 (too many requests) for the route's retry.for (${record.attempts} attempts)`;
    await settleAs({ state: MessageState.Failed, reason });
    metrics.add(RelayMetric.Failed, 1, record.route);
    logSend(context, record, 'FAILED', { error: description, ...logged });
    return SendOutcome.Failed;
  }

  const permanent = description.code === SmsErrorCode.BAD_REQUEST || description.code === SmsErrorCode.VALIDATION;
  const maySend = description.delivery === SendCertainty.MAYBE_SENT;
  const canRetry = !permanent && (!maySend || record.delivery === DeliveryPolicy.AtLeastOnce);

  if (canRetry && mayRetry(context, record, now)) {
    const nextAttemptAt = new Date(now.getTime() + backoffMs(policy, record.attempts));
    await settleAs({ state: MessageState.Pending, nextAttemptAt });
    return retryAt(nextAttemptAt);
  }

  if (maySend) {
    const reason =
      record.delivery === DeliveryPolicy.AtLeastOnce
        ? `may have been sent; still failing when its retry.for ran out (${record.attempts} attempts)`
        : 'may have been sent (at-most-once route: not retried)';
    await settleAs({ state: MessageState.Unknown, reason });
    metrics.add(RelayMetric.Unknown, 1, record.route);
    logSend(context, record, 'UNKNOWN', { error: description, ...logged });
    return SendOutcome.Unknown;
  }

  const reason = permanent
    ? `refused by the SMS service: ${lastError.message}`
    : `not sent after ${record.attempts} attempts: ${lastError.message}`;
  await settleAs({ state: MessageState.Failed, reason });
  metrics.add(RelayMetric.Failed, 1, record.route);
  logSend(context, record, 'FAILED', { error: description, ...logged });
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
export async function releaseUnsent(
  context: RelayContext<RelayConfigView, SenderStore>,
  record: MessageRecord,
  token: string,
  error: unknown,
  onRetry: SendMessageOptions['onRetry'],
): Promise<boolean> {
  const { store, clock, policy, metrics } = context;
  const now = clock();
  const lastError: LastError = {
    name: errorName(error),
    delivery: SendCertainty.NOT_SENT,
    message: failedBeforeSending(error),
  };
  const exhausted = !mayRetry(context, record, now);
  try {
    if (!exhausted) {
      const nextAttemptAt = new Date(now.getTime() + backoffMs(policy, record.attempts));
      await store.settle(record.id, token, { state: MessageState.Pending, nextAttemptAt, lastError }, { now });
      onRetry?.(nextAttemptAt, record.lane);
      return false;
    }
    await store.settle(
      record.id,
      token,
      {
        state: MessageState.Failed,
        reason: `not sent after ${record.attempts} attempts: ${lastError.message}`,
        lastError,
      },
      { now },
    );
  } catch (releaseError) {
    context.logger.error('claimed message not released; it is recovered once stale', {
      id: record.id,
      error: errorName(releaseError),
    });
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
export async function noteCircuit(
  context: RelayContext<RelayConfigView, SenderStore>,
  note: () => Promise<void>,
): Promise<void> {
  await note().catch((error: unknown) =>
    context.logger.error('SMS service circuit not updated', { error: errorName(error) }),
  );
}

/** What failed before the send, for the record: the balance read (with the service's answer), or the error's name. */
function failedBeforeSending(error: unknown): string {
  if (!(error instanceof SmsServiceError && error.operation === SmsOperation.BALANCE))
    return `failed before sending: ${errorName(error)}`;
  const { serviceError, systemCode, status } = describeSmsError(error);
  return `failed before sending: the balance could not be read (${serviceError ?? systemCode ?? (status === undefined ? error.code : `HTTP ${status}`)})`;
}

/**
 * The balance after a 402, for the low-balance notice: a 402 says only that the balance does not
 * cover this send, which may be well above zero. Taken as 0 when it cannot be read.
 */
async function balanceAfterRefusal(context: RelayContext<RelayConfigView, SenderStore>): Promise<BalanceReading> {
  try {
    const basis = await creditBasis(context);
    const { balance, currency, smsRate } = await (await context.sms.client()).getBalance({
      timeoutMs: BALANCE_LOOKUP_TIMEOUT_MS,
    });
    return { balance, currency, smsRate, ...(basis === undefined ? {} : { basis }) };
  } catch {
    return { balance: 0 };
  }
}

export function logSend(
  context: RelayContext<RelayConfigView, SenderStore>,
  record: MessageRecord,
  state: string,
  extra: Record<string, unknown>,
): void {
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

/** What the send through the provider chain settles and logs with, as `sendMessage` does. */
const CHAIN_SETTLING: ChainSettling = {
  recordSent,
  settleFailure,
  releaseUnsent,
  noteCircuit,
  logSend,
  attemptLog,
};
