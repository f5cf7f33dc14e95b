import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { RouteConfig } from '../../functions/core/config/schema';
import { signedBytes } from '../../functions/core/sources/hmac';
import { SOURCE_NAMES, type SourceName } from '../../functions/core/sources/types';
import { RuntimeError, UnknownSourceError } from './errors';

export interface SignInput {
  /** The body exactly as it will be sent: signatures cover these bytes. */
  readonly body: Uint8Array;
  /** The route's secret value. */
  readonly secret: string;
  /**
   * Headers the caller sets itself, any case. Signers take event names, ids and timestamps from
   * them when present (so a replay can reuse a delivery id) and never override them.
   */
  readonly headers?: Readonly<Record<string, string>>;
  readonly now?: Date;
  /** The route's validated settings: an `hmac` route's signature scheme is described there. */
  readonly route?: RouteConfig;
}

/** Returns the headers a source sends with `body`; the caller's own headers are added on top. */
export type Signer = (input: SignInput) => Record<string, string>;

const hmac = (key: string | Uint8Array, data: Uint8Array | string, encoding: 'hex' | 'base64'): string =>
  createHmac('sha256', key).update(data).digest(encoding);

const unixSeconds = (now: Date): string => String(Math.floor(now.getTime() / 1000));

const header = (headers: Readonly<Record<string, string>> | undefined, name: string): string | undefined => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === wanted) return value;
  return undefined;
};

const bearer: Signer = ({ secret }) => ({ Authorization: `Bearer ${secret}` });

/**
 * Prometheus Alertmanager: `http_config.authorization` sends the secret as a Bearer credential.
 *
 * @example
 * ```ts
 * signAlertmanager({ body, secret: 'alerts-token' }); // { 'User-Agent': 'Alertmanager/0.28.1', Authorization: 'Bearer alerts-token' }
 * ```
 */
export const signAlertmanager: Signer = (input) => ({ 'User-Agent': 'Alertmanager/0.28.1', ...bearer(input) });

/** Grafana's webhook contact point with an Authorization credential (its optional HMAC is not used here). */
export const signGrafana: Signer = (input) => ({ 'User-Agent': 'Grafana', ...bearer(input) });

/** Any JSON sender with a Bearer token. */
export const signGeneric: Signer = bearer;

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, the event in
 * `X-GitHub-Event` (default `push`) and a fresh delivery id in `X-GitHub-Delivery`.
 *
 * @example
 * ```ts
 * signGitHub({ body, secret, headers: { 'X-GitHub-Event': 'issues' } })['X-Hub-Signature-256']; // 'sha256=…'
 * ```
 */
