import { MAX_BODY_BYTES } from '../core/defaults';
import { type Lane, laneOf } from '../core/lanes';
import type { RoutePriority } from '../core/config/policies';
import { maskNumbersInText } from '../core/recipients/mask-text';
import { evaluateWebhook, type Evaluation } from '../core/pipeline/evaluate';
import { Verdict } from '../core/pipeline/verdict';
import { capturedHeaderNames } from '../core/sources/captured-headers';
import { authenticatingSecret, previousSecretName } from '../core/sources/rotation';
import { secretProblem } from '../core/sources/secret-check';
import type { CompiledRoute, LoadedConfig } from '../core/config/compile';
import type { InboundWebhook, Prefetched, SourceFetch } from '../core/sources/types';
import { defaultSourceFetch } from './https-get';
import { type HeartbeatStore, touchHeartbeat } from './heartbeat';
import { mutedReason } from './mutes';
import {
  AcceptOutcome,
  type AcceptResult,
  MAX_RECORDS_PER_WEBHOOK,
  MessageState,
  type MessageStore,
  type NewMessage,
} from '../store';
import { RelayMetric, type RelayContext } from './ports';
import type { Deferral } from '../core/windows';
import { deferralOf, type DigestStore } from './digest';
import { overridesFor } from './oncall';
import {
  discardOpenedIncident,
  droppedMessage,
  pageIncident,
  type PagingStore,
  toNewMessage,
  type PagedEvaluation,
} from './paging';

/** What `ingestWebhook` uses of the store: the accept and the capture, and what its digests, heartbeats and paging use. */
export type IngestStore = Pick<MessageStore, 'acceptWebhook' | 'capturePayload' | 'getMute' | 'activeOverrides'> &
  DigestStore &
  HeartbeatStore &
  PagingStore;

export interface IngestRequest extends InboundWebhook {
  readonly routeId: string;
}

/** What the sender is told, and what the relay did, for each way an accept can end. */
interface Answer<O extends string, S extends number> {
  readonly outcome: O;
  readonly status: S;
  /** The records written (none for a ping or a refusal). */
  readonly ids: readonly string[];
  /** Each id's lane, in the order of `ids` (what the local send queue needs; the records carry it too). */
  readonly lanes?: readonly Lane[];
  /** Why it was not accepted, when the relay can say (the failed check, the filter, the ping). */
  readonly reason?: string | undefined;
  /** The JSON answer body, exactly as the sender gets it (a public contract). */
  readonly body: Readonly<Record<string, unknown>>;
}

/**
 * The typed answer of `ingestWebhook`, discriminated by `outcome`: `accepted` (202, ids to send),
 * `duplicate` (200, the first accept's ids), `filtered` / `dropped` (200, DROPPED records with the
 * reason), `ping` (200, nothing recorded) or `refused` (4xx/5xx with the error and, for a failed
 * authentication, its reason).
 */
export type IngestAnswer =
  | Answer<'accepted', 202>
  | Answer<'duplicate', 200>
  | (Answer<'filtered' | 'dropped', 200> & { readonly reason: string | undefined })
  | (Answer<'ping', 200> & { readonly reason: string | undefined })
  | (Answer<'refused', number> & { readonly error: string | undefined; readonly reason: string | undefined });

/** @deprecated the old name of `IngestAnswer`. */
export type IngestResponse = IngestAnswer;

export interface IngestOptions {
  /** @default {@link MAX_BODY_BYTES} */
  readonly maxBodyBytes?: number;
}

/**
 * Accepts one webhook: authenticate, parse, dedupe, filter and render with the core, then record
 * the messages behind a conditional dedupe guard. The answer comes only after the records are
 * written: 202 with the record ids; 200 for a duplicate, a filtered webhook, a ping or one with
 * nothing to send; 4xx for what the sender must fix. A failure while recording throws (the handler
 * answers 503): the sender's retry then records the webhook once, completing a half-done accept.
 *
 * @example
 * ```ts
 * const { status, body } = await ingestWebhook(context, { routeId: 'alerts', body, headers, query: {}, receivedAt: new Date() });
 * ```
 */
