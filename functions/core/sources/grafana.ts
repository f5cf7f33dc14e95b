import { DeliveryPolicy } from '../config/policies';
import { alertGroupDedupeKey, parseAlertGroup } from './alertmanager';
import { AUTH_OK, authFailure, checkCredential, hmac, safeEqual } from './auth';
import { checkTimestamp } from './shared';
import type { AuthOutcome, InboundWebhook, SignInput, SourcePack } from './types';
import { bearer } from './sign';

/**
 * Where Grafana puts the HMAC. The contact point's form suggests `X-Grafana-Alerting-Signature`;
 * grafana/alerting's signer falls back to `X-Grafana-Alert-Signature` when the field is left empty.
 */
const SIGNATURE_HEADERS = ['x-grafana-alerting-signature', 'x-grafana-alert-signature'] as const;

/**
 * Grafana has no default timestamp header: it sends one, and signs it, only when the contact point
 * names one. These are the names Grafana's own examples use; any other name cannot be verified.
 */
const TIMESTAMP_HEADERS = ['x-grafana-alerting-timestamp', 'x-grafana-alerting-signature-timestamp'] as const;

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

function firstHeader(webhook: InboundWebhook, names: readonly string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = webhook.headers[name]?.trim();
    if (value !== undefined && value !== '') return { name, value };
  }
  return undefined;
}

/**
 * Grafana's signer (grafana/alerting `http/hmac.go`): lower-case hex HMAC-SHA256, keyed with the
 * secret's UTF-8 bytes, over the body, or over `<unix seconds>:<body>` when a timestamp header is set.
 */
function verifySignature(
  webhook: InboundWebhook,
  signature: { name: string; value: string },
  secret: string,
  toleranceSeconds: number,
): AuthOutcome {
  if (!HEX_SHA256.test(signature.value)) return authFailure(`malformed ${signature.name} header`);
  const timestamp = firstHeader(webhook, TIMESTAMP_HEADERS);
  if (timestamp === undefined) {
    const expected = hmac('sha256', secret, webhook.body, 'hex');
    return safeEqual(signature.value.toLowerCase(), expected)
      ? AUTH_OK
      : authFailure(
          `${signature.name} does not match the body (a contact point with a timestamp header must name it X-Grafana-Alerting-Timestamp)`,
        );
  }
  const fresh = checkTimestamp(timestamp.value, webhook.receivedAt, toleranceSeconds);
  if (!fresh.ok) return fresh;
  const signed = Buffer.concat([Buffer.from(`${timestamp.value}:`, 'utf8'), webhook.body]);
  const expected = hmac('sha256', secret, signed, 'hex');
  return safeEqual(signature.value.toLowerCase(), expected)
    ? AUTH_OK
    : authFailure(`${signature.name} does not match the timestamp and body`);
}

/**
 * Same shape as the Alertmanager default, with Grafana's own `title` as the last fallback for the
 * name. Grafana's `message` is left out: by default it is a multi-line label dump, far too long for SMS.
 */
const DEFAULT_TEMPLATE =
  '{% assign summary = commonAnnotations.summary | default: commonAnnotations.description' +
  ' | default: alerts.first.annotations.summary | default: alerts.first.annotations.description %}' +
  '[{{ status | upcase }}{% if alerts.size > 1 %} x{{ alerts.size }}{% endif %}] ' +
  '{{ commonLabels.alertname | default: alerts.first.labels.alertname | default: title }}' +
  '{% if summary %}: {{ summary }}{% endif %}';

/** Grafana's webhook contact point with an Authorization credential (its optional HMAC is not used here). */
const signGrafana = (input: SignInput): Record<string, string> => ({ 'User-Agent': 'Grafana', ...bearer(input) });

/**
 * Grafana Alerting's webhook contact point. Authenticated by its optional HMAC signature when the
 * request carries one, else by the contact point's Authorization header or basic auth credential.
 *
 * The contact point's Test button sends an ordinary notification (alert `TestAlert`, summary
 * "Notification test") under a group key unique to each press: it is sent as an SMS on purpose,
 * since seeing the SMS arrive is what the user pressed Test for.
 *
 * @example
 * ```yaml
 * # Grafana contact point provisioning
 * receivers:
 *   - uid: sms-relay
 *     type: webhook
 *     settings:
 *       url: https://relay.example.com/hooks/grafana
 *       hmacConfig:
 *         secret: $SMS_RELAY_SECRET
 *         timestampHeader: X-Grafana-Alerting-Timestamp
 * ```
 */
export const grafana: SourcePack = {
  name: 'grafana',
  secretKind: 'credential',
  defaultDelivery: DeliveryPolicy.AtLeastOnce,
  incident: { key: '{{ groupKey }}', resolved: "status == 'resolved'" },
  digestNoun: 'alerts',
  examples: { directory: 'grafana' },
  sign: signGrafana,
  capturedHeaders: [],
  description:
    'Grafana Alerting webhook contact point (HMAC signature, or Bearer/Basic credential); one SMS per alert group.',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate(webhook, { secret, toleranceSeconds }): AuthOutcome {
    // Anyone can compute an HMAC keyed with the empty string, or send a bare "Bearer".
    if (secret === '') return authFailure('no secret is configured for this route');
    const signature = firstHeader(webhook, SIGNATURE_HEADERS);
    // A signature, when present, decides: a forged one must not fall through to another check.
    if (signature !== undefined) return verifySignature(webhook, signature, secret, toleranceSeconds);
    return checkCredential(webhook, secret);
  },

  parse: (webhook) => parseAlertGroup(webhook, 'Grafana'),

  ping: () => undefined,

  dedupe: (body) => alertGroupDedupeKey('grafana', body),
};
