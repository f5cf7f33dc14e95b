import type { RelayConfigView } from '../core/config/view';
import { DeliveryPolicy } from '../core/config/policies';
import {
  SendCertainty,
  SmsErrorCode,
  SmsOperation,
  SmsServiceError,
  type SendResult as ServiceSendResult,
} from '../core/provider';
import {
  NotSentReason,
  type NotSentOutcome,
  type MaybeSentOutcome,
  type SendOutcome as ProviderOutcome,
  shouldFailOver,
  type SmsProvider,
} from '../core/provider/outcome';
import { maskMsisdn } from '../core/recipients/mask';
import { MessageState, type MessageRecord, type ProviderAttempt } from '../store';
import { observeBalance } from './balance';
import { type CircuitPassage, enterCircuit } from './circuit';
import { checkBeforeSend, type Gate, GateOutcome, settleGateAfterFailure, settleGateAfterSend } from './credit-gate';
import { errorName } from './error-name';
import { closedIncident, noteNotSent } from './incident-sends';
import { type ProviderSource, RelayMetric, type RelayContext } from './ports';
import { providerScope } from './provider-scope';
import { takeSendSlot } from './provider-rate';
import { type SenderStore, type SendMessageOptions, SendOutcome } from './send-outcome';

/**
 * What the send through the chain shares with `sendMessage` (`sender.ts`), given by it: how a
 * sent, failed or unsent record is settled and logged, the same for one provider or several.
 */
export interface ChainSettling {
  readonly recordSent: (
    context: RelayContext<RelayConfigView, SenderStore>,
    record: MessageRecord,
    token: string,
    result: ServiceSendResult,
    attempt?: ProviderAttempt,
  ) => Promise<MessageRecord | undefined>;
  readonly settleFailure: (
    context: RelayContext<RelayConfigView, SenderStore>,
    record: MessageRecord,
    token: string,
    error: unknown,
    onRetry: SendMessageOptions['onRetry'],
    attempt?: ProviderAttempt,
  ) => Promise<SendOutcome>;
  readonly releaseUnsent: (
    context: RelayContext<RelayConfigView, SenderStore>,
    record: MessageRecord,
    token: string,
    error: unknown,
    onRetry: SendMessageOptions['onRetry'],
  ) => Promise<boolean>;
  readonly noteCircuit: (
    context: RelayContext<RelayConfigView, SenderStore>,
    note: () => Promise<void>,
  ) => Promise<void>;
  readonly logSend: (
    context: RelayContext<RelayConfigView, SenderStore>,
    record: MessageRecord,
    state: string,
    extra: Record<string, unknown>,
  ) => void;
  readonly attemptLog: (attempt: ProviderAttempt | undefined) => Record<string, string>;
}

/** A gate's refusal as the record's state. */
const GATE_STATE = {
  [GateOutcome.Held]: MessageState.Held,
  [GateOutcome.Parked]: MessageState.Parked,
  [GateOutcome.Dropped]: MessageState.Dropped,
} as const;

/**
 * The send of one record through its provider chain (docs/providers.md, "Outcomes and failover"):
 * the providers `routing.providersFor` gives its numbers, each with its own circuit, credit gate
 * and rate slot. A provider whose circuit is open, whose reserve is reached, or that certainly did
 * not send for a reason `failover.on` names, passes the send to the next; a send that may have gone
 * out is never sent by another provider for an at-most-once record (its retry on an at-least-once
 * record starts at the next provider); a number's or a message's refusal ends FAILED.
 *
 * A record's numbers are sent one at a time (every provider but the SMS service answers per
 * number): a number certainly not sent moves on with the numbers after it, so a provider that
 * sent some keeps them sent. Should numbers be left unsent once some went out, the record ends
 * FAILED (UNKNOWN when one may have gone out) naming how many were sent, and is not retried:
 * nothing it sent is sent twice.
 */