export async function ingestWebhook(
  context: RelayContext<LoadedConfig, IngestStore>,
  request: IngestRequest,
  { maxBodyBytes = MAX_BODY_BYTES }: IngestOptions = {},
): Promise<IngestAnswer> {
  const route = context.config.routes.get(request.routeId);
  if (route === undefined) return refused(404, `unknown route "${request.routeId}"`);
  const flow: IngestFlow = { context, request, route, maxBodyBytes, log: { route: route.id, source: route.pack.name } };
  for (const step of Object.values(INGEST_STEPS)) {
    const answer = await step(flow);
    if (answer !== undefined) return answer;
  }
  throw new Error('ingest: no step answered'); // `answer`, the last step, always does
}

/** One webhook on its way through ingest: its route, and what each step found for the steps after it. */
interface IngestFlow {
  readonly context: RelayContext<LoadedConfig, IngestStore>;
  readonly request: IngestRequest;
  readonly route: CompiledRoute;
  readonly maxBodyBytes: number;
  /** The fields of every log line about this webhook. */
  log: Record<string, unknown>;
  secret?: string;
  prefetched?: Prefetched | undefined;
  evaluation?: PagedEvaluation;
  muted?: string | undefined;
  deferral?: Deferral | undefined;
  messages?: NewMessage[];
  result?: AcceptResult;
}

/** A step of ingest: an answer ends the webhook's way (a refusal, a ping, the final answer); `undefined` goes on. */
type IngestStep = (flow: IngestFlow) => Promise<IngestAnswer | undefined>;

/** What an earlier step found; a step run out of order is a bug, not a webhook's fault. */
function known<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`ingest: ${what} is not known before its step`);
  return value;
}

/**
 * A webhook's way through the relay, in order: each step a function with one job. A step that
 * answers ends the way; the webhook is acknowledged only by `answer`, after `record` wrote it.
 */
export const INGEST_STEPS = {
  'body size': checkSize,
  'route secret': readRouteSecret,
  prefetch,
  evaluate,
  'refusals and pings': answerRefusalOrPing,
  'subscription confirmation': confirmSubscription,
  'mute and heartbeat': readMuteAndTouchHeartbeat,
  'quiet hours and digests': deferIfWindowed,
  paging: judgeIncident,
  record,
  answer,
} as const satisfies Record<string, IngestStep>;

/** A body over the limit is refused (413) before anything is read from it. */
async function checkSize({ context, request, route, maxBodyBytes }: IngestFlow): Promise<IngestAnswer | undefined> {
  if (request.body.byteLength <= maxBodyBytes) return undefined;
  context.metrics.add(RelayMetric.Rejected, 1, route.id);
  return refused(413, `body of ${request.body.byteLength} bytes exceeds the limit of ${maxBodyBytes}`);
}

/** The route's secret, refused loudly (500) when missing or unusable rather than answering 401 to every genuine sender. */
async function readRouteSecret(flow: IngestFlow): Promise<IngestAnswer | undefined> {
  const { context, route } = flow;
  const secret = await context.secrets.get(route.config.secret);
  const problem = secret === undefined ? undefined : secretProblem(route.pack, secret);
  if (secret !== undefined && problem === undefined) {
    flow.secret = secret;
    return undefined;
  }
  const message =
    secret === undefined
      ? 'route secret missing from the environment secret'
      : 'route secret can never authenticate this route';
  context.logger.error(message, {
    route: route.id,
    secretName: route.config.secret,
    ...(problem === undefined ? {} : { problem }),
  });
  context.metrics.add(RelayMetric.RouteMisconfigured, 1, route.id);
  return refused(500, 'the relay is misconfigured for this route; nothing was recorded');
}

