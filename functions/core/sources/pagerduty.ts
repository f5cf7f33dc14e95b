import { DeliveryPolicy } from '../config/policies';
import { sha256Hex } from './auth';
import { parseBody, textField } from './body';
import { HEX_SHA256, headerValue, verifyBodySignature, type BodySignatureScheme } from './body-signature';
import { idKeyPart } from './shared';
import type { SignInput, SourcePack } from './types';
import { callerHeader, freshId, sha256Hmac } from './sign';
import { HOUR_SECONDS } from '../defaults';

export const PAGERDUTY = {
  /**
   * PagerDuty retries a delivery up to 4 times over about 20 minutes, and queues later deliveries
   * behind a failing one; every attempt carries the same `event.id`. A day covers a long queue.
   */
  dedupeWindowSeconds: 24 * HOUR_SECONDS,
  signatureHeader: 'x-pagerduty-signature',
  /** Repeated by every delivery attempt of one webhook, as PagerDuty documents; unsigned. */
  webhookIdHeader: 'x-webhook-id',
} as const;

const SIGNATURE_SCHEME: BodySignatureScheme = {
  headers: [PAGERDUTY.signatureHeader],
  label: 'X-PagerDuty-Signature',
  encoding: 'hex',
  // `v1=<hex>[,v1=<hex>…]`: one per signing secret while a secret is being rotated; other versions are skipped.
  extract: (value) =>
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.startsWith('v1=') && HEX_SHA256.test(entry.slice(3)))
      .map((entry) => entry.slice(3).toLowerCase()),
};

/**
 * Incident events read `[TRIGGERED] #<number> <title> (<service>, <urgency> urgency)`; notes,
 * status updates and responder requests quote their text; anything else names its event type.
 */
const DEFAULT_TEMPLATE = [
  '{%- assign d = event.data -%}',
  '{%- case d.type -%}',
  "{%- when 'incident' -%}",
  "[{{ event.event_type | remove_first: 'incident.' | replace: '_', ' ' | upcase }}] #{{ d.number }} {{ d.title }} ({{ d.service.summary }}{% if d.urgency %}, {{ d.urgency }} urgency{% endif %})",
  "{%- when 'incident_note' -%}",
  '[NOTE] {{ d.incident.summary }}: {{ d.content }}',
  "{%- when 'incident_status_update' -%}",
  '[STATUS UPDATE] {{ d.incident.summary }}: {{ d.message }}',
  "{%- when 'incident_responder' -%}",
  '[RESPONDER {{ d.state | upcase }}] {{ d.incident.summary }}: {{ d.user.summary }}{% if d.message %} - {{ d.message }}{% endif %}',
  '{%- else -%}',
  'PagerDuty {{ event.event_type }}: {{ d.summary | default: d.title | default: d.id }}',
  '{%- endcase -%}',
].join('\n');

/** PagerDuty v3: `X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the body>` and an `X-Webhook-Id`. */
const signPagerDuty = ({ body, secret, headers }: SignInput): Record<string, string> => ({
  'User-Agent': 'PagerDuty-Webhook/V3.0',
  'X-Webhook-Id': callerHeader(headers, 'x-webhook-id') ?? freshId(),
  'X-Webhook-Subscription': 'PSMS0RL',
  'X-PagerDuty-Signature': `v1=${sha256Hmac(secret, body, 'hex')}`,
});

/**
 * PagerDuty v3 webhook subscriptions: `X-PagerDuty-Signature` holds one or more `v1=<hex
 * HMAC-SHA256 of the body>`, one per signing secret while the subscription's secret is rotated, and
 * any one matching passes. Deduplicated on the signed `event.id`; the "Send Test Event" button's
 * `pagey.ping` is acknowledged without a send.
 *
 * @example
 * ```ts
 * pagerduty.authenticate(webhook, { secret: '<subscription secret>', toleranceSeconds: 300 });
 * pagerduty.dedupe(body, webhook); // { key: 'pagerduty:event:01DEN7…', windowSeconds: 86400 }
 * ```
 */
export const pagerduty: SourcePack = {
  name: 'pagerduty',
  secretKind: 'key',
  defaultDelivery: DeliveryPolicy.AtLeastOnce,
  incident: { key: '{{ event.data.id }}', resolved: "event.event_type == 'incident.resolved'" },
  digestNoun: 'incidents',
  examples: { directory: 'pagerduty' },
  sign: signPagerDuty,
  capturedHeaders: [PAGERDUTY.webhookIdHeader],
  description:
    'PagerDuty v3 webhooks (X-PagerDuty-Signature v1=, secret rotation): incidents triggered, acknowledged, resolved...',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate: (webhook, { secret }) => verifyBodySignature(webhook, secret, SIGNATURE_SCHEME),

  parse: (webhook) => parseBody(webhook),

  ping: (body) => (textField(body, 'event', 'event_type') === 'pagey.ping' ? 'pagerduty ping (pagey.ping)' : undefined),

  dedupe: (body, webhook) => {
    const eventId = textField(body, 'event', 'id');
    const webhookId = headerValue(webhook, [PAGERDUTY.webhookIdHeader]);
    const key = eventId
      ? `pagerduty:event:${idKeyPart(eventId)}`
      : webhookId
        ? `pagerduty:webhook:${idKeyPart(webhookId)}`
        : `pagerduty:body:${sha256Hex(webhook.body)}`;
    return { key, windowSeconds: PAGERDUTY.dedupeWindowSeconds };
  },
};
