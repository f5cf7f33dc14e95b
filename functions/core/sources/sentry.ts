import { DeliveryPolicy } from '../config/policies';
import { parseBody, textField } from './body';
import { HEX_SHA256, headerValue, verifyBodySignature, type BodySignatureScheme } from './body-signature';
import { bodySignedDedupe, idKeyPart } from './shared';
import type { SignInput, SourcePack } from './types';
import { bodyField, callerHeader, firstWord, freshHex, sha256Hmac, unixSeconds } from './sign';
import { HOUR_SECONDS } from '../defaults';

export const SENTRY = {
  /**
   * Sentry retries a failed delivery from its task queue within the hour; a day leaves room for a
   * backlog while keeping the signed-body key from swallowing a later, genuinely new notification.
   */
  dedupeWindowSeconds: 24 * HOUR_SECONDS,
  resourceHeader: 'sentry-hook-resource',
  requestIdHeader: 'request-id',
} as const;

const SIGNATURE_SCHEME: BodySignatureScheme = {
  headers: ['sentry-hook-signature'],
  label: 'Sentry-Hook-Signature',
  encoding: 'hex',
  extract: (value) => (HEX_SHA256.test(value) ? value.toLowerCase() : undefined),
};

/**
 * Chosen by the body's shape, which says as much as `Sentry-Hook-Resource` does: `data.metric_alert`
 * (metric alerts: `[CRITICAL]`, `[WARNING]`, `[RESOLVED]` and the first line of Sentry's own
 * description), `data.event` (issue alerts, with the rule that fired), `data.issue` (issue created,
 * resolved, assigned...), `data.error`. Sentry's newline in `description_text` is kept out.
 */
const DEFAULT_TEMPLATE = [
  '{%- if data.metric_alert -%}',
  "{%- assign detail = data.description_text | split: '\n' | first -%}",
  '[{{ action | upcase }}] {{ data.metric_alert.alert_rule.name | default: data.description_title }}{% if detail %}: {{ detail }}{% endif %}',
  '{%- elsif data.event -%}',
  '[{{ data.event.level | default: "alert" | upcase }}] {{ data.event.title | default: data.event.message }}{% if data.triggered_rule %} ({{ data.triggered_rule }}){% endif %}',
  '{%- elsif data.issue -%}',
  '[Sentry] {{ data.issue.shortId }} {{ action }}: {{ data.issue.title }}',
  '{%- elsif data.error -%}',
  '[Sentry] {{ data.error.level | default: "error" }}: {{ data.error.title | default: data.error.message }}',
  '{%- else -%}',
  "Sentry {{ headers['sentry-hook-resource'] }} {{ action }}",
  '{%- endif -%}',
].join('\n');

/** Sentry's `Sentry-Hook-Resource` for a body, by the object under `data`. */
const resourceOf = (body: Uint8Array): string => {
  const data = bodyField(body, 'data');
  const has = (name: string): boolean => data !== null && typeof data === 'object' && name in data;
  if (has('metric_alert')) return 'metric_alert';
  if (has('event')) return 'event_alert';
  if (has('issue')) return 'issue';
  if (has('error')) return 'error';
  if (has('comment')) return 'comment';
  return 'installation';
};

/**
 * Sentry integration webhooks: `Sentry-Hook-Signature: <hex HMAC-SHA256 of the body>` keyed with
 * the client secret, the resource named from the body (`data.metric_alert` is `metric_alert`…), a
 * fresh `Request-ID` and the (unsigned) `Sentry-Hook-Timestamp`.
 */
const signSentry = ({ body, secret, headers, now = new Date() }: SignInput): Record<string, string> => ({
  'User-Agent': 'sentry-app',
  'Request-ID': callerHeader(headers, 'request-id') ?? freshHex(),
  'Sentry-Hook-Resource': callerHeader(headers, 'sentry-hook-resource') ?? resourceOf(body),
  'Sentry-Hook-Timestamp': unixSeconds(now),
  'Sentry-Hook-Signature': sha256Hmac(secret, body, 'hex'),
});

/**
 * Sentry integration-platform webhooks (an internal integration's webhook URL, also used by alert
 * rules that name the integration as their action): `Sentry-Hook-Signature` is the hex HMAC-SHA256
 * of the body keyed with the integration's client secret. Sentry signs only the body: its
 * `Sentry-Hook-Timestamp` is not signed, so there is nothing to check it against.
 *
 * `installation` webhooks (the integration installed or removed) are acknowledged without a send.
 *
 * @example
 * ```ts
 * sentry.authenticate(webhook, { secret: '<client secret>', toleranceSeconds: 300 });
 * sentry.ping(body, webhook); // 'sentry installation created' for Sentry-Hook-Resource: installation
 * ```
 */
export const sentry: SourcePack = {
  name: 'sentry',
  secretKind: 'key',
  defaultDelivery: DeliveryPolicy.AtLeastOnce,
  incident: { key: '{{ data.metric_alert.id | default: data.issue.id }}', resolved: "action == 'resolved'" },
  digestNoun: 'issues',
  examples: { directory: 'sentry', eventHeaders: (stem) => ({ [SENTRY.resourceHeader]: firstWord(stem) }) },
  sign: signSentry,
  capturedHeaders: [SENTRY.resourceHeader, SENTRY.requestIdHeader],
  description: 'Sentry integration webhooks (Sentry-Hook-Signature): issue alerts, metric alerts, issues, errors.',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate: (webhook, { secret }) => verifyBodySignature(webhook, secret, SIGNATURE_SCHEME),

  parse: (webhook) => parseBody(webhook),

  ping: (body, webhook) =>
    headerValue(webhook, [SENTRY.resourceHeader]) === 'installation'
      ? `sentry installation ${textField(body, 'action') ?? 'webhook'}`
      : undefined,

  // `Request-ID` is made for each request Sentry builds, so a retry that Sentry's task queue builds
  // again carries a new one: the signed body's key (the same bytes) is what catches those.
  dedupe: (_body, webhook) => {
    const requestId = headerValue(webhook, [SENTRY.requestIdHeader]);
    return bodySignedDedupe(
      'sentry',
      requestId ? `sentry:request:${idKeyPart(requestId)}` : undefined,
      webhook,
      SENTRY.dedupeWindowSeconds,
    );
  },
};