export async function sendThroughChain(
  context: RelayContext<RelayConfigView, SenderStore>,
  providers: ProviderSource,
  id: string,
  onRetry: SendMessageOptions['onRetry'],
  settling: ChainSettling,
): Promise<SendOutcome> {
  const { settleFailure, releaseUnsent, noteCircuit, logSend } = settling;
  const { store, clock } = context;
  const waiting = await store.getMessage(id);
  if (waiting === undefined || waiting.state !== MessageState.Pending) return SendOutcome.Skipped;
  const { chain, from } = chainOf(providers, waiting);

  // The first provider whose circuit lets the send through: with every circuit open the record
  // stays PENDING, untouched, as with one provider.
  const steps: Step[] = from === 0 ? [] : [{ provider: chain[0]!, reason: MAYBE_SENT_BEFORE }];
  let entered: Entered | undefined;
  for (const name of chain.slice(from)) {
    entered = await enter(context, providers, name, id);
    if (entered !== undefined) break;
    steps.push({ provider: name, reason: 'circuit-open' });
  }
  if (entered === undefined) return chain.length === 0 ? await noProvider(context, id, settling) : SendOutcome.Waiting;
  const start = entered;

  const claimed = await store.claimMessage(id, { now: clock() });
  if (claimed === undefined) {
    await noteCircuit(context, () => start.passage.release());
    return SendOutcome.Skipped;
  }
  const token = claimed.claimToken!;
  const incident = await closedIncident(store, claimed).catch(async (error: unknown) => {
    await noteCircuit(context, () => start.passage.release());
    if (await releaseUnsent(context, claimed, token, error, onRetry)) return 'failed' as const;
    throw error;
  });
  if (incident === 'failed') return SendOutcome.Failed;
  if (incident !== undefined) {
    await noteCircuit(context, () => start.passage.release());
    await store.settle(id, token, { state: MessageState.Dropped, reason: incident.reason }, { now: clock() });
    context.metrics.add(RelayMetric.Dropped, 1, claimed.route);
    await noteNotSent(context, claimed, incident);
    logSend(context, claimed, 'DROPPED', { reason: incident.reason });
    return SendOutcome.Dropped;
  }

  const senderId = context.config.routes.get(claimed.route)?.config.senderId;
  let remaining = claimed.to.map(e164Of);
  const sent: SentNumber[] = [];
  let failure: { readonly outcome: NotSentOutcome | MaybeSentOutcome; readonly at: Entered } | undefined;

  for (let index = chain.indexOf(entered.provider.name); index < chain.length; index += 1) {
    const name = chain[index]!;
    const here = entered?.provider.name === name ? entered : await enter(context, providers, name, id);
    entered = undefined;
    if (here === undefined) {
      steps.push({ provider: name, reason: 'circuit-open' });
      continue;
    }
    const attempt = attemptOf(chain, here.provider.name, steps);
    let gate: Gate;
    try {
      gate = await checkBeforeSend(here.scope, claimed);
    } catch (error) {
      await noteCircuit(context, () => here.passage.failed(error));
      if (await releaseUnsent(context, claimed, token, error, onRetry)) return SendOutcome.Failed;
      throw error;
    }
    if (gate.outcome === GateOutcome.Parked && index < chain.length - 1 && sent.length === 0) {
      // The reserve kept on this provider is another provider's to spend.
      await noteCircuit(context, () => here.passage.release());
      steps.push({ provider: name, reason: 'reserve' });
      continue;
    }
    if (gate.outcome !== GateOutcome.Send) {
      await noteCircuit(context, () => here.passage.release());
      return await settleGate(context, claimed, token, gate, attempt, settling);
    }

    const answered = await sendNumbers(here, remaining, claimed, senderId, providers);
    sent.push(...answered.sent.map((number) => ({ ...number, attempt })));
    remaining = remaining.slice(answered.sent.length);
    if (answered.failure === undefined) {
      await Promise.all([
        noteCircuit(context, () => here.passage.answered()),
        settleGateAfterSend(here.scope, claimed, gate, resultOf(answered.sent)),
      ]);
      return await finishSent(context, claimed, token, sent, attempt, settling);
    }
    const error = errorOf(answered.failure);
    if (answered.sent.length > 0) {
      await Promise.all([
        noteCircuit(context, () => here.passage.answered()),
        settleGateAfterSend(here.scope, claimed, gate, resultOf(answered.sent)),
      ]);
    } else {
      await noteCircuit(context, () => here.passage.failed(error));
      await settleGateAfterFailure(here.scope, gate, error);
    }
    failure = { outcome: answered.failure, at: here };
    if (!shouldFailOver(answered.failure, providers.routing.failoverOn)) break;
    steps.push({ provider: name, reason: (answered.failure as NotSentOutcome).reason });
  }

  if (failure === undefined) {
    // Every provider after the first attempt's had its circuit open: nothing was sent, the record waits.
    return await settleFailure(
      context,
      claimed,
      token,
      circuitOpenError(),
      onRetry,
      attemptOf(chain, chain.at(-1)!, steps),
    );
  }
  const attempt = attemptOf(chain, failure.at.provider.name, steps);
  if (sent.length > 0)
    return await settlePartly(context, claimed, token, sent, remaining, failure.outcome, attempt, settling);
  return await settleFailure(failure.at.scope, claimed, token, errorOf(failure.outcome), onRetry, attempt);
}

