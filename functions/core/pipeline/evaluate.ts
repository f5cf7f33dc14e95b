import type { CompiledRoute } from '../config/load';
import { RoutePriority } from '../config/policies';
import { compileRecipients } from '../recipients/compile';
import type { CompiledRecipients } from '../recipients/types';
import { NO_PROVIDER_PREFIX } from '../recipients/numbering';
import { MAX_MESSAGES_PER_WEBHOOK, TEMPLATE_LIMITS } from '../defaults';
import { fitMessage } from '../fitting';
import { resolveRecipients } from '../recipients';
import { NOT_ALLOWED_SUFFIX } from '../recipients/allow';
import type { OnCallOverride } from '../oncall/resolve';
import { maskNumbersInText } from '../recipients/mask-text';
import { sha256Hex } from '../sources/auth';
import { field } from '../sources/body';
import { BadPayloadError } from '../sources/errors';
import type { ControlMessage, InboundWebhook, WebhookBody } from '../sources/types';
import { buildScope } from '../templates';
import { Verdict } from './verdict';

export { MAX_MESSAGES_PER_WEBHOOK } from '../defaults';

/**
 * How long a webhook whose payload cannot be read at all counts as a repeat (keyed on its body
 * hash), unless the route sets `dedupeWindow`.
 */
const UNREADABLE_DEDUPE_WINDOW_SECONDS = 86_400;

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
  /**
   * Set when the alert says it is critical (`SourcePack.critical`, Opsgenie's P1 and P2) on a route
   * that is not `priority: critical`: the SMS may spend the credit reserve and goes in the critical
   * lane, as a critical route's does.
   */
  readonly critical?: true;
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

/** Fan-out items beyond {@link MAX_MESSAGES_PER_WEBHOOK}: not evaluated, never sent. */
export interface OverCap {
  /** Index of the first item left out. */
  readonly item: number;
  readonly items: number;
  readonly reason: string;
}

export interface Evaluation {
  readonly verdict: Verdict;
  /** Why nothing is sent, for every verdict but `send`. */
  readonly reason?: string;
  readonly dedupeKey?: string;
  /** A second key that also marks a repeat: the hash of the signed body, for senders whose delivery id is not signed. */
  readonly replayKey?: string;
  readonly dedupeWindowSeconds?: number;
  /**
   * A URL the relay must GET before recording this webhook (an SNS `SubscribeURL`): set with a
   * `dropped` verdict for a source's control message (`SourcePack.control`). Evaluation stays pure;
   * `ingestWebhook` does the GET.
   */
  readonly confirmUrl?: string;
  readonly overCap?: OverCap;
  readonly messages: readonly PlannedMessage[];
  readonly skipped: readonly SkippedItem[];
  readonly dropped: readonly DroppedRecipient[];
  readonly warnings: readonly string[];
  /**
   * The recipients the webhook named itself (`SourcePack.recipients`: Opsgenie's responders the
   * config knows), which took the place of the route's; absent when the route's were used. Ingest
   * reads the overrides of the schedules these name.
   */
  readonly recipients?: CompiledRecipients;
}

