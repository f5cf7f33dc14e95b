import type { CompiledRoute } from '../config/load';
import { fitMessage } from '../fitting';
import { resolveRecipients } from '../recipients';
import { field } from '../sources/body';
import { BadPayloadError } from '../sources/errors';
import type { InboundWebhook, WebhookBody } from '../sources/types';
import { buildScope } from '../templates';
import { Verdict } from './verdict';

/**
 * At most this many messages (fan-out items × parts) come from one webhook: they are recorded in
 * one DynamoDB transaction (100 items at most, one of them the dedupe guard).
 */
export const MAX_MESSAGES_PER_WEBHOOK = 50;

/** One SMS ready to be recorded and sent: the text, its recipients, and what it will cost. */
export interface PlannedMessage {
  /** Fan-out item index (0 without fan-out). */
  readonly item: number;
  /** 1-based part number, and the number of parts, when a long text was split. */
  readonly part: number;
  readonly parts: number;
  readonly to: readonly string[];
  readonly text: string;
  readonly senderId: string | undefined;
  readonly encoding: string;
  readonly characters: number;
  readonly segments: number;
}

/** A fan-out item (or the whole webhook) that produced no SMS, and why. */
export interface SkippedItem {
  readonly item: number;
  readonly verdict: typeof Verdict.Filtered | typeof Verdict.Dropped;
  readonly reason: string;
  /** The rendered text, when there was one: the record keeps it as the log of what would have gone out. */
  readonly text?: string;
}

export interface DroppedRecipient {
  readonly item: number;
  readonly entry: string;
  readonly reason: string;
}

export interface Evaluation {
  readonly verdict: Verdict;
  /** Why nothing is sent, for every verdict but `send`. */
  readonly reason?: string;
  readonly dedupeKey?: string;
  readonly dedupeWindowSeconds?: number;
  readonly messages: readonly PlannedMessage[];
  readonly skipped: readonly SkippedItem[];
  readonly dropped: readonly DroppedRecipient[];
  readonly warnings: readonly string[];
}

export interface EvaluateOptions {
  /**
   * The route's secret value. When `undefined`, authentication is skipped: only `preview`
   * does that, to render a payload without its signature.
   */
  readonly secret: string | undefined;
  /**
   * Report template variables that rendered empty as warnings. Costs a little per render, so the
   * per-webhook path leaves it off and `preview` turns it on.
   * @default false
   */
  readonly trackMissing?: boolean;
}

/**
 * Runs one webhook through a route: authenticate, parse, recognise pings, compute the dedupe key,
 * filter, render, resolve recipients and fit each text to the SMS limit. Pure: nothing is sent or
 * stored, so the AWS handlers, the local runtime and `preview` all share it.
 *
 * @example
 * ```ts
 * const evaluation = evaluateWebhook(routes.get('alerts')!, webhook, { secret: 'alerts-token-value' });
 * if (evaluation.verdict === 'send') await store.accept(evaluation.messages);
 * ```
 */
export function evaluateWebhook(route: CompiledRoute, webhook: InboundWebhook, { secret, trackMissing = false }: EvaluateOptions): Evaluation {
  const { pack, config } = route;
  if (secret !== undefined) {
    const auth = pack.authenticate(webhook, { secret, toleranceSeconds: config.toleranceSeconds });
    if (!auth.ok) return nothing(Verdict.Unauthorized, auth.reason);
  }

  let body: WebhookBody;
  try {
    body = pack.parse(webhook);
  } catch (error) {
    if (error instanceof BadPayloadError) return nothing(Verdict.BadRequest, error.message);
    throw error;
  }

  const ping = pack.ping(body, webhook);
  if (ping !== undefined) return nothing(Verdict.Ping, ping);

  const dedupe = pack.dedupe(body, webhook);
  const identity = { dedupeKey: dedupe.key, dedupeWindowSeconds: config.dedupeWindow ?? dedupe.windowSeconds };

  const fanOut = fanOutItems(route, body);
  if ('reason' in fanOut) return { ...nothing(Verdict.Dropped, fanOut.reason), ...identity };
  const { items } = fanOut;

  const messages: PlannedMessage[] = [];
  const skipped: SkippedItem[] = [];
  const dropped: DroppedRecipient[] = [];
  const warnings = new Set<string>();

  items.forEach((item, index) => {
    const scope = buildScope({ body, headers: webhook.headers, ...(route.config.fanOut === undefined ? {} : { extra: { item } }) });
    if (route.condition !== undefined && !route.engine.evaluate(route.condition, scope)) {
      skipped.push({ item: index, verdict: Verdict.Filtered, reason: `when "${config.when}" is false` });
      return;
    }

    const rendered = route.engine.render(route.template, scope, { trackMissing });
    for (const name of rendered.missing) warnings.add(`template variable "${name}" is missing from the payload`);

    const recipients = resolveRecipients(route.recipients, scope);
    for (const drop of recipients.dropped) dropped.push({ item: index, ...drop });

    const fitted = fitMessage(rendered.text, { policy: config.length, maxParts: config.maxParts });
    if (!fitted.ok) {
      skipped.push({ item: index, verdict: Verdict.Dropped, reason: `${fitted.reason}: ${fitted.detail}`, text: rendered.text });
      return;
    }
    if (fitted.truncated) warnings.add('a text longer than 160 characters was truncated');
    if (recipients.numbers.length === 0) {
      skipped.push({ item: index, verdict: Verdict.Dropped, reason: 'no valid recipient', text: fitted.parts.map((part) => part.text).join('') });
      return;
    }

    fitted.parts.forEach((part, partIndex) => {
      messages.push({
        item: index,
        part: partIndex + 1,
        parts: fitted.parts.length,
        to: recipients.numbers,
        text: part.text,
        senderId: route.senderId,
        encoding: part.encoding,
        characters: part.characters,
        segments: part.segments,
      });
    });
  });

  if (messages.length > MAX_MESSAGES_PER_WEBHOOK) {
    warnings.add(`only the first ${MAX_MESSAGES_PER_WEBHOOK} of ${messages.length} messages are recorded (per-webhook cap)`);
    messages.length = MAX_MESSAGES_PER_WEBHOOK;
  }

  // Literals rather than spreads of a shared `result`: V8 makes `{ ...a, b }` cost microseconds.
  // The keys and their order are those of `{ verdict, reason?, ...identity, messages, … }`.
  const { dedupeKey, dedupeWindowSeconds } = identity;
  if (messages.length > 0) {
    return { verdict: Verdict.Send, dedupeKey, dedupeWindowSeconds, messages, skipped, dropped, warnings: [...warnings] };
  }
  const allFiltered = skipped.length > 0 && skipped.every((skip) => skip.verdict === Verdict.Filtered);
  return {
    verdict: allFiltered ? Verdict.Filtered : Verdict.Dropped,
    reason: skipped[0]?.reason ?? 'nothing to send',
    dedupeKey,
    dedupeWindowSeconds,
    messages,
    skipped,
    dropped,
    warnings: [...warnings],
  };
}

function nothing(verdict: Verdict, reason: string): Evaluation {
  return { verdict, reason, messages: [], skipped: [], dropped: [], warnings: [] };
}

function fanOutItems(route: CompiledRoute, body: WebhookBody): { readonly items: readonly unknown[] } | { readonly reason: string } {
  const path = route.config.fanOut;
  if (path === undefined) return { items: [body] };
  const items = field(body, ...path.split('.'));
  if (!Array.isArray(items)) return { reason: `fanOut "${path}" is not an array in this payload` };
  if (items.length === 0) return { reason: `fanOut "${path}" is empty` };
  return { items };
}