interface Entered {
  readonly provider: SmsProvider;
  readonly scope: RelayContext<RelayConfigView, SenderStore>;
  readonly passage: CircuitPassage;
}

/** One provider passed over, and why: a `failover.on` reason, `circuit-open` or `reserve`. */
interface Step {
  readonly provider: string;
  readonly reason: string;
}

interface SentNumber {
  readonly to: string;
  readonly provider: string;
  readonly outcome: Extract<ProviderOutcome, { status: 'sent' }>;
  readonly attempt?: ProviderAttempt;
}

/** A record's numbers as E.164: the store keeps them as digits with their country code. */
function e164Of(number: string): string {
  return number.startsWith('+') ? number : `+${number}`;
}

/**
 * Why an at-least-once retry starts after the provider of its last attempt: that attempt may have
 * gone out (a time-out, a 5xx), which no not-sent reason names.
 */
const MAYBE_SENT_BEFORE = 'maybe-sent';

/**
 * The providers of a record: those its first number goes to that every other number goes to too,
 * in the first number's order; `from`, where this attempt starts: after the provider of the last
 * attempt when that one may have gone out on an at-least-once record (its retry "may go to the
 * next provider"), else at the first.
 */
function chainOf(
  providers: ProviderSource,
  record: MessageRecord,
): { readonly chain: readonly string[]; readonly from: number } {
  const [first, ...others] = record.to.map((number) => providers.routing.providersFor(e164Of(number)));
  const shared = (first ?? []).filter((name) => others.every((list) => list.includes(name)));
  const after = shared.indexOf(record.provider ?? '');
  const retryAfterMaybe =
    record.delivery === DeliveryPolicy.AtLeastOnce &&
    record.lastError?.delivery === SendCertainty.MAYBE_SENT &&
    after >= 0 &&
    after < shared.length - 1;
  return { chain: shared, from: retryAfterMaybe ? after + 1 : 0 };
}

async function enter(
  context: RelayContext<RelayConfigView, SenderStore>,
  providers: ProviderSource,
  name: string,
  id: string,
): Promise<Entered | undefined> {
  let provider: SmsProvider;
  try {
    provider = await providers.get(name);
  } catch (error) {
    // A provider that cannot be created (its key missing from the secret) is passed over, as unreachable.
    context.logger.error('provider not created', { provider: name, error: errorName(error) });
    return undefined;
  }
  const scope = providerScope(context, provider);
  const passage = await enterCircuit(scope, id);
  return passage === undefined ? undefined : { provider, scope, passage };
}

/** The attempt's provider and, when it is not the chain's first, from which and why the send moved on. */
function attemptOf(chain: readonly string[], provider: string, steps: readonly Step[]): ProviderAttempt {
  const first = chain[0];
  if (first === undefined || provider === first || steps.length === 0) return { provider };
  return { provider, failoverFrom: first, failoverReason: steps[0]!.reason };
}