export const signGitHub: Signer = ({ body, secret, headers }) => ({
  'User-Agent': 'GitHub-Hookshot/sms-relay',
  'X-GitHub-Event': header(headers, 'x-github-event') ?? 'push',
  'X-GitHub-Delivery': header(headers, 'x-github-delivery') ?? randomUUID(),
  'X-GitHub-Hook-ID': '1',
  'X-Hub-Signature-256': `sha256=${hmac(secret, body, 'hex')}`,
});

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>`, the topic (default
 * `orders/create`) and fresh webhook and event ids.
 */
export const signShopify: Signer = ({ body, secret, headers, now = new Date() }) => ({
  'User-Agent': 'Shopify-Captain-Hook',
  'X-Shopify-Topic': header(headers, 'x-shopify-topic') ?? 'orders/create',
  'X-Shopify-Shop-Domain': header(headers, 'x-shopify-shop-domain') ?? 'sms-relay-test.myshopify.com',
  'X-Shopify-API-Version': '2025-01',
  'X-Shopify-Webhook-Id': header(headers, 'x-shopify-webhook-id') ?? randomUUID(),
  'X-Shopify-Event-Id': header(headers, 'x-shopify-event-id') ?? randomUUID(),
  'X-Shopify-Triggered-At': now.toISOString(),
  'X-Shopify-Hmac-Sha256': hmac(secret, body, 'base64'),
});

/**
 * WooCommerce: `X-WC-Webhook-Signature: <base64 HMAC-SHA256 of the body>`, the topic (default
 * `order.created`) with its resource and event, the shop's URL and a delivery id.
 */
export const signWooCommerce: Signer = ({ body, secret, headers }) => {
  const topic = header(headers, 'x-wc-webhook-topic') ?? 'order.created';
  const dot = topic.indexOf('.');
  return {
    'User-Agent': 'WooCommerce/9.4.2 Hookshot (WordPress/6.7.1)',
    'X-WC-Webhook-Source': header(headers, 'x-wc-webhook-source') ?? 'https://shop.example/',
    'X-WC-Webhook-Topic': topic,
    'X-WC-Webhook-Resource': dot < 0 ? topic : topic.slice(0, dot),
    'X-WC-Webhook-Event': dot < 0 ? topic : topic.slice(dot + 1),
    'X-WC-Webhook-ID': header(headers, 'x-wc-webhook-id') ?? '1',
    'X-WC-Webhook-Delivery-ID': randomBytes(16).toString('hex'),
    'X-WC-Webhook-Signature': hmac(secret, body, 'base64'),
  };
};

/**
 * Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with
 * the whole `whsec_…` string.
 *
 * @example
 * ```ts
 * signStripe({ body, secret: 'whsec_…', now: new Date(1_700_000_000_000) })['Stripe-Signature']; // 't=1700000000,v1=…'
 * ```
 */
export const signStripe: Signer = ({ body, secret, now = new Date() }) => {
  const timestamp = unixSeconds(now);
  const signed = Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), body]);
  return { 'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', 'Stripe-Signature': `t=${timestamp},v1=${hmac(secret, signed, 'hex')}` };
};

/**
 * Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64
 * HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the base64-decoded part after `whsec_`.
 * When the caller sets a `svix-id` (or `svix-timestamp`) header, the same signature goes out under
 * Svix's header names instead, as a Svix-powered sender sends it
 * (`send-test --header 'svix-id: msg_1'`).
 */
export const signStandardWebhooks: Signer = ({ body, secret, headers, now = new Date() }) => {
  const family = header(headers, 'svix-id') !== undefined || header(headers, 'svix-timestamp') !== undefined ? 'svix' : 'webhook';
  const id = header(headers, `${family}-id`) ?? `msg_${randomBytes(16).toString('base64url')}`;
  const timestamp = header(headers, `${family}-timestamp`) ?? unixSeconds(now);
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
  return { [`${family}-id`]: id, [`${family}-timestamp`]: timestamp, [`${family}-signature`]: `v1,${hmac(key, signed, 'base64')}` };
};

const SNS_HEADERS = { Type: 'x-amz-sns-message-type', MessageId: 'x-amz-sns-message-id', TopicArn: 'x-amz-sns-topic-arn' } as const;

/**
 * Amazon SNS: the headers SNS sends, read from the message itself (`x-amz-sns-message-type`,
 * `-message-id`, `-topic-arn`), and the route's token as `Authorization: Bearer`. The message's own
 * `Signature` is left as the payload file has it: only AWS holds the key that signs SNS messages,
 * so `send-test` can replay a genuine message captured within the last hour (it verifies), while a
 * hand-written payload is refused 401. `npm start` then never trusts anything but SNS's own
 * certificates, unless started with `RELAY_LOCAL_DOCUMENTS` (tests).
 */
export const signSns: Signer = ({ body, secret }) => {
  let message: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    if (parsed !== null && typeof parsed === 'object') message = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: the relay will say so.
  }
  const fromMessage = Object.entries(SNS_HEADERS).flatMap(([field, name]) => (typeof message[field] === 'string' ? [[name, message[field] as string]] : []));
  return {
    'Content-Type': 'text/plain; charset=UTF-8',
    'User-Agent': 'Amazon Simple Notification Service Agent',
    ...Object.fromEntries(fromMessage),
    ...bearer({ body, secret }),
  };
};

/** GitLab's `X-Gitlab-Event` for each `object_kind` of a project hook payload. */
const GITLAB_EVENTS: Readonly<Record<string, string>> = {
  push: 'Push Hook',
  tag_push: 'Tag Push Hook',
  issue: 'Issue Hook',
  note: 'Note Hook',
  merge_request: 'Merge Request Hook',
  pipeline: 'Pipeline Hook',
  build: 'Job Hook',
  deployment: 'Deployment Hook',
  release: 'Release Hook',
};

/** A top-level field of a JSON body, or `undefined` when the body is not a JSON object. */
const bodyField = (body: Uint8Array, ...path: readonly string[]): unknown => {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return undefined;
  }
  for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
};

/**
 * GitLab: the secret token as it is in `X-Gitlab-Token`, the event named from the body's
 * `object_kind` (default `Push Hook`), and a fresh `Idempotency-Key` (GitLab reuses it for retries).
 */
export const signGitLab: Signer = ({ body, secret, headers }) => {
  const kind = bodyField(body, 'object_kind');
  return {
    'User-Agent': 'GitLab/18.0.0',
    'X-Gitlab-Event': header(headers, 'x-gitlab-event') ?? (typeof kind === 'string' ? GITLAB_EVENTS[kind] : undefined) ?? 'Push Hook',
    'X-Gitlab-Instance': 'https://gitlab.example.com',
    'X-Gitlab-Webhook-UUID': randomUUID(),
    'X-Gitlab-Event-UUID': randomUUID(),
    'Idempotency-Key': header(headers, 'idempotency-key') ?? randomUUID(),
    'X-Gitlab-Token': secret,
  };
};

/** Sentry's `Sentry-Hook-Resource` for a body, by the object under `data`. */
const sentryResource = (body: Uint8Array): string => {
  const data = bodyField(body, 'data');
  const has = (name: string): boolean => data !== null && typeof data === 'object' && name in data;
  if (has('metric_alert')) return 'metric_alert';
  if (has('event')) return 'event_alert';
  if (has('issue')) return 'issue';
  if (has('error')) return 'error';
  if (has('comment')) return 'comment';
  return 'installation';
};

/**
 * Sentry integration webhooks: `Sentry-Hook-Signature: <hex HMAC-SHA256 of the body>` keyed with
 * the client secret, the resource named from the body (`data.metric_alert` is `metric_alert`…), a
 * fresh `Request-ID` and the (unsigned) `Sentry-Hook-Timestamp`.
 */
export const signSentry: Signer = ({ body, secret, headers, now = new Date() }) => ({
  'User-Agent': 'sentry-app',
  'Request-ID': header(headers, 'request-id') ?? randomBytes(16).toString('hex'),
  'Sentry-Hook-Resource': header(headers, 'sentry-hook-resource') ?? sentryResource(body),
  'Sentry-Hook-Timestamp': unixSeconds(now),
  'Sentry-Hook-Signature': hmac(secret, body, 'hex'),
});

/** PagerDuty v3: `X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the body>` and an `X-Webhook-Id`. */
export const signPagerDuty: Signer = ({ body, secret, headers }) => ({
  'User-Agent': 'PagerDuty-Webhook/V3.0',
  'X-Webhook-Id': header(headers, 'x-webhook-id') ?? randomUUID(),
  'X-Webhook-Subscription': 'PSMS0RL',
  'X-PagerDuty-Signature': `v1=${hmac(secret, body, 'hex')}`,
});

/** Uptime Kuma: the route's secret as a Bearer token in the notification's additional headers. */
export const signUptimeKuma: Signer = bearer;

/**
 * A route with `source: hmac`: the HMAC its `signature` settings describe (algorithm, encoding,
 * prefix, over its `signed` pattern) in its signature header, a timestamp (now) in its timestamp
 * header, and a fresh id in its dedupe header, when the route names them.
 *
 * @throws {RuntimeError} no route settings were given (the scheme is in the route, not the source)
 *
 * @example
 * ```ts
 * signHmac({ body, secret, route: loaded.routes.get('paystack')!.config }); // { 'x-paystack-signature': '…' }
 * ```
 */
export const signHmac: Signer = ({ body, secret, headers, now = new Date(), route }) => {
  const signature = route?.signature;
  if (signature === undefined) throw new RuntimeError('an hmac route is signed from its own signature settings; none were given');
  const timestamp = route?.timestamp === undefined ? undefined : (header(headers, route.timestamp.header) ?? unixSeconds(now));
  const digest = createHmac(signature.algorithm, secret).update(signedBytes(signature.signed, body, timestamp)).digest(signature.encoding);
  return {
    ...(route?.timestamp === undefined ? {} : { [route.timestamp.header]: timestamp! }),
    ...(route?.dedupe === undefined ? {} : { [route.dedupe.header]: header(headers, route.dedupe.header) ?? randomUUID() }),
    [signature.header]: `${signature.prefix}${digest}`,
  };
};

/** One signer per source, by the source names routes use in the config. */
export const SIGNERS = {
  alertmanager: signAlertmanager,
  grafana: signGrafana,
  github: signGitHub,
  shopify: signShopify,
  woocommerce: signWooCommerce,
  stripe: signStripe,
  'standard-webhooks': signStandardWebhooks,
  generic: signGeneric,
  gitlab: signGitLab,
  sentry: signSentry,
  pagerduty: signPagerDuty,
  'uptime-kuma': signUptimeKuma,
  hmac: signHmac,
  sns: signSns,
} as const satisfies Record<SourceName, Signer>;

/**
 * The full header set for posting `body` as `source` would: a content type guessed from the body
 * (JSON, or form-encoded such as GitHub's `payload=`), the source's signature headers, then the
 * caller's own headers, which win.
 *
 * @throws {UnknownSourceError}
 *
 * @example
 * ```ts
 * const headers = signWebhook('github', { body, secret, headers: { 'X-GitHub-Event': 'issues' } });
 * await fetch(`${url}/hooks/github`, { method: 'POST', headers, body });
 * ```
 */
export function signWebhook(source: string, input: SignInput): Record<string, string> {
  if (!Object.hasOwn(SIGNERS, source)) throw new UnknownSourceError(source, SOURCE_NAMES);
  const generated: Record<string, string> = { 'Content-Type': contentTypeOf(input.body), ...SIGNERS[source as SourceName](input) };
  const own = input.headers ?? {};
  const ownNames = new Set(Object.keys(own).map((name) => name.toLowerCase()));
  return { ...Object.fromEntries(Object.entries(generated).filter(([name]) => !ownNames.has(name.toLowerCase()))), ...own };
}

function contentTypeOf(body: Uint8Array): string {
  const start = Buffer.from(body.subarray(0, 64)).toString('utf8').trimStart();
  if (start.startsWith('{') || start.startsWith('[')) return 'application/json';
  if (/^[\w.%+-]+=/.test(start)) return 'application/x-www-form-urlencoded';
  return 'text/plain';
}
