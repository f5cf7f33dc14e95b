import { DeliveryPolicy } from '../config/policies';
import { checkCredentialOrToken, sha256Hex } from './auth';
import { field, parseBody, textField } from './body';
import { idKeyPart } from './shared';
import type { SourcePack, WebhookBody } from './types';
import { bearer } from './sign';
import { HOUR_SECONDS } from '../defaults';

export const UPTIME_KUMA = {
  /**
   * Uptime Kuma posts a notification once and never retries it; a repeat is the same heartbeat
   * posted again (a second notification entry pointing at the route). A day is generous.
   */
  dedupeWindowSeconds: 24 * HOUR_SECONDS,
} as const;

/**
 * The "Test" button of a notification posts `msg: "<notification name> Testing"` with `heartbeat`
 * and `monitor` both null. Certificate and domain expiry warnings are also posted without a
 * heartbeat or monitor, so the missing objects alone do not make a test: the message must say so.
 */
const TEST_MESSAGE = / Testing$/;

/**
 * `heartbeat.status`: 0 down, 1 up, 2 pending, 3 maintenance (Uptime Kuma notifies on the first two).
 * Messages without a heartbeat (certificate or domain expiry warnings) are sent as Uptime Kuma wrote them.
 */
const DEFAULT_TEMPLATE = [
  '{%- if heartbeat and monitor -%}',
  '{%- case heartbeat.status -%}',
  '{%- when 0 -%}[DOWN]',
  '{%- when 1 -%}[UP]',
  '{%- when 2 -%}[PENDING]',
  '{%- when 3 -%}[MAINTENANCE]',
  '{%- else -%}[{{ heartbeat.status }}]',
  '{%- endcase %} {{ monitor.name }}: {{ heartbeat.msg | default: msg }}',
  '{%- else -%}',
  '{{ msg }}',
  '{%- endif -%}',
].join('\n');

function isTestNotification(body: WebhookBody): boolean {
  return (
    field(body, 'heartbeat') == null &&
    field(body, 'monitor') == null &&
    TEST_MESSAGE.test(textField(body, 'msg') ?? '')
  );
}

/**
 * Uptime Kuma's "Webhook" notification type with request body "application/json" (its default):
 * `{ heartbeat, monitor, msg }`. Uptime Kuma signs nothing; it authenticates with the route's secret
 * as a Bearer token set in the notification's "Additional Headers", or as `?token=` in its URL.
 *
 * @example
 * ```json
 * { "Authorization": "Bearer <the route's secret>" }
 * ```
 */
export const uptimeKuma: SourcePack = {
  name: 'uptime-kuma',
  secretKind: 'credential',
  defaultDelivery: DeliveryPolicy.AtLeastOnce,
  incident: { key: '{{ monitor.id }}', resolved: 'heartbeat.status == 1' },
  digestNoun: 'monitor events',
  examples: { directory: 'uptime-kuma' },
  sign: bearer,
  capturedHeaders: [],
  description: 'Uptime Kuma webhook notifications (Bearer token or ?token=): monitors going down and up.',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate: (webhook, { secret }) => checkCredentialOrToken(webhook, secret),

  parse: (webhook) => parseBody(webhook),

  ping: (body) => (isTestNotification(body) ? 'uptime-kuma test notification' : undefined),

  // One heartbeat is one state change of one monitor: its monitor, time and status name it.
  dedupe: (body, webhook) => {
    const monitorId = textField(body, 'monitor', 'id') ?? textField(body, 'heartbeat', 'monitorID');
    const time = textField(body, 'heartbeat', 'time');
    const status = textField(body, 'heartbeat', 'status') ?? '-';
    const key =
      monitorId !== undefined && time !== undefined
        ? `uptime-kuma:heartbeat:${[monitorId, time, status].map(idKeyPart).join(':')}`
        : `uptime-kuma:body:${sha256Hex(webhook.body)}`;
    return { key, windowSeconds: UPTIME_KUMA.dedupeWindowSeconds };
  },
};