/** The one asynchronous step a pack may need before the pure evaluation (SNS: its signing certificate); 503 when not yet reachable. */
async function prefetch(flow: IngestFlow): Promise<IngestAnswer | undefined> {
  const { context, request, route } = flow;
  if (route.pack.prefetch === undefined) return undefined;
  flow.prefetched = await route.pack.prefetch(request, context.fetch ?? defaultSourceFetch, {
    secret: known(flow.secret, 'the secret'),
    toleranceSeconds: route.config.toleranceSeconds,
    route: route.config,
  });
  if (flow.prefetched.unavailable === undefined) return undefined;
  context.logger.warn('webhook not verifiable yet', {
    route: route.id,
    source: route.pack.name,
    reason: flow.prefetched.unavailable,
  });
  return refused(503, `${flow.prefetched.unavailable}; nothing was recorded, retry later`);
}

/**
 * Authenticates (during a rotation the previous secret too, see rotation.ts) and evaluates with the
 * core; `oncall:` recipients are evaluated again only when an override is in force.
 */
async function evaluate(flow: IngestFlow): Promise<undefined> {
  const { context, request, route, prefetched } = flow;
  const documents = prefetched === undefined ? {} : { documents: prefetched.documents };
  const rotated = authenticatingSecret(
    route.pack,
    request,
    { toleranceSeconds: route.config.toleranceSeconds, route: route.config, ...documents },
    known(flow.secret, 'the secret'),
    await context.secrets.get(previousSecretName(route.config.secret)),
  );
  if (rotated.previous)
    context.logger.info('webhook authenticated with the previous route secret', {
      route: route.id,
      secretName: previousSecretName(route.config.secret),
    });
  const options = { secret: rotated.secret, ...documents };
  let evaluation: PagedEvaluation = evaluateWebhook(route, request, options);
  if (evaluation.verdict === Verdict.Send) {
    // Read only for an authenticated webhook that sends.
    // The schedules the webhook named itself (Opsgenie's responders) when it named any, else the route's.
    const overrides = await overridesFor(
      context.store,
      { recipients: evaluation.recipients ?? route.recipients },
      request.receivedAt,
    );
    if (overrides.length > 0) evaluation = evaluateWebhook(route, request, { ...options, overrides });
  }
  flow.evaluation = evaluation;
  flow.log = { ...flow.log, verdict: evaluation.verdict };
  return undefined;
}

/** A failed authentication (401) or an unreadable body (400) is refused; a ping is answered 200 and touches the heartbeat. */
async function answerRefusalOrPing(flow: IngestFlow): Promise<IngestAnswer | undefined> {
  const { context, request, route, log } = flow;
  const evaluation = known(flow.evaluation, 'the evaluation');
  switch (evaluation.verdict) {
    case Verdict.Unauthorized:
      context.logger.warn('webhook refused', { ...log, reason: evaluation.reason });
      // Per route, so a sender with the wrong secret shows as a sustained run on its own route.
      context.metrics.add(RelayMetric.Rejected, 1, route.id);
      return refused(401, 'unauthorized', evaluation.reason);
    case Verdict.BadRequest:
      context.logger.warn('webhook refused', { ...log, reason: evaluation.reason });
      context.metrics.add(RelayMetric.Rejected, 1, route.id);
      return refused(400, evaluation.reason);
    case Verdict.Ping:
      await touchHeartbeat(context, route, request.receivedAt);
      await capture(context, request, []);
      context.logger.info('webhook ping', { ...log, reason: evaluation.reason });
      return {
        outcome: 'ping',
        status: 200,
        ids: [],
        reason: evaluation.reason,
        body: { status: 'ping', reason: evaluation.reason },
      };
    default:
      return undefined;
  }
}

/**
 * A control message the sender needs acted on (an SNS subscription to confirm), acted on before
 * recording, so a failure records nothing (503) and the sender's retry tries again.
 */
