import { DeliveryPolicy } from '../config/policies';
import { parseBody } from './body';
import { BASE64_SHA256, headerValue, verifyBodySignature, type BodySignatureScheme } from './body-signature';
import { bodySignedDedupe, idKeyPart } from './shared';
import type { SignInput, SourcePack } from './types';
import { callerHeader, freshId, sha256Hmac } from './sign';
import { HOUR_SECONDS } from '../defaults';

export const SHOPIFY = {
  /**
   * Shopify retries a failed delivery 8 times over 4 hours with the original payload, and warns
   * that deliveries can arrive up to a day late; 48 hours covers both with room to spare (and the
   * 48-hour retry schedule Shopify used before September 2024).
   */
  dedupeWindowSeconds: 48 * HOUR_SECONDS,
} as const;

// The `X-` names are the classic webhooks' headers; the unprefixed ones are what Shopify's newer
// Events deliveries send, with the same HMAC over the same bytes.
const HMAC_HEADERS = ['x-shopify-hmac-sha256', 'shopify-hmac-sha256'] as const;
const EVENT_ID_HEADERS = ['x-shopify-event-id', 'shopify-event-id'] as const;
const WEBHOOK_ID_HEADERS = ['x-shopify-webhook-id', 'shopify-webhook-id'] as const;
const TOPIC_HEADERS = ['x-shopify-topic', 'shopify-topic'] as const;

const SIGNATURE_SCHEME: BodySignatureScheme = {
  headers: HMAC_HEADERS,
  label: 'X-Shopify-Hmac-Sha256',
  encoding: 'base64',
  extract: (value) => (BASE64_SHA256.test(value) ? value : undefined),
};

/**
 * Order topics by `X-Shopify-Topic`. A guest checkout has no `customer`, so names fall back to the
 * billing address.
 */
const DEFAULT_TEMPLATE = [
  '{%- assign buyer = customer.first_name | default: billing_address.first_name -%}',
  '{%- assign buyer_last = customer.last_name | default: billing_address.last_name -%}',
  "{%- case headers['x-shopify-topic'] -%}",
  "{%- when 'orders/create' -%}",
  'New order {{ name }}: {{ total_price | money: currency }} from {{ buyer }} {{ buyer_last }}',
  "{%- when 'orders/paid' -%}",
  'Order {{ name }} paid: {{ total_price | money: currency }} from {{ buyer }} {{ buyer_last }}',
  "{%- when 'orders/cancelled' -%}",
  'Order {{ name }} cancelled ({{ cancel_reason | default: "no reason" }}): {{ total_price | money: currency }}',
  "{%- when 'orders/fulfilled' -%}",
  'Order {{ name }} fulfilled for {{ buyer }} {{ buyer_last }}',
  '{%- else -%}',
  "Shopify {{ headers['x-shopify-topic'] }}: {{ name | default: title | default: id }}",
  '{%- endcase -%}',
].join('\n');

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>`, the topic (default
 * `orders/create`) and fresh webhook and event ids.
 */
const signShopify = ({ body, secret, headers, now = new Date() }: SignInput): Record<string, string> => ({
  'User-Agent': 'Shopify-Captain-Hook',
  'X-Shopify-Topic': callerHeader(headers, 'x-shopify-topic') ?? 'orders/create',
  'X-Shopify-Shop-Domain': callerHeader(headers, 'x-shopify-shop-domain') ?? 'sms-relay-test.myshopify.com',
  'X-Shopify-API-Version': '2025-01',
  'X-Shopify-Webhook-Id': callerHeader(headers, 'x-shopify-webhook-id') ?? freshId(),
  'X-Shopify-Event-Id': callerHeader(headers, 'x-shopify-event-id') ?? freshId(),
  'X-Shopify-Triggered-At': now.toISOString(),
  'X-Shopify-Hmac-Sha256': sha256Hmac(secret, body, 'base64'),
});

/**
 * Shopify webhooks (app subscriptions and admin notifications): base64 `X-Shopify-Hmac-Sha256`
 * keyed with the app's client secret (or the store's webhook signing key), JSON bodies whose ids
 * beyond 2^53 stay exact strings.
 *
 * @example
 * ```ts
 * const body = shopify.parse(webhook); // { id: '820982911946154508', name: '#1001', ... }
 * const { key } = shopify.dedupe(body, webhook); // 'shopify:event:orders/create:<X-Shopify-Event-Id>'
 * ```
 */
export const shopify: SourcePack = {
  name: 'shopify',
  secretKind: 'key',
  defaultDelivery: DeliveryPolicy.AtMostOnce,
  digestNoun: 'orders',
  examples: { directory: 'shopify', eventHeaders: (stem) => ({ 'x-shopify-topic': stem.replace('-', '/') }) },
  sign: signShopify,
  capturedHeaders: [...TOPIC_HEADERS, ...WEBHOOK_ID_HEADERS, ...EVENT_ID_HEADERS],
  description:
    'Shopify webhooks (X-Shopify-Hmac-Sha256): orders created, paid, cancelled, fulfilled, and any other topic.',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate: (webhook, { secret }) => verifyBodySignature(webhook, secret, SIGNATURE_SCHEME),

  parse: (webhook) => parseBody(webhook),

  // Shopify has no ping: "Send test notification" delivers a signed sample of the topic, and whoever
  // clicks it expects to see the SMS it produces.
  ping: () => undefined,

  // Shopify's duplicate guide keys on the event id; the topic goes with it because one change can
  // raise several topics (orders/create and orders/paid) that are each worth a message.
  dedupe: (_body, webhook) => {
    const eventId = headerValue(webhook, EVENT_ID_HEADERS);
    const topic = headerValue(webhook, TOPIC_HEADERS) ?? '-';
    const webhookId = headerValue(webhook, WEBHOOK_ID_HEADERS);
    const key =
      eventId !== undefined
        ? `shopify:event:${idKeyPart(topic)}:${idKeyPart(eventId)}`
        : webhookId !== undefined
          ? `shopify:webhook:${idKeyPart(webhookId)}`
          : undefined;
    return bodySignedDedupe('shopify', key, webhook, SHOPIFY.dedupeWindowSeconds);
  },
};
