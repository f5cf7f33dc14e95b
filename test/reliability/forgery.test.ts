import { createHmac, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signSnsMessage, snsHeaders } from '../helpers/sns';
import { call } from './support/http';
import { storedRecords, waitUntil } from './support/records';
import { inboxCounts } from './support/sandbox';
import { runId, type Scenario, startScenario } from './support/scenario';
import {
  basicHeaders,
  bearerHeaders,
  githubHeaders,
  grafanaHmacHeaders,
  type Headers,
  hmacRouteHeaders,
  newSecret,
  nowSeconds,
  shopifyHeaders,
  standardWebhooksHeaders,
  stripeHeaders,
  woocommerceHeaders,
  snsBody,
  snsTokenHeaders,
  svixHeaders,
} from './support/signers';
import { bodyFor, ROUTE_SECRET, type SourceRoute } from './support/webhooks';
import { gitlabHeaders, pagerdutyHeaders, sentryHeaders } from './support/signers';

/**
 * Forged webhooks: for every signed source, a tampered body, a wrong secret, a missing header and
 * (for timestamped schemes) a replay outside the tolerance are refused with 401 and never become
 * an SMS. Each forgery is paired with an authentic control that must get 202, so a broken signer
 * in this suite cannot make the refusals pass by accident.
 */

interface Attempt {
  readonly name: string;
  readonly route: SourceRoute;
  readonly path: string;
  readonly headers: Headers;
  readonly body: string;
  readonly tag: string;
}

const TOLERANCE = 300; // the routes' default toleranceSeconds
const run = runId();
let counter = 0;
const tagOf = (route: string, name: string): string => `forge ${run} ${route} ${++counter} ${name}`.slice(0, 150);

let scenario: Scenario;
const secretOf = (route: SourceRoute): string => scenario.secrets[ROUTE_SECRET[route]]!;

/** Builds an attempt: `sign(secret, signedBody)` makes the headers, `sentBody` is what goes on the wire. */
function attempt(
  route: SourceRoute,
  name: string,
  build: (secret: string, body: string, tag: string) => { headers: Headers; body?: string; query?: string },
): Attempt {
  const tag = tagOf(route, name);
  const body = bodyFor(route, tag);
  const built = build(secretOf(route), body, tag);
  return {
    name,
    route,
    path: `/hooks/${route}${built.query ?? ''}`,
    headers: built.headers,
    body: built.body ?? body,
    tag,
  };
}

/** The same body with its tag changed after signing: a tampered payload. */
const tamper = (body: string, tag: string): string => {
  const changed = body.replace(JSON.stringify(tag), JSON.stringify(`${tag} (changed)`));
  if (changed === body) throw new Error('tamper: tag not found in the body');
  return changed;
};
const withoutHeader = (headers: Headers, name: string): Headers =>
  Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
const otherToken = (): string => newSecret('token');
const otherWhsec = (): string => newSecret('whsec');
/** A key SNS never used: a forger can sign, but SNS's certificate does not carry this key. */
const FORGER_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