async function confirmSubscription({ context, log, evaluation }: IngestFlow): Promise<IngestAnswer | undefined> {
  const url = known(evaluation, 'the evaluation').confirmUrl;
  if (url === undefined) return undefined;
  const failed = await confirm(context.fetch ?? defaultSourceFetch, url);
  if (failed === undefined) return undefined;
  context.logger.warn('webhook confirmation failed', { ...log, reason: failed });
  return refused(503, `${failed}; nothing was recorded, retry later`);
}

/**
 * Authenticated: the route's dead-man's switch hears from it, whatever becomes of the webhook. The
 * route's mute is read beside it: a muted route's messages are recorded DROPPED with its reason.
 */
async function readMuteAndTouchHeartbeat(flow: IngestFlow): Promise<undefined> {
  const { context, request, route } = flow;
  const sends = known(flow.evaluation, 'the evaluation').verdict === Verdict.Send;
  const [mute] = await Promise.all([
    sends ? context.store.getMute({ route: route.id, now: request.receivedAt }) : undefined,
    touchHeartbeat(context, route, request.receivedAt),
  ]);
  flow.muted = mute === undefined ? undefined : mutedReason(route, mute, request.receivedAt);
  return undefined;
}

/** Quiet hours or a digest window: the SMS are recorded DEFERRED for the route's digest (a muted route's are dropped and open no window). */
async function deferIfWindowed(flow: IngestFlow): Promise<undefined> {
  const evaluation = known(flow.evaluation, 'the evaluation');
  if (flow.muted === undefined && evaluation.verdict === Verdict.Send && evaluation.messages.length > 0)
    flow.deferral = await deferralOf(flow.context, flow.route, flow.request.receivedAt);
  return undefined;
}

/**
 * Paging: a resolved webhook closes its incident even when the route's filter drops it or its text
 * renders empty (the incident is judged before the SMS text); a muted route, quiet hours or a
 * digest window open no incident.
 */
async function judgeIncident(flow: IngestFlow): Promise<undefined> {
  const evaluation = known(flow.evaluation, 'the evaluation');
  if (flow.route.paging === undefined || !judgesIncident(evaluation)) return undefined;
  flow.evaluation = await pageIncident(flow.context, flow.route, flow.request, evaluation, {
    mayOpen: flow.muted === undefined && flow.deferral === undefined,
  });
  return undefined;
}

/** Writes the records behind the dedupe guard (durably, before any answer), then keeps the payload when the route captures. */
async function record(flow: IngestFlow): Promise<undefined> {
  const { context, request, route } = flow;
  const evaluation = known(flow.evaluation, 'the evaluation');
  flow.messages = newMessages(evaluation, route.config.delivery, { muted: flow.muted, deferral: flow.deferral });
  flow.result = await context.store.acceptWebhook({
    route: route.id,
    dedupeKey: evaluation.dedupeKey!,
    ...(evaluation.replayKey === undefined ? {} : { replayKey: evaluation.replayKey }),
    windowSeconds: evaluation.dedupeWindowSeconds!,
    messages: flow.messages,
    priority: route.config.priority,
    now: request.receivedAt,
    retentionDays: context.config.settings.retentionDays,
  });
  await capture(context, request, flow.result.ids);
  for (const drop of evaluation.dropped) {
    context.logger.warn('recipient dropped', {
      route: route.id,
      entry: maskNumbersInText(drop.entry),
      reason: drop.reason,
    });
  }
  return undefined;
}