export interface EvaluateOptions {
  /**
   * The route's secret value. When `undefined`, authentication is skipped: only `preview`
   * does that, to render a payload without its signature.
   */
  readonly secret: string | undefined;
  /** What the pack's `prefetch` fetched (`ingestWebhook` runs it), handed to `authenticate`. */
  readonly documents?: ReadonlyMap<string, string>;
  /**
   * Report template variables that rendered empty as warnings. Costs a little per render, so the
   * per-webhook path leaves it off and `preview` turns it on.
   * @default false
   */
  readonly trackMissing?: boolean;
  /**
   * The overrides in force for the schedules the route's `oncall:` recipients name (the store's
   * `activeOverrides`); who is on call is worked out at the webhook's `receivedAt`. Without them
   * (`preview`) the rotation alone decides.
   * @default []
   */
  readonly overrides?: readonly OnCallOverride[];
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
export function evaluateWebhook(
  route: CompiledRoute,
  webhook: InboundWebhook,
  { secret, documents, trackMissing = false, overrides = [] }: EvaluateOptions,
): Evaluation {
  const { pack, config } = route;
  if (secret !== undefined) {
    const auth = pack.authenticate(webhook, {
      secret,
      toleranceSeconds: config.toleranceSeconds,
      route: config,
      ...(documents === undefined ? {} : { documents }),
    });
    if (!auth.ok) return nothing(Verdict.Unauthorized, auth.reason);
  }

  let body: WebhookBody;
  let identity: Identity;
  let control: ControlMessage | undefined;
  try {
    body = pack.parse(webhook);
    const ping = pack.ping(body, webhook);
    if (ping !== undefined) return nothing(Verdict.Ping, ping);
    const dedupe = pack.dedupe(body, webhook, config);
    identity = {
      dedupeKey: dedupe.key,
      ...(dedupe.replayKey === undefined ? {} : { replayKey: dedupe.replayKey }),
      dedupeWindowSeconds: config.dedupeWindow ?? dedupe.windowSeconds,
    };
    control = pack.control?.(body, webhook);
  } catch (error) {
    if (error instanceof BadPayloadError) return nothing(Verdict.BadRequest, error.message);
    // Anything else is this payload's shape defeating the relay (too deep, odd values): no retry
    // can change it, so it is recorded as dropped under its body hash.
    const unreadable = {
      dedupeKey: `${pack.name}:unreadable:${sha256Hex(webhook.body)}`,
      dedupeWindowSeconds: config.dedupeWindow ?? UNREADABLE_DEDUPE_WINDOW_SECONDS,
    };
    return { ...nothing(Verdict.Dropped, `the payload cannot be read: ${describe(error)}`), ...unreadable };
  }

  if (control !== undefined) {
    const confirm = control.confirmUrl === undefined ? {} : { confirmUrl: control.confirmUrl };
    return { ...nothing(Verdict.Dropped, control.reason), ...identity, ...confirm };
  }

  const fanOut = fanOutItems(route, body);
  if ('reason' in fanOut) return { ...nothing(Verdict.Dropped, fanOut.reason), ...identity };
  const { items } = fanOut;
  const recipients = namedRecipients(route, body);
  const critical = config.priority !== RoutePriority.Critical && pack.critical?.(body) === true;

  const messages: PlannedMessage[] = [];
  const skipped: SkippedItem[] = [];
  const dropped: DroppedRecipient[] = [];
  const warnings = new Set<string>();
  let overCap: OverCap | undefined;
  // One render budget for the whole webhook: a limit per render would let a large fan-out take
  // items × the limit.
  const renderDeadline = performance.now() + TEMPLATE_LIMITS.renderMs;

  for (let index = 0; index < items.length; index += 1) {
    // Items are evaluated in order until one would pass the cap; none after it is even rendered.
    const planned = planItem(route, webhook, body, items[index], index, {
      trackMissing,
      warnings,
      dropped,
      renderDeadline,
      overrides,
      recipients: recipients ?? route.recipients,
      critical,
    });
    if ('verdict' in planned) {
      skipped.push(planned);
      continue;
    }
    if (messages.length + planned.length > MAX_MESSAGES_PER_WEBHOOK) {
      const left = items.length - index;
      overCap = {
        item: index,
        items: left,
        reason: `${left} item${left === 1 ? '' : 's'} not sent: beyond the cap of ${MAX_MESSAGES_PER_WEBHOOK} SMS per webhook`,
      };
      warnings.add(overCap.reason);
      break;
    }
    messages.push(...planned);
  }

  const result = {
    ...identity,
    messages,
    skipped,
    dropped,
    warnings: [...warnings],
    ...(overCap === undefined ? {} : { overCap }),
    ...(recipients === undefined ? {} : { recipients }),
  };
  if (messages.length > 0) return { verdict: Verdict.Send, ...result };
  const allFiltered = skipped.length > 0 && skipped.every((skip) => skip.verdict === Verdict.Filtered);
  return {
    verdict: allFiltered ? Verdict.Filtered : Verdict.Dropped,
    reason: skipped[0]?.reason ?? 'nothing to send',
    ...result,
  };
}

interface Identity {
  readonly dedupeKey: string;
  readonly replayKey?: string;
  readonly dedupeWindowSeconds: number;
}

interface ItemOptions {
  readonly trackMissing: boolean;
  readonly warnings: Set<string>;
  readonly dropped: DroppedRecipient[];
  /** `performance.now()` time by which every render of this webhook must be done. */
  readonly renderDeadline: number;
  readonly overrides: readonly OnCallOverride[];
  /** The route's recipients, or those the webhook named (see {@link Evaluation.recipients}). */
  readonly recipients: CompiledRecipients;
  readonly critical: boolean;
}

/**
 * The config's people and schedules the webhook names (`SourcePack.recipients`), compiled as a
 * route's recipients are; `undefined` when it names none (or its pack names no one): the route's.
 */
function namedRecipients(route: CompiledRoute, body: WebhookBody): CompiledRecipients | undefined {
  const { directory, engine, allow, numbering } = route.recipients;
  const named = route.pack.recipients?.(body, directory) ?? [];
  // Each entry names a person or schedule of `directory`, so compiling it cannot fail.
  return named.length === 0 ? undefined : compileRecipients(named, engine, undefined, directory, allow, numbering);
}

/** One fan-out item (or the whole webhook): its SMS parts, or why it produced none. */
function planItem(
  route: CompiledRoute,
  webhook: InboundWebhook,
  body: WebhookBody,
  item: unknown,
  index: number,
  { trackMissing, warnings, dropped, renderDeadline, overrides, recipients: compiled, critical }: ItemOptions,
): PlannedMessage[] | SkippedItem {
  const { config } = route;
  try {
    const scope = buildScope({
      body,
      headers: webhook.headers,
      query: webhook.query,
      ...(config.fanOut === undefined ? {} : { extra: { item } }),
    });
    if (route.condition !== undefined && !route.engine.evaluate(route.condition, scope)) {
      return { item: index, verdict: Verdict.Filtered, reason: `when "${config.when}" is false` };
    }

    const rendered = route.engine.render(route.template, scope, {
      trackMissing,
      renderLimitMs: renderDeadline - performance.now(),
    });
    for (const name of rendered.missing) warnings.add(`template variable "${name}" is missing from the payload`);

    const recipients = resolveRecipients(compiled, scope, { at: webhook.receivedAt, overrides });
    for (const drop of recipients.dropped) dropped.push({ item: index, ...drop });

    const fitted = fitMessage(rendered.text, { policy: config.length, maxParts: config.maxParts });
    if (!fitted.ok)
      return {
        item: index,
        verdict: Verdict.Dropped,
        reason: `${fitted.reason}: ${fitted.detail}`,
        text: rendered.text,
      };
    if (fitted.truncated) warnings.add('a text longer than 160 characters was truncated');
    const text = fitted.parts.map((part) => part.text).join('');
    if (recipients.numbers.length === 0) {
      // A number refused by allowRecipients or that no provider texts is the reason an operator looks for: say which.
      const refused = recipients.dropped
        .filter((drop) => drop.reason.endsWith(NOT_ALLOWED_SUFFIX) || drop.reason.startsWith(NO_PROVIDER_PREFIX))
        .map((drop) => drop.reason);
      return {
        item: index,
        verdict: Verdict.Dropped,
        reason: refused.length === 0 ? 'no valid recipient' : `no valid recipient: ${refused.join('; ')}`,
        text,
      };
    }
    if (recipients.numbers.length > config.maxRecipients) {
      return {
        item: index,
        verdict: Verdict.Dropped,
        reason: `${recipients.numbers.length} recipients, more than maxRecipients (${config.maxRecipients})`,
        text,
      };
    }

    return fitted.parts.map((part, partIndex) => ({
      item: index,
      part: partIndex + 1,
      parts: fitted.parts.length,
      to: recipients.numbers,
      text: part.text,
      senderId: route.senderId,
      encoding: part.encoding,
      characters: part.characters,
      segments: part.segments,
      ...(critical ? { critical: true as const } : {}),
    }));
  } catch (error) {
    // A template, condition or scope that fails on this data fails the same way on every retry.
    return {
      item: index,
      verdict: Verdict.Dropped,
      reason: `the template cannot be rendered on this payload: ${describe(error)}`,
    };
  }
}

/** An error as a reason to record: its message, with any phone number in it masked. */
function describe(error: unknown): string {
  return maskNumbersInText(error instanceof Error ? error.message : String(error));
}

function nothing(verdict: Verdict, reason: string): Evaluation {
  return { verdict, reason, messages: [], skipped: [], dropped: [], warnings: [] };
}

function fanOutItems(
  route: CompiledRoute,
  body: WebhookBody,
): { readonly items: readonly unknown[] } | { readonly reason: string } {
  const path = route.config.fanOut;
  if (path === undefined) return { items: [body] };
  const items = field(body, ...path.split('.'));
  if (!Array.isArray(items)) return { reason: `fanOut "${path}" is not an array in this payload` };
  if (items.length === 0) return { reason: `fanOut "${path}" is empty` };
  return { items };
}