function authentic(): Attempt[] {
  return [
    attempt('amo', 'bearer', (secret) => ({ headers: bearerHeaders(secret) })),
    attempt('amo', 'token query', (secret) => ({
      headers: { 'content-type': 'application/json' },
      query: `?token=${encodeURIComponent(secret)}`,
    })),
    attempt('alerts', 'bearer', (secret) => ({ headers: bearerHeaders(secret) })),
    attempt('alerts', 'basic', (secret) => ({ headers: basicHeaders(secret) })),
    attempt('grafana', 'hmac', (secret, body) => ({ headers: grafanaHmacHeaders(secret, body) })),
    attempt('grafana', 'hmac with timestamp', (secret, body) => ({
      headers: grafanaHmacHeaders(secret, body, { timestamp: nowSeconds() }),
    })),
    attempt('grafana', 'bearer', (secret) => ({ headers: bearerHeaders(secret) })),
    attempt('github', 'signature', (secret, body) => ({ headers: githubHeaders(secret, body) })),
    attempt('shopify', 'signature', (secret, body) => ({ headers: shopifyHeaders(secret, body) })),
    attempt('woo', 'signature', (secret, body) => ({ headers: woocommerceHeaders(secret, body) })),
    attempt('stripe', 'signature', (secret, body) => ({ headers: stripeHeaders(secret, body) })),
    attempt('stripe', 'signature at the edge of the tolerance', (secret, body) => ({
      headers: stripeHeaders(secret, body, { timestamp: nowSeconds() - TOLERANCE + 30 }),
    })),
    attempt('standard', 'signature', (secret, body) => ({ headers: standardWebhooksHeaders(secret, body) })),
    attempt('gitlab', 'token', (secret) => ({ headers: gitlabHeaders(secret) })),
    attempt('sentry', 'signature', (secret, body) => ({ headers: sentryHeaders(secret, body) })),
    attempt('pagerduty', 'signature', (secret, body) => ({ headers: pagerdutyHeaders(secret, body) })),
    attempt('pagerduty', 'one of two signatures (secret rotation)', (secret, body) => ({
      headers: pagerdutyHeaders([otherToken(), secret], body),
    })),
    attempt('kuma', 'bearer', (secret) => ({ headers: bearerHeaders(secret) })),
    attempt('kuma', 'token query', (secret) => ({
      headers: { 'content-type': 'application/json' },
      query: `?token=${encodeURIComponent(secret)}`,
    })),
    attempt('hmac', 'signature', (secret, body) => ({ headers: hmacRouteHeaders(secret, body) })),
    attempt('hmac', 'signature at the edge of the tolerance', (secret, body) => ({
      headers: hmacRouteHeaders(secret, body, { timestamp: nowSeconds() - TOLERANCE + 30 }),
    })),
    attempt('svix', 'svix-* signature', (secret, body) => ({ headers: svixHeaders(secret, body) })),
    attempt('sns', 'SignatureVersion 1, Bearer token', (secret, body) => ({ headers: snsTokenHeaders(secret, body) })),
    attempt('sns', 'SignatureVersion 2, ?token=', (secret, _body, tag) => {
      const body = JSON.stringify(signSnsMessage(JSON.parse(snsBody(tag)) as Record<string, string>, { version: '2' }));
      return {
        headers: snsHeaders(JSON.parse(body) as Record<string, string>),
        body,
        query: `?token=${encodeURIComponent(secret)}`,
      };
    }),
  ];
}