/** The answer for what was recorded: a duplicate (200), a muted route (200), accepted (202), or filtered or dropped (200). */
async function answer(flow: IngestFlow): Promise<IngestAnswer> {
  const { context, request, route, log, muted, deferral } = flow;
  const { logger, metrics } = context;
  const evaluation = known(flow.evaluation, 'the evaluation');
  const result = known(flow.result, 'the accept');
  const messages = known(flow.messages, 'the records');
  if (result.outcome === AcceptOutcome.Duplicate) {
    await discardOpenedIncident(context, evaluation, result.ids, request.receivedAt);
    metrics.add(RelayMetric.Duplicates, 1, route.id);
    logger.info('webhook duplicate', {
      ...log,
      verdict: 'duplicate',
      dedupeKey: evaluation.dedupeKey,
      ids: result.ids,
    });
    return {
      outcome: 'duplicate',
      status: 200,
      ids: result.ids,
      lanes: lanesOf(result.ids, messages, route.config.priority),
      body: { status: 'duplicate', ids: result.ids },
    };
  }

  if (muted !== undefined) {
    // A planned mute is not a fault: its own count, so Dropped-<route> does not fire for it.
    metrics.add(RelayMetric.Muted, 1, route.id);
    logger.info('webhook dropped', { ...log, verdict: 'dropped', reason: muted, ids: result.ids });
    return {
      outcome: 'dropped',
      status: 200,
      ids: result.ids,
      reason: muted,
      body: { status: 'dropped', reason: muted, ids: result.ids },
    };
  }

  if (evaluation.verdict === Verdict.Send) {
    const deferredUntil = deferral === undefined ? {} : { deferredUntil: deferral.until.toISOString() };
    metrics.add(RelayMetric.Accepted, evaluation.messages.length, route.id);
    if (deferral !== undefined) metrics.add(RelayMetric.Deferred, evaluation.messages.length, route.id);
    logger.info('webhook accepted', {
      ...log,
      ids: result.ids,
      messages: evaluation.messages.map((message) => ({
        to: message.to.map(maskNumbersInText),
        segments: message.segments,
        encoding: message.encoding,
      })),
      warnings: evaluation.warnings,
      ...deferredUntil,
    });
    const ids = result.ids.slice(0, evaluation.messages.length);
    return {
      outcome: 'accepted',
      status: 202,
      ids,
      lanes: lanesOf(ids, messages, route.config.priority),
      body: {
        status: 'accepted',
        ids,
        ...deferredUntil,
        ...skippedSummary(evaluation),
        ...notSentSummary(evaluation, result.ids),
      },
    };
  }

  metrics.add(evaluation.verdict === Verdict.Filtered ? RelayMetric.Filtered : RelayMetric.Dropped, 1, route.id);
  logger.info(`webhook ${evaluation.verdict}`, { ...log, reason: evaluation.reason, ids: result.ids });
  const outcome = evaluation.verdict === Verdict.Filtered ? 'filtered' : 'dropped';
  return {
    outcome,
    status: 200,
    ids: result.ids,
    reason: evaluation.reason,
    body: { status: evaluation.verdict, reason: evaluation.reason, ids: result.ids },
  };
}

/**
 * The records to write: one PENDING record per SMS (DROPPED with the mute's reason on a muted
 * route; DEFERRED to the end of its window when the route is in quiet hours or bundles a digest),
 * then the DROPPED ones that keep the reason
 * why not: one for the items beyond the fan-out cap, one per item that produced no SMS. An accept
 * holds at most MAX_RECORDS_PER_WEBHOOK records, and a large fan-out can skip more items than
 * that (refusing the webhook would make its sender retry it forever), so the last record that
 * fits stands for the rest.
 */
function newMessages(
  evaluation: Evaluation,
  delivery: NewMessage['delivery'],
  { muted, deferral }: { readonly muted: string | undefined; readonly deferral: Deferral | undefined },
): NewMessage[] {
  const waits =
    deferral === undefined
      ? {}
      : { state: MessageState.Deferred, reason: deferral.reason, nextAttemptAt: deferral.until };
  const pending: NewMessage[] = evaluation.messages.map((message) => ({
    // A muted route's message keeps its text and recipients, so the log shows what was not sent.
    ...(muted === undefined ? {} : { state: MessageState.Dropped, reason: muted }),
    ...toNewMessage(message, delivery),
    ...waits,
  }));
  const dropped = (index: number, reason: string, text = ''): NewMessage =>
    droppedMessage(index, reason, text, delivery);
  const unsent: NewMessage[] = [
    ...(evaluation.overCap === undefined ? [] : [dropped(evaluation.overCap.item, evaluation.overCap.reason)]),
    ...evaluation.skipped.map((skip) => dropped(skip.item, skip.reason, skip.text)),
  ];
  if (pending.length === 0 && unsent.length === 0) unsent.push(dropped(0, evaluation.reason ?? 'nothing to send'));
  const room = MAX_RECORDS_PER_WEBHOOK - pending.length;
  if (unsent.length <= room) return [...pending, ...unsent];
  const kept = unsent.slice(0, room - 1);
  const first = unsent[room - 1]!;
  const more = unsent.length - kept.length;
  return [
    ...pending,
    ...kept,
    dropped(first.index, `${more} more items produced no SMS (the first, item ${first.index}: ${first.reason})`),
  ];
}

