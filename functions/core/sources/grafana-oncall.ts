import { DeliveryPolicy } from '../config/policies';
import { HOUR_SECONDS } from '../defaults';
import { checkCredentialOrToken, sha256Hex } from './auth';
import { parseBody, textField } from './body';
import { idKeyPart, queryKeyPart } from './shared';
import { bearer } from './sign';
import type { DedupeKey, InboundWebhook, SourcePack, WebhookBody } from './types';

export const GRAFANA_ONCALL = {
  /**
   * A personal notification or escalation step is rebuilt on each retry with a new `event.time`
   * (`timezone.now()`, engine/apps/webhooks/tasks/trigger_webhook.py): up to 3 retries 10 s apart,
   * each request timing out after 4 s, so under a minute. A notification policy's next step is at
   * least a minute later and is sent.
   */
  retriedEventWindowSeconds: 55,
  /** Status events carry the alert group's own time of the change: the same event, a day later, is still a repeat. */
  statusEventWindowSeconds: 24 * HOUR_SECONDS,
} as const;

/** `event.type` values (TRIGGER_TYPE_TO_LABEL in trigger_webhook.py) whose `event.time` is the send time. */
const SENT_NOW = new Set(['personal notification', 'escalation']);

/**
 * Modelled on OnCall's own SMS (AlertGroupSmsRenderer: `Grafana OnCall: Alert group #<n> "<title>"
 * from stack: …, integration: …, alerts registered: N.`), made to fit one SMS with the alert group's
 * web link: `Grafana OnCall: "<title>" (N alerts) <link>` (the title shortened when needed; the
 * webhook payload has no `#<n>`). Status changes say what happened and who did it.
 */
const DEFAULT_TEMPLATE = [
  '{%- assign group = alert_group -%}',
  '{%- assign title = group.title | default: alert_payload.labels.alertname | default: "Alert group" -%}',
  '{%- assign link = group.permalinks.web -%}',
  '{%- case event.type -%}',
  "{%- when 'acknowledge' -%}{%- assign change = 'acknowledged' -%}{%- assign by = alert_group_acknowledged_by.username -%}",
  "{%- when 'resolve' -%}{%- assign change = 'resolved' -%}{%- assign by = alert_group_resolved_by.username -%}",
  "{%- when 'silence' -%}{%- assign change = 'silenced' -%}{%- assign by = user.username -%}",
  "{%- when 'unsilence' -%}{%- assign change = 'unsilenced' -%}{%- assign by = user.username -%}",
  "{%- when 'unresolve' -%}{%- assign change = 'unresolved' -%}{%- assign by = user.username -%}",
  "{%- when 'unacknowledge' -%}{%- assign change = 'unacknowledged' -%}{%- assign by = user.username -%}",
  '{%- endcase -%}',
  '{%- if change -%}',
  '{%- assign tail = " " | append: change -%}{%- if by -%}{%- assign tail = tail | append: " by " | append: by -%}{%- endif -%}',
  '{%- else -%}',
  '{%- assign tail = " (" | append: group.alerts_count | append: " alert" -%}{%- if group.alerts_count != 1 -%}{%- assign tail = tail | append: "s" -%}{%- endif -%}{%- assign tail = tail | append: ")" -%}',
  '{%- endif -%}',
  '{%- assign head = "Grafana OnCall: " -%}',
  '{%- assign room = 160 | minus: head.size | minus: tail.size | minus: 2 -%}',
  '{%- if link and link.size < 100 -%}{%- assign room = room | minus: link.size | minus: 1 -%}{%- endif -%}',
  '{%- if room < 20 -%}{%- assign room = 20 -%}{%- endif -%}',
  '{{ head }}"{{ title | truncate: room }}"{{ tail }}{% if link and link.size < 100 %} {{ link }}{% endif %}',
].join('\n');

function onCallDedupe(body: WebhookBody, webhook: InboundWebhook): DedupeKey {
  const group = textField(body, 'alert_group', 'id') ?? textField(body, 'alert_group_id');
  const type = textField(body, 'event', 'type');
  const to = queryKeyPart(webhook);
  if (group === undefined || type === undefined) {
    return {
      key: `grafana-oncall:body:${sha256Hex(webhook.body)}:${to}`,
      windowSeconds: GRAFANA_ONCALL.retriedEventWindowSeconds,
    };
  }
  const base = `grafana-oncall:${idKeyPart(group)}:${idKeyPart(type)}`;
  if (SENT_NOW.has(type)) {
    // `event.time` changes on every attempt: the user, the webhook and the URL name the delivery.
    const user = textField(body, 'user', 'id') ?? '';
    const webhookId = textField(body, 'webhook', 'id') ?? '';
    return {
      key: `${base}:${idKeyPart(user)}:${idKeyPart(webhookId)}:${to}`,
      windowSeconds: GRAFANA_ONCALL.retriedEventWindowSeconds,
    };
  }
  return {
    key: `${base}:${idKeyPart(textField(body, 'event', 'time') ?? '')}:${to}`,
    windowSeconds: GRAFANA_ONCALL.statusEventWindowSeconds,
  };
}

/**
 * Grafana OnCall's outgoing webhooks, above all the "Personal Notification" trigger type (a user's
 * notification policy step), with **Forward All** on so that the body is OnCall's whole event
 * (`event`, `user`, `alert_group`, `alert_payload`, `integration`, …). OnCall signs nothing: it
 * sends the webhook's **Authorization Header** as it is, or **Username** and **Password** as Basic auth
 * (engine/apps/webhooks/models/webhook.py), so the route's secret is checked as for `generic`:
 * `Authorization: Bearer <secret>`, Basic with the secret as password, or `?token=`.
 *
 * The number comes from the user's context data (`{{ event.user.phone }}`, set in their profile) or
 * the URL (`{{ query.to }}`), limited by `allowRecipients`.
 */
export const grafanaOncall: SourcePack = {
  name: 'grafana-oncall',
  secretKind: 'credential',
  defaultDelivery: DeliveryPolicy.AtLeastOnce,
  digestNoun: 'alert groups',
  recipientsFromRequest: true,
  // Per-user URLs (?to=) are one way OnCall names the person; config/local.yaml's `asha`.
  examples: { directory: 'grafana-oncall', query: { to: '0712345678' } },
  sign: bearer,
  capturedHeaders: [],
  description:
    'Grafana OnCall outgoing webhooks (Personal Notification, Forward All): alert groups and their status changes, by Bearer or Basic credential.',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate: (webhook, { secret }) => checkCredentialOrToken(webhook, secret),

  parse: (webhook) => parseBody(webhook),

  ping: () => undefined,

  dedupe: (body, webhook) => onCallDedupe(body, webhook),
};