function forgeries(): Attempt[] {
  const old = (): number => nowSeconds() - TOLERANCE - 60;
  const ahead = (): number => nowSeconds() + TOLERANCE + 60;
  return [
    // generic: Bearer or ?token=
    attempt('amo', 'wrong bearer', () => ({ headers: bearerHeaders(otherToken()) })),
    attempt('amo', 'wrong token query', () => ({
      headers: { 'content-type': 'application/json' },
      query: `?token=${otherToken()}`,
    })),
    attempt('amo', 'no credential', () => ({ headers: { 'content-type': 'application/json' } })),
    attempt('amo', 'empty bearer', () => ({
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' },
    })),
    attempt('amo', 'secret as a prefix of the token', (secret) => ({ headers: bearerHeaders(`${secret}x`) })),
    attempt('amo', 'secret under another parameter name', (secret) => ({
      headers: { 'content-type': 'application/json' },
      query: `?access_token=${encodeURIComponent(secret)}`,
    })),
    attempt('amo', 'wrong basic password', () => ({ headers: basicHeaders(otherToken()) })),
    attempt('amo', 'right secret under an unsupported scheme', (secret) => ({
      headers: { 'content-type': 'application/json', authorization: `Token ${secret}` },
    })),
    // alertmanager: Bearer or Basic
    attempt('alerts', 'wrong bearer', () => ({ headers: bearerHeaders(otherToken()) })),
    attempt('alerts', 'wrong basic password', () => ({ headers: basicHeaders(otherToken()) })),
    attempt('alerts', 'secret as basic user, wrong password', (secret) => ({
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${secret}:nope`).toString('base64')}`,
      },
    })),
    attempt('alerts', 'no credential', () => ({ headers: { 'content-type': 'application/json' } })),
    attempt('alerts', 'token query (not accepted for alertmanager)', (secret) => ({
      headers: { 'content-type': 'application/json' },
      query: `?token=${encodeURIComponent(secret)}`,
    })),
    // grafana: HMAC (with or without timestamp) or Bearer
    attempt('grafana', 'tampered body', (secret, body, tag) => ({
      headers: grafanaHmacHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('grafana', 'wrong secret', (_secret, body) => ({ headers: grafanaHmacHeaders(otherToken(), body) })),
    attempt('grafana', 'tampered body with timestamp', (secret, body, tag) => ({
      headers: grafanaHmacHeaders(secret, body, { timestamp: nowSeconds() }),
      body: tamper(body, tag),
    })),
    attempt('grafana', 'replay outside the tolerance', (secret, body) => ({
      headers: grafanaHmacHeaders(secret, body, { timestamp: old() }),
    })),
    attempt('grafana', 'timestamp ahead of the tolerance', (secret, body) => ({
      headers: grafanaHmacHeaders(secret, body, { timestamp: ahead() }),
    })),
    attempt('grafana', 'signature without its timestamp header', (secret, body) => ({
      headers: withoutHeader(
        grafanaHmacHeaders(secret, body, { timestamp: nowSeconds() }),
        'x-grafana-alerting-timestamp',
      ),
    })),
    attempt('grafana', 'wrong signature beside a right bearer', (secret, body) => ({
      headers: { ...grafanaHmacHeaders(otherToken(), body), authorization: `Bearer ${secret}` },
    })),
    attempt('grafana', 'wrong bearer', () => ({ headers: bearerHeaders(otherToken()) })),
    attempt('grafana', 'no credential', () => ({ headers: { 'content-type': 'application/json' } })),
    // github
    attempt('github', 'tampered body', (secret, body, tag) => ({
      headers: githubHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('github', 'wrong secret', (_secret, body) => ({ headers: githubHeaders(otherToken(), body) })),
    attempt('github', 'missing signature', (secret, body) => ({
      headers: withoutHeader(githubHeaders(secret, body), 'x-hub-signature-256'),
    })),
    attempt('github', 'sha1 signature only', (secret, body) => ({
      headers: {
        ...withoutHeader(githubHeaders(secret, body), 'x-hub-signature-256'),
        'x-hub-signature': 'sha1=0000000000000000000000000000000000000000',
      },
    })),
    attempt('github', 'signature of an empty body', (secret) => ({ headers: githubHeaders(secret, '') })),
    // shopify
    attempt('shopify', 'tampered body', (secret, body, tag) => ({
      headers: shopifyHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('shopify', 'wrong secret', (_secret, body) => ({ headers: shopifyHeaders(otherToken(), body) })),
    attempt('shopify', 'missing signature', (secret, body) => ({
      headers: withoutHeader(shopifyHeaders(secret, body), 'x-shopify-hmac-sha256'),
    })),
    // woocommerce
    attempt('woo', 'tampered body', (secret, body, tag) => ({
      headers: woocommerceHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('woo', 'wrong secret', (_secret, body) => ({ headers: woocommerceHeaders(otherToken(), body) })),
    attempt('woo', 'missing signature', (secret, body) => ({
      headers: withoutHeader(woocommerceHeaders(secret, body), 'x-wc-webhook-signature'),
    })),
    // stripe
    attempt('stripe', 'tampered body', (secret, body, tag) => ({
      headers: stripeHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('stripe', 'wrong secret', (_secret, body) => ({ headers: stripeHeaders(otherWhsec(), body) })),
    attempt('stripe', 'missing signature', () => ({ headers: { 'content-type': 'application/json' } })),
    attempt('stripe', 'replay outside the tolerance', (secret, body) => ({
      headers: stripeHeaders(secret, body, { timestamp: old() }),
    })),
    attempt('stripe', 'timestamp ahead of the tolerance', (secret, body) => ({
      headers: stripeHeaders(secret, body, { timestamp: ahead() }),
    })),
    attempt('stripe', 'fresh timestamp on an old signature', (secret, body) => {
      const stale = stripeHeaders(secret, body, { timestamp: old() })['stripe-signature']!;
      return {
        headers: {
          'content-type': 'application/json',
          'stripe-signature': stale.replace(/^t=\d+/, `t=${nowSeconds()}`),
        },
      };
    }),
    // standard webhooks
    attempt('standard', 'tampered body', (secret, body, tag) => ({
      headers: standardWebhooksHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('standard', 'wrong secret', (_secret, body) => ({ headers: standardWebhooksHeaders(otherWhsec(), body) })),
    attempt('standard', 'missing signature', (secret, body) => ({
      headers: withoutHeader(standardWebhooksHeaders(secret, body), 'webhook-signature'),
    })),
    attempt('standard', 'missing id', (secret, body) => ({
      headers: withoutHeader(standardWebhooksHeaders(secret, body), 'webhook-id'),
    })),
    attempt('standard', 'missing timestamp', (secret, body) => ({
      headers: withoutHeader(standardWebhooksHeaders(secret, body), 'webhook-timestamp'),
    })),
    attempt('standard', 'replay outside the tolerance', (secret, body) => ({
      headers: standardWebhooksHeaders(secret, body, { timestamp: old() }),
    })),
    attempt('standard', 'timestamp ahead of the tolerance', (secret, body) => ({
      headers: standardWebhooksHeaders(secret, body, { timestamp: ahead() }),
    })),
    attempt('standard', 'id changed after signing', (secret, body) => ({
      headers: { ...standardWebhooksHeaders(secret, body), 'webhook-id': 'msg_other' },
    })),
    // gitlab: the secret token itself, nothing signed
    attempt('gitlab', 'wrong token', () => ({ headers: gitlabHeaders(otherToken()) })),
    attempt('gitlab', 'missing token', (secret) => ({
      headers: withoutHeader(gitlabHeaders(secret), 'x-gitlab-token'),
    })),
    attempt('gitlab', 'secret as a prefix of the token', (secret) => ({ headers: gitlabHeaders(`${secret}x`) })),
    attempt('gitlab', 'secret as a Bearer credential instead', (secret) => ({
      headers: { ...withoutHeader(gitlabHeaders(secret), 'x-gitlab-token'), authorization: `Bearer ${secret}` },
    })),
    attempt('gitlab', 'secret as a token query instead', (secret) => ({
      headers: withoutHeader(gitlabHeaders(secret), 'x-gitlab-token'),
      query: `?token=${encodeURIComponent(secret)}`,
    })),
    // sentry
    attempt('sentry', 'tampered body', (secret, body, tag) => ({
      headers: sentryHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('sentry', 'wrong secret', (_secret, body) => ({ headers: sentryHeaders(otherToken(), body) })),
    attempt('sentry', 'missing signature', (secret, body) => ({
      headers: withoutHeader(sentryHeaders(secret, body), 'sentry-hook-signature'),
    })),
    attempt('sentry', 'signature of an empty body', (secret) => ({ headers: sentryHeaders(secret, '') })),
    // pagerduty
    attempt('pagerduty', 'tampered body', (secret, body, tag) => ({
      headers: pagerdutyHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('pagerduty', 'wrong secret', (_secret, body) => ({ headers: pagerdutyHeaders(otherToken(), body) })),
    attempt('pagerduty', 'two wrong signatures', (_secret, body) => ({
      headers: pagerdutyHeaders([otherToken(), otherToken()], body),
    })),
    attempt('pagerduty', 'right digest under another version', (secret, body) => ({
      headers: pagerdutyHeaders(secret, body, { version: 'v0' }),
    })),
    attempt('pagerduty', 'missing signature', (secret, body) => ({
      headers: withoutHeader(pagerdutyHeaders(secret, body), 'x-pagerduty-signature'),
    })),
    // uptime kuma: Bearer or ?token=
    attempt('kuma', 'wrong bearer', () => ({ headers: bearerHeaders(otherToken()) })),
    attempt('kuma', 'wrong token query', () => ({
      headers: { 'content-type': 'application/json' },
      query: `?token=${otherToken()}`,
    })),
    attempt('kuma', 'no credential', () => ({ headers: { 'content-type': 'application/json' } })),
    // hmac (scheme from the route: v1= + base64 HMAC-SHA512 of "<t>.<body>")
    attempt('hmac', 'tampered body', (secret, body, tag) => ({
      headers: hmacRouteHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('hmac', 'wrong secret', (_secret, body) => ({ headers: hmacRouteHeaders(otherToken(), body) })),
    attempt('hmac', 'missing signature', (secret, body) => ({
      headers: withoutHeader(hmacRouteHeaders(secret, body), 'x-relay-signature'),
    })),
    attempt('hmac', 'missing timestamp', (secret, body) => ({
      headers: withoutHeader(hmacRouteHeaders(secret, body), 'x-relay-timestamp'),
    })),
    attempt('hmac', 'replay outside the tolerance', (secret, body) => ({
      headers: hmacRouteHeaders(secret, body, { timestamp: old() }),
    })),
    attempt('hmac', 'timestamp ahead of the tolerance', (secret, body) => ({
      headers: hmacRouteHeaders(secret, body, { timestamp: ahead() }),
    })),
    attempt('hmac', 'fresh timestamp on an old signature', (secret, body) => ({
      headers: { ...hmacRouteHeaders(secret, body, { timestamp: old() }), 'x-relay-timestamp': String(nowSeconds()) },
    })),
    attempt('hmac', 'wrong algorithm (sha256)', (secret, body) => ({
      headers: hmacRouteHeaders(secret, body, { algorithm: 'sha256' }),
    })),
    attempt('hmac', 'wrong encoding (hex)', (secret, body) => ({
      headers: hmacRouteHeaders(secret, body, { encoding: 'hex' }),
    })),
    attempt('hmac', 'missing prefix', (secret, body) => ({ headers: hmacRouteHeaders(secret, body, { prefix: '' }) })),
    attempt('hmac', 'signature of the body alone', (secret, body) => ({
      headers: {
        ...hmacRouteHeaders(secret, body),
        'x-relay-signature': `v1=${createHmac('sha512', secret).update(body).digest('base64')}`,
      },
    })),
    // standard webhooks under Svix's header names
    attempt('svix', 'tampered body', (secret, body, tag) => ({
      headers: svixHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('svix', 'wrong secret', (_secret, body) => ({ headers: svixHeaders(otherWhsec(), body) })),
    attempt('svix', 'missing signature', (secret, body) => ({
      headers: withoutHeader(svixHeaders(secret, body), 'svix-signature'),
    })),
    attempt('svix', 'replay outside the tolerance', (secret, body) => ({
      headers: svixHeaders(secret, body, { timestamp: old() }),
    })),
    attempt('svix', 'id changed after signing', (secret, body) => ({
      headers: { ...svixHeaders(secret, body), 'svix-id': 'msg_other' },
    })),
    attempt('svix', 'svix signature under a webhook-id', (secret, body) => ({
      headers: { ...svixHeaders(secret, body), 'webhook-id': 'msg_other' },
    })),
    // sns: the AWS signature, the route's topics and its token
    attempt('sns', 'tampered message', (secret, body, tag) => ({
      headers: snsTokenHeaders(secret, body),
      body: tamper(body, tag),
    })),
    attempt('sns', 'signed with another key', (secret, _body, tag) => {
      const body = snsBody(tag, { key: FORGER_KEY });
      return { headers: snsTokenHeaders(secret, body), body };
    }),
    attempt('sns', 'validly signed, another topic', (secret, _body, tag) => {
      const body = snsBody(tag, { topic: 'arn:aws:sns:eu-west-1:999999999999:reliability' });
      return { headers: snsTokenHeaders(secret, body), body };
    }),
    attempt('sns', 'topic header contradicts the body', (secret, body) => ({
      headers: {
        ...snsTokenHeaders(secret, body),
        'x-amz-sns-topic-arn': 'arn:aws:sns:eu-west-1:999999999999:reliability',
      },
    })),
    attempt('sns', 'stale message', (secret, _body, tag) => {
      const body = snsBody(tag, { at: new Date(Date.now() - 2 * 3600_000) });
      return { headers: snsTokenHeaders(secret, body), body };
    }),
    attempt('sns', 'message from the future', (secret, _body, tag) => {
      const body = snsBody(tag, { at: new Date(Date.now() + (TOLERANCE + 60) * 1000) });
      return { headers: snsTokenHeaders(secret, body), body };
    }),
    attempt('sns', 'certificate on a look-alike host', (secret, _body, tag) => {
      const body = JSON.stringify(
        signSnsMessage(JSON.parse(snsBody(tag)) as Record<string, string>, {
          certUrl: 'https://sns.eu-west-1.amazonaws.com.evil.example/SimpleNotificationService-a.pem',
        }),
      );
      return { headers: snsTokenHeaders(secret, body), body };
    }),
    attempt('sns', 'certificate over http', (secret, _body, tag) => {
      const body = JSON.stringify(
        signSnsMessage(JSON.parse(snsBody(tag)) as Record<string, string>, {
          certUrl: 'http://sns.eu-west-1.amazonaws.com/SimpleNotificationService-a.pem',
        }),
      );
      return { headers: snsTokenHeaders(secret, body), body };
    }),
    attempt('sns', 'no token', (_secret, body) => ({
      headers: snsHeaders(JSON.parse(body) as Record<string, string>),
    })),
    attempt('sns', 'wrong token', (_secret, body) => ({ headers: snsTokenHeaders(otherToken(), body) })),
  ];
}

describe('forgery: signed sources refuse forged webhooks (local runtime + sandbox)', () => {
  const controls: Attempt[] = [];
  const forged: Attempt[] = [];
  const acceptedIds: string[] = [];

  beforeAll(async () => {
    scenario = await startScenario({ label: 'forgery' });
    controls.push(...authentic());
    forged.push(...forgeries());
  });

  afterAll(async () => {
    await scenario?.close();
  });

  it('refuses every forgery with 401', async () => {
    const answers = await Promise.all(
      forged.map(async (each) => ({
        each,
        answer: await call(scenario.runtime.baseUrl, {
          method: 'POST',
          path: each.path,
          headers: each.headers,
          body: each.body,
        }),
      })),
    );
    const wrong = answers.filter(({ answer }) => answer.status !== 401 || answer.json?.['error'] !== 'unauthorized');
    expect(
      wrong.map(({ each, answer }) => `${each.route} / ${each.name}: ${answer.status} ${answer.text.slice(0, 200)}`),
    ).toEqual([]);
    expect(forged.length).toBeGreaterThanOrEqual(40);
  });

  it('accepts the authentic control of every scheme with 202', async () => {
    for (const each of controls) {
      const answer = await call(scenario.runtime.baseUrl, {
        method: 'POST',
        path: each.path,
        headers: each.headers,
        body: each.body,
      });
      expect({
        control: `${each.route} / ${each.name}`,
        status: answer.status,
        text: answer.status === 202 ? '' : answer.text,
      }).toEqual({ control: `${each.route} / ${each.name}`, status: 202, text: '' });
      acceptedIds.push(...(answer.json!['ids'] as string[]));
    }
  });

  it('sends the controls, and nothing for any forgery', async () => {
    const wanted = new Set(controls.map((each) => each.tag));
    await waitUntil(
      'every authentic control to reach the SMS service',
      () => [...wanted].every((tag) => inboxCounts(scenario.sandbox).has(tag)),
      {
        timeoutMs: 60_000,
        describe: () => `missing: ${[...wanted].filter((tag) => !inboxCounts(scenario.sandbox).has(tag)).join(' | ')}`,
      },
    );
    const status = await scenario.runtime.stop();
    expect(status).toEqual({ code: 0, signal: null });

    const inbox = inboxCounts(scenario.sandbox);
    const forgedTags = new Set(forged.flatMap((each) => [each.tag, `${each.tag} (changed)`]));
    expect([...inbox.keys()].filter((text) => forgedTags.has(text))).toEqual([]);
    expect([...inbox.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    expect([...inbox.keys()].sort()).toEqual([...wanted].sort());

    // The store holds exactly the controls: a forgery left no record, not even a dropped one.
    const records = await storedRecords(scenario.files.dataDir);
    expect(records.map((record) => record.id).sort()).toEqual([...acceptedIds].sort());
    expect(records.every((record) => record.state === 'SENT')).toBe(true);
  });
});
