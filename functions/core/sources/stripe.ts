import { DeliveryPolicy } from '../config/policies';
import { authFailure, hmac, safeEqual, sha256Hex } from './auth';
import { parseBody, textField } from './body';
import { checkTimestamp, idKeyPart } from './shared';
import type { AuthOutcome, InboundWebhook, SignInput, SourcePack } from './types';
import { sha256Hmac, unixSeconds } from './sign';
import { HOUR_SECONDS } from '../defaults';

export const STRIPE = {
  /** Live mode retries one event, same `id`, with exponential backoff for up to 3 days. */
  dedupeWindowSeconds: 72 * HOUR_SECONDS,
  /** What Stripe's libraries allow by default; a route's `toleranceSeconds` is what applies. */
  defaultToleranceSeconds: 300,
} as const;

interface StripeSignatureHeader {
  readonly timestamp: string;
  readonly v1: readonly string[];
}

const TIMESTAMP = /^[0-9]{1,12}$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/**
 * Reads `t=<unix>,v1=<hex>[,v1=<hex>…][,v0=…]`. Several `v1` appear while an endpoint secret is
 * being rolled; `v0` (and any other scheme) is ignored as Stripe's libraries do.
 */
function parseSignatureHeader(value: string): StripeSignatureHeader | undefined {
  const timestamps: string[] = [];
  const v1: string[] = [];
  for (const element of value.split(',')) {
    const equals = element.indexOf('=');
    if (equals < 0) continue;
    const name = element.slice(0, equals).trim();
    const part = element.slice(equals + 1).trim();
    if (name === 't') timestamps.push(part);
    else if (name === 'v1' && HEX_SHA256.test(part)) v1.push(part.toLowerCase());
  }
  const [timestamp] = timestamps;
  if (timestamps.length !== 1 || timestamp === undefined || !TIMESTAMP.test(timestamp)) return undefined;
  return { timestamp, v1 };
}

function verifyStripeSignature(webhook: InboundWebhook, secret: string, toleranceSeconds: number): AuthOutcome {
  if (secret === '') return authFailure('no secret is configured for this route');
  const value = webhook.headers['stripe-signature']?.trim();
  if (!value) return authFailure('missing Stripe-Signature header');
  const header = parseSignatureHeader(value);
  if (header === undefined) return authFailure('malformed Stripe-Signature header: needs exactly one t=<unix seconds>');
  if (header.v1.length === 0) return authFailure('Stripe-Signature header has no v1 signature');

  // Signed payload: the timestamp as sent, a dot, then the body bytes untouched (never re-encoded).
  const signedPayload = Buffer.concat([Buffer.from(`${header.timestamp}.`, 'utf8'), webhook.body]);
  // The whole `whsec_…` string is the key, prefix included.
  const expected = hmac('sha256', secret, signedPayload, 'hex');
  // Every candidate is compared, so the time taken does not tell which one (if any) matched.
  const matches = header.v1.reduce((found, candidate) => safeEqual(candidate, expected) || found, false);
  if (!matches) return authFailure('no v1 signature in Stripe-Signature matches the body');

  // Checked after the signature, as Stripe's libraries do, and in both directions (their libraries
  // only reject stale ones): a timestamp from the future would stay replayable for longer.
  return checkTimestamp(header.timestamp, webhook.receivedAt, toleranceSeconds);
}

/** Amounts are integer minor units in `data.object`; `money_minor` formats them with the lower-case currency. */
const DEFAULT_TEMPLATE = [
  '{%- unless livemode %}[TEST] {% endunless -%}',
  '{%- assign o = data.object -%}',
  '{%- case type -%}',
  "{%- when 'payment_intent.succeeded' -%}",
  'Payment received: {{ o.amount_received | default: o.amount | money_minor: o.currency }}{% if o.description %} - {{ o.description }}{% endif %}',
  "{%- when 'payment_intent.payment_failed' -%}",
  'Payment failed: {{ o.amount | money_minor: o.currency }} - {{ o.last_payment_error.message | default: o.last_payment_error.code }}',
  "{%- when 'charge.succeeded' -%}",
  'Charge succeeded: {{ o.amount | money_minor: o.currency }}{% if o.billing_details.name %} from {{ o.billing_details.name }}{% endif %}',
  "{%- when 'charge.refunded' -%}",
  'Refunded {{ o.amount_refunded | money_minor: o.currency }} of {{ o.amount | money_minor: o.currency }}{% if o.billing_details.name %} to {{ o.billing_details.name }}{% endif %}',
  "{%- when 'invoice.paid' -%}",
  'Invoice {{ o.number }} paid: {{ o.amount_paid | money_minor: o.currency }}{% if o.customer_name %} by {{ o.customer_name }}{% endif %}',
  "{%- when 'invoice.payment_failed' -%}",
  'Invoice {{ o.number }} payment failed: {{ o.amount_due | money_minor: o.currency }}{% if o.customer_name %} ({{ o.customer_name }}){% endif %}',
  '{%- else -%}',
  'Stripe {{ type }}: {{ o.id }}',
  '{%- endcase -%}',
].join('\n');

/**
 * Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with
 * the whole `whsec_…` string.
 */
const signStripe = ({ body, secret, now = new Date() }: SignInput): Record<string, string> => {
  const timestamp = unixSeconds(now);
  const signed = Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), body]);
  return {
    'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    'Stripe-Signature': `t=${timestamp},v1=${sha256Hmac(secret, signed, 'hex')}`,
  };
};

/**
 * Stripe webhook endpoints: `Stripe-Signature` (`t=…,v1=…`) over `<t>.<raw body>` with the
 * endpoint's `whsec_…` secret, within the route's timestamp tolerance; deduplicated on the event id.
 *
 * @example
 * ```ts
 * stripe.authenticate(webhook, { secret: 'whsec_…', toleranceSeconds: 300 });
 * stripe.dedupe(stripe.parse(webhook), webhook); // { key: 'stripe:event:evt_…', windowSeconds: 259200 }
 * ```
 */
export const stripe: SourcePack = {
  name: 'stripe',
  secretKind: 'whsec',
  defaultDelivery: DeliveryPolicy.AtMostOnce,
  digestNoun: 'payments',
  examples: { directory: 'stripe' },
  sign: signStripe,
  capturedHeaders: [],
  description:
    'Stripe webhook endpoints (Stripe-Signature with timestamp tolerance): payments, charges, refunds, invoices.',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate: (webhook, { secret, toleranceSeconds }) => verifyStripeSignature(webhook, secret, toleranceSeconds),

  parse: (webhook) => parseBody(webhook),

  // Stripe has no ping. Events from `stripe trigger` (Stripe CLI) or the Dashboard's test sends
  // are ordinary signed events with `livemode: false`, and the default template marks them [TEST].
  ping: () => undefined,

  dedupe: (body, webhook) => {
    const eventId = textField(body, 'id');
    const key = eventId ? `stripe:event:${idKeyPart(eventId)}` : `stripe:body:${sha256Hex(webhook.body)}`;
    return { key, windowSeconds: STRIPE.dedupeWindowSeconds };
  },
};