/** Sends the numbers one at a time until one is not sent; a refused key is read again once. */
async function sendNumbers(
  here: Entered,
  numbers: readonly string[],
  record: MessageRecord,
  senderId: string | undefined,
  providers: ProviderSource,
): Promise<{ readonly sent: Omit<SentNumber, 'attempt'>[]; readonly failure?: NotSentOutcome | MaybeSentOutcome }> {
  const sent: Omit<SentNumber, 'attempt'>[] = [];
  let provider = here.provider;
  for (const to of numbers) {
    try {
      await takeSendSlot(here.scope, record.lane);
    } catch (error) {
      const detail = error instanceof Error ? error.message : errorName(error);
      return { sent, failure: { status: 'not-sent', reason: NotSentReason.RateLimited, detail } };
    }
    const sms = { to, text: record.text, ...(senderId === undefined ? {} : { senderId }) };
    let outcome = await provider.send(sms);
    if (outcome.status === 'not-sent' && outcome.reason === NotSentReason.RefusedKey) {
      // The key may have been rotated since the provider was built.
      const fresh = await providers.refresh(provider.name).catch(() => provider);
      if (fresh !== provider) outcome = await (provider = fresh).send(sms);
    }
    if (outcome.status !== 'sent') return { sent, failure: outcome };
    sent.push({ to, provider: provider.name, outcome });
  }
  return { sent };
}

const CODE_OF_REASON = {
  [NotSentReason.Unreachable]: SmsErrorCode.NETWORK,
  [NotSentReason.RefusedKey]: SmsErrorCode.UNAUTHORIZED,
  [NotSentReason.InsufficientCredit]: SmsErrorCode.INSUFFICIENT_BALANCE,
  [NotSentReason.RateLimited]: SmsErrorCode.RATE_LIMITED,
  [NotSentReason.InvalidNumber]: SmsErrorCode.BAD_REQUEST,
  [NotSentReason.Rejected]: SmsErrorCode.BAD_REQUEST,
} as const;

/**
 * A provider's outcome as the SMS client's error, so the circuit, the credit gate and the settling
 * of a failure read it as they read the SMS service's: a not-sent reason by its code, maybe-sent
 * as an answer that cannot be read.
 */
function errorOf(outcome: NotSentOutcome | MaybeSentOutcome): SmsServiceError {
  if (outcome.status === SendCertainty.MAYBE_SENT)
    return new SmsServiceError(outcome.detail, {
      operation: SmsOperation.SEND,
      code: outcome.code ?? SmsErrorCode.UNEXPECTED_ANSWER,
      delivery: SendCertainty.MAYBE_SENT,
    });
  return new SmsServiceError(outcome.detail, {
    operation: SmsOperation.SEND,
    code: CODE_OF_REASON[outcome.reason],
    delivery: SendCertainty.NOT_SENT,
    ...(outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs }),
  });
}

function circuitOpenError(): SmsServiceError {
  return new SmsServiceError('every provider of the chain is unreachable (circuit open)', {
    operation: SmsOperation.SEND,
    code: SmsErrorCode.NETWORK,
    delivery: SendCertainty.NOT_SENT,
  });
}

/** The sends' answers as the SMS service's, for the credit bookkeeping and the record. */
function resultOf(sent: readonly Omit<SentNumber, 'attempt'>[]): ServiceSendResult {
  const last = sent.at(-1)?.outcome;
  return {
    success: true,
    message: '',
    senderId: '',
    recipients: sent.map(({ to, provider, outcome }) => ({
      number: maskMsisdn(to.slice(1)),
      provider,
      ...(outcome.messageId === undefined ? {} : { messageId: outcome.messageId }),
      ...(outcome.cost === undefined ? {} : { cost: outcome.cost }),
    })),
    deducted: sent.reduce((sum, { outcome }) => sum + (outcome.cost?.amount ?? 0), 0),
    remainingBalance: last?.remainingBalance ?? Number.NaN,
  };
}

async function finishSent(
  context: RelayContext<RelayConfigView, SenderStore>,
  record: MessageRecord,
  token: string,
  sent: readonly SentNumber[],
  attempt: ProviderAttempt,
  settling: ChainSettling,
): Promise<SendOutcome> {
  const { recordSent, logSend, attemptLog } = settling;
  const result = resultOf(sent);
  const stored = await recordSent(context, record, token, result, attempt);
  const scope = providerScope(context, await context.providers!.get(attempt.provider));
  const { metrics } = scope;
  metrics.add(RelayMetric.Sent, 1, record.route);
  if (record.redrives === 0)
    metrics.add(RelayMetric.DeliveryLatency, context.clock().getTime() - Date.parse(record.createdAt), record.route);
  metrics.add(RelayMetric.Segments, record.segments * record.to.length, record.route);
  metrics.add(RelayMetric.CreditsSpent, result.deducted, record.route);
  const balance = Number.isFinite(result.remainingBalance) ? { remainingBalance: result.remainingBalance } : {};
  if (Number.isFinite(result.remainingBalance)) metrics.add(RelayMetric.RemainingBalance, result.remainingBalance);
  logSend(context, stored ?? record, 'SENT', { credits: result.deducted, ...balance, ...attemptLog(attempt) });
  if (Number.isFinite(result.remainingBalance)) {
    await observeBalance(scope, { balance: result.remainingBalance }).catch((error: unknown) =>
      context.logger.error('balance watch update failed', { id: record.id, error: errorName(error) }),
    );
  }
  return SendOutcome.Sent;
}

