import { DeliveryPolicy } from '../config/policies';
import { AUTH_OK, sha256Hex } from './auth';
import { parseBody, textField } from './body';
import { BASE64_SHA256, headerValue, verifyBodySignature, type BodySignatureScheme } from './body-signature';
import { bodySignedDedupe, idKeyPart } from './shared';
import type { InboundWebhook, SignInput, SourcePack, WebhookBody } from './types';
import { callerHeader, freshHex, sha256Hmac } from './sign';
import { HOUR_SECONDS } from '../defaults';

export const WOOCOMMERCE = {
  /**
   * WooCommerce never retries a delivery (it counts failures and disables the webhook); repeats come
   * from hooks firing twice for one change, minutes apart. Keys are built from the resource's state,
   * so a day is generous and still safe.
   */
  dedupeWindowSeconds: 24 * HOUR_SECONDS,
} as const;

const SIGNATURE_SCHEME: BodySignatureScheme = {
  headers: ['x-wc-webhook-signature'],
  label: 'X-WC-Webhook-Signature',
  encoding: 'base64',
  extract: (value) => (BASE64_SHA256.test(value) ? value : undefined),
};

/** The body of the ping WooCommerce posts when a webhook is saved active: `webhook_id=<id>`, nothing else. */
const CREATION_PING = /^webhook_id=([0-9]{1,20})$/;
const LONGEST_PING = 'webhook_id='.length + 20;

/**
 * Whether the body is exactly WooCommerce's creation ping. It is posted unsigned and without any
 * `X-WC-Webhook-*` header, so the body is all there is to recognise it by.
 *
 * @example
 * ```ts
 * isCreationPing(webhookOf({ body: 'webhook_id=42' })); // true
 * ```
 */
export function isCreationPing(webhook: InboundWebhook): boolean {
  return creationPingId(webhook) !== undefined;
}

function creationPingId(webhook: InboundWebhook): string | undefined {
  if (webhook.body.length > LONGEST_PING) return undefined;
  // The pattern is ASCII, so a byte-for-byte latin1 reading cannot make a non-ping match.
  return CREATION_PING.exec(Buffer.from(webhook.body).toString('latin1'))?.[1];
}

// Resources are created (or deleted, or restored) once: any repeat of those is a duplicate however
// its body differs. Updates repeat legitimately, so their key includes the modification time.
const ONCE_PER_RESOURCE: ReadonlySet<string> = new Set(['created', 'deleted', 'restored']);

const DEFAULT_TEMPLATE = [
  "{%- assign wc_event = headers['x-wc-webhook-event'] -%}",
  "{%- case headers['x-wc-webhook-resource'] -%}",
  "{%- when 'order' -%}",
  '{%- if number -%}',
  'Order #{{ number }} {{ status }}: {{ total | money: currency }} - {{ billing.first_name }} {{ billing.last_name }}',
  '{%- else -%}',
  'Order {{ id }} {{ wc_event }}',
  '{%- endif -%}',
  "{%- when 'product' -%}",
  'Product {{ name | default: id }} {{ wc_event }}{% if stock_quantity %}, stock {{ stock_quantity }}{% endif %}',
  "{%- when 'customer' -%}",
  'Customer {{ first_name }} {{ last_name }} {{ wc_event }}',
  '{%- else -%}',
  "WooCommerce {{ headers['x-wc-webhook-topic'] }}{% if id %} {{ id }}{% endif %}",
  '{%- endcase -%}',
].join('\n');

/**
 * WooCommerce: `X-WC-Webhook-Signature: <base64 HMAC-SHA256 of the body>`, the topic (default
 * `order.created`) with its resource and event, the shop's URL and a delivery id.
 */
const signWooCommerce = ({ body, secret, headers }: SignInput): Record<string, string> => {
  const topic = callerHeader(headers, 'x-wc-webhook-topic') ?? 'order.created';
  const dot = topic.indexOf('.');
  return {
    'User-Agent': 'WooCommerce/9.4.2 Hookshot (WordPress/6.7.1)',
    'X-WC-Webhook-Source': callerHeader(headers, 'x-wc-webhook-source') ?? 'https://shop.example/',
    'X-WC-Webhook-Topic': topic,
    'X-WC-Webhook-Resource': dot < 0 ? topic : topic.slice(0, dot),
    'X-WC-Webhook-Event': dot < 0 ? topic : topic.slice(dot + 1),
    'X-WC-Webhook-ID': callerHeader(headers, 'x-wc-webhook-id') ?? '1',
    'X-WC-Webhook-Delivery-ID': freshHex(),
    'X-WC-Webhook-Signature': sha256Hmac(secret, body, 'base64'),
  };
};

