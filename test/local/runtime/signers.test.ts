import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadConfigFile } from '../../../functions/core/config/load';
import type { RouteConfig } from '../../../functions/core/config/schema';
import { SOURCE_NAMES, SOURCES, sourcePack } from '../../../functions/core/sources/registry';
import type { SourceName } from '../../../functions/core/sources/registry';
import { RuntimeError } from '../../../local/shared/errors';
import { generateSecret } from '../../../local/runtime/secrets';
import { signWebhook } from '../../../local/runtime/signers';
import { RouteSchema } from '../../../functions/core/config/schema';
import { SNS_TEST_CERT, SNS_TEST_CERT_URL, signSnsMessage, snsFixture } from '../../helpers/sns';

const FIXTURES = new URL('../../../examples/', import.meta.url);

const FIXTURE_OF: Readonly<Record<SourceName, string>> = {
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
  sns: 'sns/cloudwatch-alarm.json',
  goalert: 'goalert/alert.json',
  'grafana-oncall': 'grafana-oncall/personal-notification.json',
  opsgenie: 'opsgenie/create.json',
};

/** Sources whose scheme is in the route: the route of config/local.yaml that uses each. */
const ROUTE_OF: Partial<Record<SourceName, RouteConfig>> = {
  hmac: loadConfigFile(new URL('../../../config/local.yaml', import.meta.url).pathname).routes.get('paystack')!.config,
};

/** A fresh secret of the kind the source's pack takes, as the secrets file would hold. */
const secretFor = (source: SourceName): string => generateSecret(sourcePack(source).secretKind);

/** What the relay's entry point hands a pack: exact bytes, lower-cased header names. */
function inbound(body: Uint8Array, headers: Record<string, string>, receivedAt = new Date()) {
  return {
    body,
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
    query: {},
    receivedAt,
  };
}

describe('signers', () => {
  it('signs with the packs of the registry, whose names are SOURCE_NAMES', () => {
    expect(SOURCE_NAMES).toEqual(Object.keys(SOURCES));
    for (const [name, pack] of Object.entries(SOURCES)) expect(pack.name).toBe(name);
  });

  // SNS messages are signed by AWS, not with the route's secret: see the sns case below.
  describe.each(SOURCE_NAMES.filter((name) => name !== 'sns'))('%s', (source) => {
    const body = new Uint8Array(readFileSync(new URL(FIXTURE_OF[source], FIXTURES)));
    const secret = secretFor(source);
    const pack = sourcePack(source);
    const route = ROUTE_OF[source];

    it("signs so that the source's own pack authenticates it", () => {
      const headers = signWebhook(source, { body, secret, route });
      expect(pack.authenticate(inbound(body, headers), { secret, toleranceSeconds: 300, route })).toEqual({ ok: true });
      expect(headers['Content-Type']).toBe('application/json');
    });

    it('fails authentication under another secret', () => {
      const headers = signWebhook(source, { body, secret: secretFor(source), route });
      expect(pack.authenticate(inbound(body, headers), { secret, toleranceSeconds: 300, route }).ok).toBe(false);
    });

    it('fails authentication once the body changes', () => {
      const headers = signWebhook(source, { body, secret, route });
      const changed = new Uint8Array([...body, 0x20]);
      const outcome = pack.authenticate(inbound(changed, headers), { secret, toleranceSeconds: 300, route });
      // Credentials (Bearer, GenieKey) do not cover the body; every signature does.
      expect(outcome.ok).toBe(
        [
          'alertmanager',
          'grafana',
          'generic',
          'gitlab',
          'uptime-kuma',
          'goalert',
          'grafana-oncall',
          'opsgenie',
        ].includes(source),
      );
    });
  });

  it('signs GitHub form bodies as the form they are', () => {
    const body = new Uint8Array(readFileSync(new URL('github/push.form.txt', FIXTURES)));
    const secret = secretFor('github');
    const headers = signWebhook('github', { body, secret });
    expect(headers['Content-Type']).toBe('application/x-www-form-urlencoded');
    const webhook = inbound(body, headers);
    expect(sourcePack('github').authenticate(webhook, { secret, toleranceSeconds: 300 })).toEqual({ ok: true });
    expect(sourcePack('github').parse(webhook)).toHaveProperty('repository');
  });

  it("uses the caller's ids and event names, so a replay is the same delivery", () => {
    const body = new TextEncoder().encode('{"type":"invoice.paid","data":{}}');
    const secret = secretFor('standard-webhooks');
    const fixed = { 'webhook-id': 'msg_fixed', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    const first = signWebhook('standard-webhooks', { body, secret, headers: fixed });
    const second = signWebhook('standard-webhooks', { body, secret, headers: fixed });
    expect(second).toEqual(first);
    expect(
      sourcePack('standard-webhooks').authenticate(inbound(body, first), { secret, toleranceSeconds: 300 }),
    ).toEqual({ ok: true });

    const github = signWebhook('github', {
      body,
      secret: 's3cret-github',
      headers: { 'x-github-event': 'issues', 'X-GitHub-Delivery': 'd-1' },
    });
    expect(github).toMatchObject({ 'x-github-event': 'issues', 'X-GitHub-Delivery': 'd-1' });
    expect(Object.keys(github).filter((name) => name.toLowerCase() === 'x-github-event')).toHaveLength(1);
  });

  it('signs Stripe with the timestamp it is given, which the tolerance then judges', () => {
    const body = new TextEncoder().encode('{"id":"evt_1","type":"charge.refunded"}');
    const secret = secretFor('stripe');
    const then = new Date(Date.now() - 3_600_000);
    const headers = signWebhook('stripe', { body, secret, now: then });
    expect(headers['Stripe-Signature']).toMatch(new RegExp(`^t=${Math.floor(then.getTime() / 1000)},v1=[0-9a-f]{64}$`));
    expect(sourcePack('stripe').authenticate(inbound(body, headers), { secret, toleranceSeconds: 300 })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('older'),
    });
    expect(sourcePack('stripe').authenticate(inbound(body, headers, then), { secret, toleranceSeconds: 300 })).toEqual({
      ok: true,
    });
  });

  it('names the GitLab event and the Sentry resource from the body, as those senders do', () => {
    const secret = secretFor('gitlab');
    const pipeline = new Uint8Array(readFileSync(new URL('gitlab/pipeline-failed.json', FIXTURES)));
    expect(signWebhook('gitlab', { body: pipeline, secret })).toMatchObject({
      'X-Gitlab-Event': 'Pipeline Hook',
      'X-Gitlab-Token': secret,
    });
    const metric = new Uint8Array(readFileSync(new URL('sentry/metric_alert-critical.json', FIXTURES)));
    expect(signWebhook('sentry', { body: metric, secret })).toMatchObject({ 'Sentry-Hook-Resource': 'metric_alert' });
  });

  it('sends SNS messages with the headers SNS sends and the route token, leaving their AWS signature as it is', () => {
    const secret = secretFor('sns');
    const route = RouteSchema.parse({
      source: 'sns',
      secret: 'sns-token',
      recipients: ['0712345678'],
      topics: ['arn:aws:sns:eu-west-1:123456789012:ops-alarms'],
    });
    const documents = new Map([[SNS_TEST_CERT_URL, SNS_TEST_CERT]]);
    const genuine = new TextEncoder().encode(
      JSON.stringify(signSnsMessage(snsFixture('cloudwatch-alarm.json'), { at: new Date() })),
    );
    const headers = signWebhook('sns', { body: genuine, secret });
    expect(headers).toMatchObject({
      'Content-Type': 'text/plain; charset=UTF-8',
      'x-amz-sns-message-type': 'Notification',
      'x-amz-sns-message-id': '5f8d2a8e-6c1b-5e4f-9a7d-3b2c1d0e9f8a',
      'x-amz-sns-topic-arn': 'arn:aws:sns:eu-west-1:123456789012:ops-alarms',
      Authorization: `Bearer ${secret}`,
    });
    const context = { secret, toleranceSeconds: 300, route, documents };
    expect(sourcePack('sns').authenticate(inbound(genuine, headers), context)).toEqual({ ok: true });
    // The published fixture carries AWS's placeholder signature: send-test cannot make it genuine.
    const fixture = new Uint8Array(readFileSync(new URL(FIXTURE_OF.sns, FIXTURES)));
    expect(
      sourcePack('sns').authenticate(inbound(fixture, signWebhook('sns', { body: fixture, secret })), context).ok,
    ).toBe(false);
  });

  it('refuses a source it does not know', () => {
    expect(() => signWebhook('bitbucket', { body: new Uint8Array(), secret: 'x' })).toThrow(
      new RuntimeError(`no signer for source "bitbucket"; known sources: ${Object.keys(SOURCES).join(', ')}`),
    );
  });
});

