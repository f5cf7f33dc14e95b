import { DeliveryPolicy } from '../config/policies';
import { AUTH_OK, authFailure, safeEqual, sha256Hex } from './auth';
import { field, parseBody } from './body';
import { BadPayloadError } from './errors';
import { opsgenieResponderRecipients } from './opsgenie-responders';
import type { AuthOutcome, InboundWebhook, SignInput, SourcePack, WebhookBody } from './types';

export const OPSGENIE = {
  /**
   * A create carries no delivery id, so its retries are caught by the body's hash. Short on purpose:
   * a retry that comes later finds the alias's incident open and sends nothing anyway, while an
   * alert that closed and fires again (the same body) must page.
   */
  dedupeWindowSeconds: 60,
  /** The credential's scheme: `Authorization: GenieKey <key>`, as every Opsgenie integration sends it. */
  scheme: 'GenieKey',
} as const;

/** A create's fields and the JSON type each must have (Opsgenie answers 422 to any other). */
const FIELD_TYPES = {
  message: 'string',
  alias: 'string',
  description: 'string',
  entity: 'string',
  source: 'string',
  priority: 'string',
  user: 'string',
  note: 'string',
  tags: 'array',
  actions: 'array',
  responders: 'array',
  visibleTo: 'array',
  details: 'object',
} as const;

const PRIORITIES = new Set(['P1', 'P2', 'P3', 'P4', 'P5']);

/** The priorities that wake people: critical for the credit reserve, whatever the route's `priority`. */
const CRITICAL_PRIORITIES = new Set(['P1', 'P2']);

/** The JSON type of a value as {@link FIELD_TYPES} names them. */
const jsonType = (value: unknown): string => (Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value);

/**
 * A create alert request (`POST v2/alerts`): a JSON object whose `message` is a non-empty string,
 * every other known field of its JSON type, and `priority` one of P1–P5. Throws `BadPayloadError`
 * (the API answers it 422, as Opsgenie does) with the first field that is wrong.
 *
 * @example
 * ```ts
 * parseCreateAlert(webhook); // { message: 'Disk full', alias: 'disk-web-1', priority: 'P1' }
 * ```
 */
export function parseCreateAlert(webhook: InboundWebhook): WebhookBody {
  const body = parseBody(webhook);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadPayloadError('expected an Opsgenie alert: a JSON object with a "message"');
  }
  const fields = body as Record<string, unknown>;
  for (const [name, type] of Object.entries(FIELD_TYPES)) {
    const value = fields[name];
    if (value !== undefined && jsonType(value) !== type) throw new BadPayloadError(`"${name}" must be a ${type}`);
  }
  if (typeof fields['message'] !== 'string' || fields['message'].trim() === '') {
    throw new BadPayloadError('Message can not be empty.');
  }
  const priority = fields['priority'];
  if (typeof priority === 'string' && !PRIORITIES.has(priority)) {
    throw new BadPayloadError('"priority" must be one of P1, P2, P3, P4, P5');
  }
  return body;
}

/**
 * `Authorization: GenieKey <key>` (the scheme in any case), the key compared in constant time.
 *
 * @example
 * ```ts
 * checkGenieKey(webhook, context.secret); // { ok: true }
 * ```
 */
export function checkGenieKey(webhook: InboundWebhook, secret: string): AuthOutcome {
  // An empty secret would match "GenieKey " with nothing after it.
  if (secret === '') return authFailure('no secret is configured for this route');
  const header = webhook.headers['authorization']?.trim();
  if (header === undefined || header === '') return authFailure('missing Authorization header (GenieKey)');
  const scheme = /^(\S+)(?:[ \t]+|$)/.exec(header)?.[1] ?? '';
  if (scheme.toLowerCase() !== OPSGENIE.scheme.toLowerCase()) {
    return authFailure('unsupported Authorization scheme; use GenieKey');
  }
  return safeEqual(header.slice(scheme.length).trimStart(), secret) ? AUTH_OK : authFailure('GenieKey does not match');
}

/** How integrations present the key (Alertmanager, Grafana and Opsgenie's own SDKs alike). */
const signOpsgenie = ({ secret }: SignInput): Record<string, string> => ({
  Authorization: `${OPSGENIE.scheme} ${secret}`,
});

/**
 * Opsgenie's alert API, as integrations that page through Opsgenie call it (Alertmanager's
 * `opsgenie_configs`, Grafana's Opsgenie contact point, any Opsgenie client) with the relay's URL in
 * place of `api.opsgenie.com`. This pack is the create (`POST v2/alerts`, the only request that
 * sends an SMS); the rest of the API (close, acknowledge, notes, the alert and request lookups,
 * heartbeat pings) is answered by `functions/relay/opsgenie-api.ts`.
 *
 * An alert is an incident keyed by its `alias`, as Opsgenie deduplicates by alias: a create with the
 * alias of an open incident is a repeat. A create without an alias is keyed by its message instead
 * (Opsgenie would open a new alert for each; the relay does not page twice for one text while it is
 * open).
 *
 * @example
 * ```yaml
 * # alertmanager.yml
 * receivers:
 *   - name: sms
 *     opsgenie_configs:
 *       - api_url: https://relay.example.com/hooks/og/
 *         api_key_file: /etc/alertmanager/sms-relay-genie-key
 * ```
 */
export const opsgenie: SourcePack = {
  name: 'opsgenie',
  secretKind: 'credential',
  defaultDelivery: DeliveryPolicy.AtLeastOnce,
  // A create never resolves: the API's close does (functions/relay/opsgenie-api.ts).
  incident: { key: '{{ alias | default: message }}', resolved: 'false', quietRepeats: true, always: true },
  digestNoun: 'alerts',
  examples: { directory: 'opsgenie' },
  // Integrations post their creates to Opsgenie's `v2/alerts` below the API URL they are given.
  createPath: 'v2/alerts',
  sign: signOpsgenie,
  capturedHeaders: [],
  description:
    "Opsgenie's alert API (Authorization: GenieKey): Alertmanager, Grafana and other Opsgenie integrations by changing the API URL.",
  defaultTemplate: '[{{ priority | default: "P3" }}] {{ message }}',

  authenticate: (webhook, { secret }) => checkGenieKey(webhook, secret),

  parse: (webhook) => parseCreateAlert(webhook),

  ping: () => undefined,

  dedupe: (_body, webhook) => ({
    key: `opsgenie:create:${sha256Hex(webhook.body)}`,
    windowSeconds: OPSGENIE.dedupeWindowSeconds,
  }),

  // Who the alert names (`responders`) that the config knows; nobody known: the route's recipients.
  recipients: (body, directory) => opsgenieResponderRecipients(field(body, 'responders'), directory),

  critical: (body) => {
    const priority = field(body, 'priority');
    return typeof priority === 'string' && CRITICAL_PRIORITIES.has(priority);
  },
};