/**
 * WooCommerce webhooks: base64 `X-WC-Webhook-Signature` over the raw JSON body with the webhook's
 * secret; the unsigned creation ping (`webhook_id=<id>`) is acknowledged without a send.
 *
 * @example
 * ```ts
 * const body = woocommerce.parse(webhook);
 * woocommerce.ping(body, webhook); // 'woocommerce creation ping (webhook 42)' for the ping
 * ```
 */
export const woocommerce: SourcePack = {
  name: 'woocommerce',
  secretKind: 'key',
  defaultDelivery: DeliveryPolicy.AtMostOnce,
  digestNoun: 'orders',
  examples: {
    directory: 'woocommerce',
    // WooCommerce sends the topic and its two halves: `order.created`, `order`, `created`.
    eventHeaders: (stem) => {
      const [resource, event = resource] = stem.split('-', 2) as [string, string?];
      return {
        'x-wc-webhook-topic': `${resource}.${event}`,
        'x-wc-webhook-resource': resource,
        'x-wc-webhook-event': event,
      };
    },
  },
  sign: signWooCommerce,
  capturedHeaders: [
    'x-wc-webhook-topic',
    'x-wc-webhook-event',
    'x-wc-webhook-resource',
    'x-wc-webhook-source',
    'x-wc-webhook-id',
    'x-wc-webhook-delivery-id',
  ],
  description:
    'WooCommerce webhooks (X-WC-Webhook-Signature): orders, products, customers, coupons; creation ping acknowledged.',
  defaultTemplate: DEFAULT_TEMPLATE,

  // The creation ping carries no signature, yet WooCommerce refuses to activate the webhook unless
  // it gets a 200. Letting exactly that body through is harmless: `ping` recognises the same bytes,
  // so it never reaches a send, and it carries nothing but a number.
  authenticate: (webhook, { secret }) =>
    isCreationPing(webhook) ? AUTH_OK : verifyBodySignature(webhook, secret, SIGNATURE_SCHEME),

  parse: (webhook) => {
    const pingId = creationPingId(webhook);
    return pingId !== undefined ? { webhook_id: pingId } : parseBody(webhook);
  },

  ping: (_body, webhook) => {
    const pingId = creationPingId(webhook);
    return pingId !== undefined ? `woocommerce creation ping (webhook ${pingId})` : undefined;
  },

  // `X-WC-Webhook-Delivery-ID` is useless here: it is a fresh hash of webhook id and current second
  // for every delivery, so it never repeats for a repeat, and two different events in one second share it.
  dedupe: (body, webhook) =>
    creationPingId(webhook) === undefined
      ? bodySignedDedupe('woocommerce', dedupeKey(body, webhook), webhook, WOOCOMMERCE.dedupeWindowSeconds)
      : { key: dedupeKey(body, webhook), windowSeconds: WOOCOMMERCE.dedupeWindowSeconds },
};

function dedupeKey(body: WebhookBody, webhook: InboundWebhook): string {
  const pingId = creationPingId(webhook);
  if (pingId !== undefined) return `woocommerce:ping:${pingId}`;
  const topic = headerValue(webhook, ['x-wc-webhook-topic']);
  const id = textField(body, 'id');
  if (topic === undefined || id === undefined) return bodyKey(webhook);
  const event = headerValue(webhook, ['x-wc-webhook-event']) ?? topic.slice(topic.indexOf('.') + 1);
  const resource = [headerValue(webhook, ['x-wc-webhook-source']) ?? '-', topic, id].map(idKeyPart).join(':');
  if (ONCE_PER_RESOURCE.has(event)) return `woocommerce:${resource}`;
  const modified = textField(body, 'date_modified_gmt') ?? textField(body, 'date_modified');
  return modified === undefined ? bodyKey(webhook) : `woocommerce:${resource}:${idKeyPart(modified)}`;
}

function bodyKey(webhook: InboundWebhook): string {
  return `woocommerce:body:${sha256Hex(webhook.body)}`;
}