/**
 * Whether a webhook's evaluation says anything about its incident: one that sends, that the route's
 * filter dropped, or whose items were read and then produced no SMS (an empty text, no recipient).
 * Not a control message or a payload that could not be read: those name no alert.
 */
function judgesIncident(evaluation: Evaluation): boolean {
  if (evaluation.verdict === Verdict.Send || evaluation.verdict === Verdict.Filtered) return true;
  return evaluation.verdict === Verdict.Dropped && evaluation.skipped.length > 0;
}

function skippedSummary(evaluation: Evaluation): Record<string, unknown> {
  return evaluation.skipped.length === 0
    ? {}
    : { skipped: evaluation.skipped.map(({ item, verdict, reason }) => ({ item, verdict, reason })) };
}

/** The items beyond the fan-out cap, and the id of the DROPPED record that says so. */
function notSentSummary(evaluation: Evaluation, ids: readonly string[]): Record<string, unknown> {
  const { overCap } = evaluation;
  if (overCap === undefined) return {};
  return { notSent: { items: overCap.items, reason: overCap.reason, id: ids[evaluation.messages.length] } };
}

/** GETs a confirmation URL; the reason it failed, or `undefined` once it answered 2xx. */
async function confirm(fetch: SourceFetch, url: string): Promise<string | undefined> {
  try {
    const { status } = await fetch(url);
    return status >= 200 && status <= 299 ? undefined : `the confirmation URL answered ${status}`;
  } catch (error) {
    return `the confirmation URL could not be reached: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Keeps the payload for the console when the route sets `capture` (an authenticated webhook
 * only: a stranger's bytes are never stored), with the route's allow-list of headers. Best effort: the webhook is already recorded, so a
 * failure here is logged and the answer stands.
 */
async function capture(
  context: RelayContext<LoadedConfig, IngestStore>,
  request: IngestRequest,
  recordIds: readonly string[],
): Promise<void> {
  const route = context.config.routes.get(request.routeId);
  const keepSeconds = route?.config.capture;
  if (route === undefined || keepSeconds === undefined) return;
  try {
    const keepHeaders = capturedHeaderNames(route.pack, route.config);
    await context.store.capturePayload({
      route: request.routeId,
      receivedAt: request.receivedAt,
      headers: request.headers,
      keepHeaders,
      body: request.body,
      recordIds,
      keepSeconds,
    });
  } catch (error) {
    context.logger.error('payload not captured', {
      route: request.routeId,
      error: error instanceof Error ? error.name : typeof error,
    });
  }
}

/** A refusal: nothing recorded; the sender gets `{error, reason?}`. */
export function refused(status: number, error: string | undefined, reason?: string): IngestAnswer {
  return {
    outcome: 'refused',
    status,
    ids: [],
    error,
    reason,
    body: reason === undefined ? { error } : { error, reason },
  };
}

/** The lane of each of `ids`, the records of `messages` in order (`laneOf`, as the store records it). */
function lanesOf(ids: readonly string[], messages: readonly NewMessage[], priority: RoutePriority): Lane[] {
  return ids.map((_, index) => laneOf({ ...messages[index], priority }));
}