/** Some numbers went out, the rest did not: ended without a retry, so nothing sent is sent again. */
async function settlePartly(
  context: RelayContext<RelayConfigView, SenderStore>,
  record: MessageRecord,
  token: string,
  sent: readonly SentNumber[],
  remaining: readonly string[],
  outcome: NotSentOutcome | MaybeSentOutcome,
  attempt: ProviderAttempt,
  settling: ChainSettling,
): Promise<SendOutcome> {
  const { logSend, attemptLog } = settling;
  const maybe = outcome.status === SendCertainty.MAYBE_SENT;
  const state = maybe ? MessageState.Unknown : MessageState.Failed;
  const unsent = remaining.map((number) => maskMsisdn(number.slice(1))).join(', ');
  const reason = `sent to ${sent.length} of ${record.to.length} numbers; ${maybe ? 'may have been sent' : 'not sent'} to ${unsent}: ${outcome.detail} (not retried: the numbers sent would be sent again)`;
  const lastError = { name: 'SmsServiceError', delivery: outcome.status, message: outcome.detail };
  await context.store.settle(record.id, token, { state, reason, lastError, attempt }, { now: context.clock() });
  context.metrics.add(maybe ? RelayMetric.Unknown : RelayMetric.Failed, 1, record.route, attempt.provider);
  logSend(context, record, state, { reason, ...attemptLog(attempt) });
  return maybe ? SendOutcome.Unknown : SendOutcome.Failed;
}

/** A record whose numbers no provider shares: claimed and DROPPED, naming the first number. */
async function noProvider(
  context: RelayContext<RelayConfigView, SenderStore>,
  id: string,
  settling: ChainSettling,
): Promise<SendOutcome> {
  const { logSend } = settling;
  const claimed = await context.store.claimMessage(id, { now: context.clock() });
  if (claimed === undefined) return SendOutcome.Skipped;
  const first = claimed.to[0] === undefined ? '' : ` for +${maskMsisdn(claimed.to[0])}`;
  const reason = `no provider${first}`;
  await context.store.settle(
    id,
    claimed.claimToken!,
    { state: MessageState.Dropped, reason },
    { now: context.clock() },
  );
  context.metrics.add(RelayMetric.Dropped, 1, claimed.route);
  logSend(context, claimed, 'DROPPED', { reason });
  return SendOutcome.Dropped;
}

/** A gate that did not let the send go (held, parked, dropped), as `sendMessage` settles it. */
async function settleGate(
  context: RelayContext<RelayConfigView, SenderStore>,
  record: MessageRecord,
  token: string,
  gate: Exclude<Gate, { outcome: typeof GateOutcome.Send }>,
  attempt: ProviderAttempt,
  settling: ChainSettling,
): Promise<SendOutcome> {
  const { logSend, attemptLog } = settling;
  await context.store.settle(
    record.id,
    token,
    { state: GATE_STATE[gate.outcome], reason: gate.reason, attempt },
    { now: context.clock() },
  );
  if (gate.outcome === GateOutcome.Held) context.metrics.add(RelayMetric.HeldBack, 1, record.route);
  if (gate.outcome === GateOutcome.Parked) context.metrics.add(RelayMetric.Parked, 1, record.route);
  if (gate.outcome === GateOutcome.Dropped)
    context.metrics.add(gate.muted === true ? RelayMetric.Muted : RelayMetric.Dropped, 1, record.route);
  logSend(context, record, gate.outcome.toUpperCase(), { reason: gate.reason, ...attemptLog(attempt) });
  return gate.outcome;
}
