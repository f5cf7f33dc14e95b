import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../../functions/core/config/load';
import { RouteSchema, type RouteConfig } from '../../../../functions/core/config/schema';
import { SOURCE_NAMES, type SourceName, sourcePack } from '../../../../functions/core/sources/registry';
import { authenticatingSecret, previousSecretName } from '../../../../functions/core/sources/rotation';
import { generateSecret } from '../../../../local/runtime/secrets';
import { signWebhook } from '../../../../local/runtime/signers';
import { SNS_TEST_CERT, SNS_TEST_CERT_URL, signSnsMessage, snsFixture } from '../../../helpers/sns';

/*
 * A route secret during a rotation: the new value under the route's secret name, the old one under
 * `<name>.previous`. For every source pack, a webhook signed (or carrying a token) with either value
 * authenticates, one with any other value does not; each signed for real by the pack's own signer.
 */

const FIXTURES = new URL('../../../../examples/', import.meta.url);
const local = loadConfigFile(new URL('../../../../config/local.yaml', import.meta.url).pathname);

/** A route of each source as config/local.yaml writes it (the hmac scheme, goalert's settings…); SNS's with a topic. */
const routeOf = (source: SourceName): RouteConfig =>
  source === 'sns'
    ? RouteSchema.parse({
        source: 'sns',
        secret: 'sns-token',
        recipients: ['0712345678'],
        topics: ['arn:aws:sns:eu-west-1:123456789012:ops-alarms'],
      })
    : [...local.routes.values()].find((route) => route.pack.name === source)!.config;

/** The example each source sends (SNS's is signed afresh below, as AWS signs it). */
const EXAMPLE_OF: Readonly<Record<Exclude<SourceName, 'sns'>, string>> = {
  alertmanager: 'alertmanager/firing-single.json',
  grafana: 'grafana/firing.json',
  github: 'github/push.json',
  shopify: 'shopify/orders-create.json',
  woocommerce: 'woocommerce/order-created.json',
  stripe: 'stripe/payment_intent.succeeded.json',
  'standard-webhooks': 'standard-webhooks/invoice-paid.json',
  generic: 'generic/backup-failed.json',
  gitlab: 'gitlab/push.json',
  sentry: 'sentry/event_alert.json',
  pagerduty: 'pagerduty/incident.triggered.json',
  'uptime-kuma': 'uptime-kuma/down.json',
  hmac: 'hmac/paystack-charge-success.json',
  goalert: 'goalert/alert.json',
  'grafana-oncall': 'grafana-oncall/personal-notification.json',
  opsgenie: 'opsgenie/create.json',
};

const bodyOf = (source: SourceName): Uint8Array =>
  source === 'sns'
    ? new TextEncoder().encode(JSON.stringify(signSnsMessage(snsFixture('cloudwatch-alarm.json'), { at: new Date() })))
    : new Uint8Array(readFileSync(new URL(EXAMPLE_OF[source], FIXTURES)));

const inbound = (body: Uint8Array, headers: Record<string, string>) => ({
  body,
  headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
  query: {},
  receivedAt: new Date(),
});

describe.each(SOURCE_NAMES)('%s: a route secret during a rotation', (source) => {
  const pack = sourcePack(source);
  const route = routeOf(source);
  const body = bodyOf(source);
  const context = {
    toleranceSeconds: 300,
    route,
    ...(source === 'sns' ? { documents: new Map([[SNS_TEST_CERT_URL, SNS_TEST_CERT]]) } : {}),
  };
  const [current, previous, other] = [0, 1, 2].map(() => generateSecret(pack.secretKind)) as [string, string, string];
  const signedWith = (secret: string) => inbound(body, signWebhook(source, { body, secret, route }));
  const accepts = (webhook: ReturnType<typeof inbound>, kept: string | undefined) => {
    const { secret } = authenticatingSecret(pack, webhook, context, current, kept);
    return pack.authenticate(webhook, { ...context, secret }).ok;
  };

  it('accepts the new value and the previous one, and nothing else', () => {
    expect(accepts(signedWith(current), previous)).toBe(true);
    expect(accepts(signedWith(previous), previous)).toBe(true);
    expect(authenticatingSecret(pack, signedWith(previous), context, current, previous)).toEqual({
      secret: previous,
      previous: true,
    });
    expect(accepts(signedWith(other), previous)).toBe(false);
  });

  it('refuses the old value once the previous one is retired', () => {
    expect(accepts(signedWith(previous), undefined)).toBe(false);
    expect(accepts(signedWith(current), undefined)).toBe(true);
  });
});

it('keeps the old value under the route secret name and ".previous"', () => {
  expect(previousSecretName('alertmanager-token')).toBe('alertmanager-token.previous');
});
