import { createHmac, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { signSnsMessage, snsHeaders } from '../../helpers/sns';

/**
 * Signers written from each sender's documented scheme, independently of the relay's verifiers,
 * so a suite run checks the relay against the schemes, not against itself.
 */

export type Headers = Record<string, string>;

const json = { 'content-type': 'application/json' } as const;

const hmacHex = (key: string | Buffer, data: string | Buffer): string =>
  createHmac('sha256', key).update(data).digest('hex');
const hmacBase64 = (key: string | Buffer, data: string | Buffer): string =>
  createHmac('sha256', key).update(data).digest('base64');

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC of the body>`, the delivery id in `X-GitHub-Delivery`. */
export function githubHeaders(
  secret: string,
  body: string,
  { delivery = randomUUID() as string, event = 'issues' } = {},
): Headers {
  return {
    ...json,
    'x-github-event': event,
    'x-github-delivery': delivery,
    'x-hub-signature-256': `sha256=${hmacHex(secret, body)}`,
  };
}

/** Shopify: base64 HMAC in `X-Shopify-Hmac-Sha256`, event id and topic in their headers. */
export function shopifyHeaders(
  secret: string,
  body: string,
  { eventId = randomUUID(), topic = 'orders/create' } = {},
): Headers {
  return {
    ...json,
    'x-shopify-topic': topic,
    'x-shopify-event-id': eventId,
    'x-shopify-webhook-id': randomUUID(),
    'x-shopify-hmac-sha256': hmacBase64(secret, body),
  };
}

/** WooCommerce: base64 HMAC in `X-WC-Webhook-Signature`. */
export function woocommerceHeaders(secret: string, body: string, { topic = 'order.created' } = {}): Headers {
  const [resource = 'order', event = 'created'] = topic.split('.');
  return {
    ...json,
    'x-wc-webhook-source': 'https://shop.example/',
    'x-wc-webhook-topic': topic,
    'x-wc-webhook-resource': resource,
    'x-wc-webhook-event': event,
    'x-wc-webhook-delivery-id': randomBytes(16).toString('hex'),
    'x-wc-webhook-signature': hmacBase64(secret, body),
  };
}

/** Stripe: `Stripe-Signature: t=<unix>,v1=<hex HMAC of "<t>.<body>">`, keyed with the whole `whsec_` string. */
export function stripeHeaders(secret: string, body: string, { timestamp = nowSeconds() } = {}): Headers {
  return { ...json, 'stripe-signature': `t=${timestamp},v1=${hmacHex(secret, `${timestamp}.${body}`)}` };
}

/** Standard Webhooks: `v1,<base64 HMAC of "<id>.<t>.<body>">`, keyed with the base64-decoded part after `whsec_`. */
export function standardWebhooksHeaders(
  secret: string,
  body: string,
  { id = `msg_${randomUUID()}`, timestamp = nowSeconds() } = {},
): Headers {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return {
    ...json,
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${hmacBase64(key, `${id}.${timestamp}.${body}`)}`,
  };
}

/**
 * Grafana's HMAC (grafana/alerting `http/hmac.go`): hex HMAC of the body, or of `<t>:<body>` when
 * the contact point names a timestamp header.
 */
export function grafanaHmacHeaders(secret: string, body: string, { timestamp }: { timestamp?: number } = {}): Headers {
  if (timestamp === undefined) return { ...json, 'x-grafana-alerting-signature': hmacHex(secret, body) };
  return {
    ...json,
    'x-grafana-alerting-timestamp': String(timestamp),
    'x-grafana-alerting-signature': hmacHex(secret, `${timestamp}:${body}`),
  };
}

/**
 * The reliability suite's `hmac` route (config.ts): `x-relay-signature: v1=<base64 HMAC-SHA512 of
 * "<t>.<body>">`, the timestamp in `x-relay-timestamp`, the delivery id in `x-delivery-id`.
 */
