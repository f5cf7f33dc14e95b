import { createHash, randomUUID } from 'node:crypto';
import {
  basicHeaders,
  bearerHeaders,
  githubHeaders,
  grafanaHmacHeaders,
  type Headers,
  hmacRouteHeaders,
  nowSeconds,
  shopifyHeaders,
  standardWebhooksHeaders,
  stripeHeaders,
  woocommerceHeaders,
  snsBody,
  snsTokenHeaders,
  svixHeaders,
} from './signers';
import { gitlabHeaders, pagerdutyHeaders, sentryHeaders } from './signers';

/** One webhook as a sender would post it. `tag` is the text the route renders from it. */
export interface Webhook {
  readonly route: string;
  readonly path: string;
  readonly headers: Headers;
  readonly body: string;
  readonly tag: string;
}

let orderNumber = 1000;

/** The body each source sends, carrying `tag` (every test route's template is `{{ tag }}`). */
export function bodyFor(source: SourceRoute, tag: string, { eventId = `evt_${randomUUID()}` } = {}): string {
  switch (source) {
    case 'alerts':
    case 'grafana':
      return JSON.stringify({
        receiver: 'sms',
        status: 'firing',
        groupKey: `{}:{alertname="${tag}"}`,
        truncatedAlerts: 0,
        version: '4',
        title: tag,
        alerts: [
          {
            status: 'firing',
            labels: { alertname: tag, severity: 'page' },
            annotations: { summary: 'reliability' },
            fingerprint: createHash('sha256').update(tag).digest('hex').slice(0, 16),
          },
        ],
        tag,
      });
    case 'github':
      return JSON.stringify({
        action: 'opened',
        issue: { number: 7, title: tag },
        repository: { full_name: 'acme/relay' },
        sender: { login: 'bot' },
        tag,
      });
    case 'shopify':
      return `{"id":${820982911946154508n + BigInt(orderNumber++)},"name":"#${orderNumber}","total_price":"10.00","currency":"TZS","tag":${JSON.stringify(tag)}}`;
    case 'woo':
      orderNumber += 1;
      return JSON.stringify({
        id: orderNumber,
        number: String(orderNumber),
        status: 'processing',
        total: '10.00',
        currency: 'TZS',
        tag,
      });
    case 'stripe':
      return JSON.stringify({
        id: eventId,
        object: 'event',
        type: 'charge.succeeded',
        livemode: false,
        data: { object: { id: 'ch_1', amount: 1000, currency: 'tzs' } },
        tag,
      });
    case 'standard':
    case 'svix':
      return JSON.stringify({
        type: 'invoice.paid',
        timestamp: new Date().toISOString(),
        data: { id: 'inv_1', status: 'paid' },
        tag,
      });
    case 'sns':
      return snsBody(tag);
    case 'amo':
    case 'alo':
      return JSON.stringify({ tag });
    case 'gitlab':
      return JSON.stringify({
        object_kind: 'push',
        ref: 'refs/heads/main',
        user_name: 'bot',
        total_commits_count: 1,
        project: { path_with_namespace: 'acme/relay' },
        tag,
      });
    case 'sentry':
      return JSON.stringify({
        action: 'triggered',
        data: {
          event: { event_id: randomUUID().replaceAll('-', ''), level: 'error', title: tag },
          triggered_rule: 'reliability',
        },
        installation: { uuid: randomUUID() },
        tag,
      });
    case 'pagerduty':
      return JSON.stringify({
        event: {
          id: eventId,
          event_type: 'incident.triggered',
          resource_type: 'incident',
          data: { type: 'incident', number: orderNumber++, title: tag, urgency: 'high' },
        },
        tag,
      });
    case 'kuma':
      orderNumber += 1;
      return JSON.stringify({
        heartbeat: { monitorID: orderNumber, status: 0, time: '2025-11-21 09:44:12.031', msg: 'down' },
        monitor: { id: orderNumber, name: 'reliability' },
        msg: tag,
        tag,
      });
    case 'hmac':
      return JSON.stringify({
        event: 'charge.success',
        data: { reference: `ref_${randomUUID()}`, amount: 10000, currency: 'TZS' },
        tag,
      });
  }
}

export type SourceRoute =
  | 'amo'
  | 'alo'
  | 'alerts'
  | 'grafana'
  | 'github'
  | 'shopify'
  | 'woo'
  | 'stripe'
  | 'standard'
  | 'gitlab'
  | 'sentry'
  | 'pagerduty'
  | 'kuma'
  | 'hmac'
  | 'svix'
  | 'sns';

/** Which secret name of the secrets file each standard route uses. */
export const ROUTE_SECRET: Readonly<Record<SourceRoute, string>> = {
  amo: 'generic-token',
  alo: 'generic-token',
  alerts: 'alerts-token',
  grafana: 'grafana-secret',
  github: 'github-secret',
  shopify: 'shopify-secret',
  woo: 'woocommerce-secret',
  stripe: 'stripe-secret',
  standard: 'standard-secret',
  gitlab: 'gitlab-token',
  sentry: 'sentry-secret',
  pagerduty: 'pagerduty-secret',
  kuma: 'uptime-kuma-token',
  hmac: 'hmac-secret',
  svix: 'standard-secret',
  sns: 'sns-secret',
};

/**
 * A correctly authenticated webhook for one of the standard routes, with the scheme each sender
 * uses (generic: Bearer with an Idempotency-Key; alertmanager: Bearer; grafana: HMAC with timestamp).
 */
export function signedWebhook(route: SourceRoute, secrets: Readonly<Record<string, string>>, tag: string): Webhook {
  const secret = secrets[ROUTE_SECRET[route]]!;
  const body = bodyFor(route, tag);
  return { route, path: `/hooks/${route}`, headers: headersFor(route, secret, body), body, tag };
}

export function headersFor(
  route: SourceRoute,
  secret: string,
  body: string,
  { timestamp = nowSeconds() } = {},
): Headers {
  switch (route) {
    case 'amo':
    case 'alo':
      return { ...bearerHeaders(secret), 'idempotency-key': `key-${randomUUID()}` };
    case 'alerts':
      return bearerHeaders(secret);
    case 'grafana':
      return grafanaHmacHeaders(secret, body, { timestamp });
    case 'github':
      return githubHeaders(secret, body);
    case 'shopify':
      return shopifyHeaders(secret, body);
    case 'woo':
      return woocommerceHeaders(secret, body);
    case 'stripe':
      return stripeHeaders(secret, body, { timestamp });
    case 'standard':
      return standardWebhooksHeaders(secret, body, { timestamp });
    case 'gitlab':
      return gitlabHeaders(secret);
    case 'sentry':
      return sentryHeaders(secret, body);
    case 'pagerduty':
      return pagerdutyHeaders(secret, body);
    case 'kuma':
      return bearerHeaders(secret);
    case 'hmac':
      return hmacRouteHeaders(secret, body, { timestamp });
    case 'svix':
      return svixHeaders(secret, body, { timestamp });
    case 'sns':
      return snsTokenHeaders(secret, body);
  }
}

export { basicHeaders };