describe('signers: hmac routes are signed from their own settings', () => {
  const body = new TextEncoder().encode('{"event":"charge.success","data":{"reference":"r-1"}}');
  const secret = secretFor('hmac');
  const route = (yaml: string): RouteConfig =>
    loadConfig(
      `provider: { baseUrl: "https://x.example" }\nsecrets: s\nroutes:\n  r:\n    source: hmac\n    secret: s\n    recipients: ["0712345678"]\n${yaml}`,
    ).routes.get('r')!.config;

  it('signs a prefixed base64 scheme over a timestamped pattern, with the timestamp and a fresh dedupe id', () => {
    const config = route(
      '    signature: { header: X-Sig, encoding: base64, prefix: "v1=", signed: "{timestamp}:{body}" }\n    timestamp: { header: X-Ts }\n    dedupe: { header: X-Id }',
    );
    const now = new Date(1_700_000_000_000);
    const headers = signWebhook('hmac', { body, secret, route: config, now });
    const expected = createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from('1700000000:'), body]))
      .digest('base64');
    expect(headers).toMatchObject({
      'x-ts': '1700000000',
      'x-sig': `v1=${expected}`,
      'x-id': expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(
      sourcePack('hmac').authenticate(inbound(body, headers, now), { secret, toleranceSeconds: 300, route: config }),
    ).toEqual({ ok: true });
  });

  it("keeps the caller's timestamp and dedupe id", () => {
    const config = route(
      '    signature: { header: x-sig, signed: "{timestamp}.{body}" }\n    timestamp: { header: x-ts }\n    dedupe: { header: x-id }',
    );
    const headers = signWebhook('hmac', {
      body,
      secret,
      route: config,
      headers: { 'X-Ts': '1700000000', 'X-Id': 'retry-1' },
    });
    expect(headers).toMatchObject({
      'X-Ts': '1700000000',
      'X-Id': 'retry-1',
      'x-sig': createHmac('sha256', secret)
        .update(Buffer.concat([Buffer.from('1700000000.'), body]))
        .digest('hex'),
    });
  });

  it('cannot sign without the route', () => {
    expect(() => signWebhook('hmac', { body, secret })).toThrow(/signature settings/);
  });
});