export function hmacRouteHeaders(
  secret: string,
  body: string,
  {
    timestamp = nowSeconds(),
    delivery = randomUUID() as string,
    algorithm = 'sha512',
    encoding = 'base64' as 'hex' | 'base64',
    prefix = 'v1=',
  } = {},
): Headers {
  const signature = createHmac(algorithm, secret).update(`${timestamp}.${body}`).digest(encoding);
  return {
    ...json,
    'x-relay-timestamp': String(timestamp),
    'x-delivery-id': delivery,
    'x-relay-signature': `${prefix}${signature}`,
  };
}

export function bearerHeaders(secret: string): Headers {
  return { ...json, authorization: `Bearer ${secret}` };
}

export function basicHeaders(secret: string, user = 'alertmanager'): Headers {
  return { ...json, authorization: `Basic ${Buffer.from(`${user}:${secret}`, 'utf8').toString('base64')}` };
}

/** Fresh secrets shaped as each sender issues them. */
export function newSecret(kind: 'token' | 'whsec'): string {
  return kind === 'whsec'
    ? `whsec_${randomBytes(24).toString('base64')}`
    : `rel-${randomBytes(24).toString('base64url')}`;
}

/** GitLab: no signature; the webhook's secret token as it is in `X-Gitlab-Token`, retries keep `Idempotency-Key`. */
export function gitlabHeaders(secret: string, { idempotencyKey = randomUUID(), event = 'Push Hook' } = {}): Headers {
  return {
    ...json,
    'x-gitlab-event': event,
    'x-gitlab-token': secret,
    'idempotency-key': idempotencyKey,
    'x-gitlab-webhook-uuid': randomUUID(),
  };
}

/** Sentry integration webhooks: `Sentry-Hook-Signature: <hex HMAC of the body>` with the client secret; a `Request-ID` per request built. */
export function sentryHeaders(
  secret: string,
  body: string,
  { resource = 'event_alert', requestId = randomBytes(16).toString('hex') } = {},
): Headers {
  return {
    ...json,
    'request-id': requestId,
    'sentry-hook-resource': resource,
    'sentry-hook-timestamp': String(nowSeconds()),
    'sentry-hook-signature': hmacHex(secret, body),
  };
}

/** PagerDuty v3: `X-PagerDuty-Signature: v1=<hex HMAC of the body>[,v1=…]`, one per signing secret. */
export function pagerdutyHeaders(secrets: string | readonly string[], body: string, { version = 'v1' } = {}): Headers {
  const signatures = (typeof secrets === 'string' ? [secrets] : secrets).map(
    (secret) => `${version}=${hmacHex(secret, body)}`,
  );
  return { ...json, 'x-webhook-id': randomUUID(), 'x-pagerduty-signature': signatures.join(',') };
}

/** Svix's own header names for the Standard Webhooks scheme, as every Svix-powered sender sends them. */
export function svixHeaders(
  secret: string,
  body: string,
  { id = `msg_${randomUUID()}`, timestamp = nowSeconds() } = {},
): Headers {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return {
    ...json,
    'svix-id': id,
    'svix-timestamp': String(timestamp),
    'svix-signature': `v1,${hmacBase64(key, `${id}.${timestamp}.${body}`)}`,
  };
}

/** The topic the reliability `sns` route accepts. */
export const SNS_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:reliability';

/**
 * An SNS notification whose `Message` is `tag`, signed now with the test key as SNS signs (see
 * test/helpers/sns.ts); the runtime trusts the test certificate only through RELAY_LOCAL_DOCUMENTS.
 */
export function snsBody(
  tag: string,
  {
    messageId = randomUUID(),
    topic = SNS_TOPIC,
    at = new Date(),
    key,
  }: { messageId?: string; topic?: string; at?: Date; key?: KeyObject } = {},
): string {
  const message = {
    Type: 'Notification',
    MessageId: messageId,
    TopicArn: topic,
    Subject: 'reliability',
    Message: tag,
    Timestamp: at.toISOString(),
  };
  return JSON.stringify(signSnsMessage(message, { at, ...(key === undefined ? {} : { key }) }));
}

/** SNS's headers for `body`, and the route token as SNS sends it from the endpoint URL's `?token=` (here a Bearer header). */
export function snsTokenHeaders(secret: string, body: string): Headers {
  return { ...snsHeaders(JSON.parse(body) as Record<string, string>), authorization: `Bearer ${secret}` };
}
