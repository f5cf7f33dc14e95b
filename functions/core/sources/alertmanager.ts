import { DeliveryPolicy } from '../config/policies';
import { authFailure, checkCredential, sha256Hex } from './auth';
import { field, parseBody, textField } from './body';
import { BadPayloadError } from './errors';
import type { AuthOutcome, DedupeKey, InboundWebhook, SignInput, SourcePack, WebhookBody } from './types';
import { bearer } from './sign';

/**
 * Alertmanager retries a failed webhook only until the notification's deadline, which is the route's
 * `group_interval` (default 5 min), and sends nothing new for an unchanged group before
 * `repeat_interval` (default 4 h). Five minutes therefore covers its retries while letting even a
 * short, deliberate `repeat_interval` through; a route can set `dedupeWindow` to change it.
 */
export const ALERT_GROUP_DEDUPE_SECONDS = 300;

/**
 * Accepts the body only when it has the shape of an Alertmanager notification (Grafana's adds fields
 * to the same shape): an object with an `alerts` array.
 *
 * @example
 * ```ts
 * const body = parseAlertGroup(webhook, 'Alertmanager');
 * ```
 */
export function parseAlertGroup(webhook: InboundWebhook, sender: string): WebhookBody {
  const body = parseBody(webhook);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadPayloadError(`expected a ${sender} notification: a JSON object with an "alerts" array`);
  }
  if (!Array.isArray((body as Record<string, unknown>)['alerts'])) {
    throw new BadPayloadError(`expected a ${sender} notification: the "alerts" array is missing`);
  }
  return body;
}

/**
 * A dedupe key for a grouped alert notification, which carries no delivery id: the group, its
 * status, and each alert's fingerprint with its own status and `startsAt`, sorted. A retry repeats
 * all of these; a notification in which an alert joined, left or resolved changes at least one, and
 * so does an alert that resolved and fired again (a flapping disk, a restart loop): its new firing
 * has a new `startsAt`, so it pages even inside the window.
 *
 * @example
 * ```ts
 * alertGroupDedupeKey('grafana', body); // { key: 'grafana:3f1c…', windowSeconds: 300 }
 * ```
 */
export function alertGroupDedupeKey(prefix: string, body: WebhookBody): DedupeKey {
  const alerts = field(body, 'alerts');
  const states = (Array.isArray(alerts) ? alerts : []).map(
    (alert: unknown) =>
      `${alertIdentity(alert)}=${textField(alert, 'status') ?? ''}@${textField(alert, 'startsAt') ?? ''}`,
  );
  const material = JSON.stringify([
    textField(body, 'receiver') ?? '',
    textField(body, 'groupKey') ?? '',
    textField(body, 'status') ?? '',
    textField(body, 'truncatedAlerts') ?? '0',
    states.sort(),
  ]);
  return { key: `${prefix}:${sha256Hex(material)}`, windowSeconds: ALERT_GROUP_DEDUPE_SECONDS };
}

/** The alert's fingerprint, or for a hand-made body without one, a hash of its sorted labels. */
function alertIdentity(alert: unknown): string {
  const fingerprint = textField(alert, 'fingerprint');
  if (fingerprint !== undefined && fingerprint !== '') return fingerprint;
  const labels = field(alert, 'labels');
  const pairs = labels !== null && typeof labels === 'object' ? Object.entries(labels).sort() : [];
  return `labels-${sha256Hex(JSON.stringify(pairs))}`;
}

/**
 * Falls back, in order, to common then first-alert annotations so that a group whose alerts have
 * different summaries still says something, and leaves the colon out when nothing is left.
 */
const DEFAULT_TEMPLATE =
  '{% assign summary = commonAnnotations.summary | default: commonAnnotations.description' +
  ' | default: alerts.first.annotations.summary | default: alerts.first.annotations.description %}' +
  '[{{ status | upcase }}{% if alerts.size > 1 %} x{{ alerts.size }}{% endif %}] ' +
  '{{ commonLabels.alertname | default: alerts.first.labels.alertname | default: "alert" }}' +
  '{% if summary %}: {{ summary }}{% endif %}';

/** Alertmanager's `http_config.authorization` sends the secret as a Bearer credential. */
const signAlertmanager = (input: SignInput): Record<string, string> => ({
  'User-Agent': 'Alertmanager/0.28.1',
  ...bearer(input),
});

/**
 * Prometheus Alertmanager's `webhook_configs`. Alertmanager signs nothing; its `http_config` sends a
 * credential, either `authorization: { credentials: <secret> }` (Bearer, the default type) or
 * `basic_auth: { username: <any>, password: <secret> }`.
 *
 * @example
 * ```yaml
 * # alertmanager.yml
 * receivers:
 *   - name: sms
 *     webhook_configs:
 *       - url: https://relay.example.com/hooks/oncall
 *         http_config:
 *           authorization:
 *             credentials_file: /etc/alertmanager/sms-relay-token
 * ```
 */
export const alertmanager: SourcePack = {
  name: 'alertmanager',
  secretKind: 'credential',
  defaultDelivery: DeliveryPolicy.AtLeastOnce,
  incident: { key: '{{ groupKey }}', resolved: "status == 'resolved'" },
  digestNoun: 'alerts',
  examples: { directory: 'alertmanager' },
  sign: signAlertmanager,
  capturedHeaders: [],
  description: 'Prometheus Alertmanager webhook_configs (Bearer or Basic credential); one SMS per alert group.',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate(webhook, { secret }): AuthOutcome {
    // With an empty secret, a bare "Authorization: Bearer" would match.
    if (secret === '') return authFailure('no secret is configured for this route');
    return checkCredential(webhook, secret);
  },

  parse: (webhook) => parseAlertGroup(webhook, 'Alertmanager'),

  // Alertmanager has no ping; a test sent with `amtool` is an ordinary alert and should send.
  ping: () => undefined,

  dedupe: (body) => alertGroupDedupeKey('alertmanager', body),
};
