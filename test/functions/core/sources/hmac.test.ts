import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig, type CompiledRoute } from '../../../../functions/core/config/load';
import { evaluateWebhook } from '../../../../functions/core/pipeline/evaluate';
import { sha256Hex } from '../../../../functions/core/sources/auth';
import { hmac } from '../../../../functions/core/sources/hmac';
import type { InboundWebhook } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, renderDefault } from './pack-helpers';

/**
 * Signatures here are computed from each sender's documented scheme with node:crypto, never with
 * the relay's own signer, so the pack is checked against the schemes.
 */

const SECRET = 'sk_test_5f8a1c2e9b7d4a3f6e0c1b2a9d8e7f6a';
const NOW = new Date('2026-03-01T10:00:00Z');
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);

/** Routes as a user would write them, validated and compiled by the relay's own loader. */
const ROUTES = loadConfig(`
provider: { baseUrl: "https://sms.example.co.tz" }
secrets: sms-relay/test
routes:
  # Paystack: x-paystack-signature, HMAC-SHA512 hex of the body.
  paystack:
    source: hmac
    secret: paystack-secret
    recipients: ["0754111222"]
    template: "Paystack payment {{ data.reference }}: {{ data.amount | money_minor: data.currency }} from {{ data.customer.email }}"
    signature: { header: X-Paystack-Signature, algorithm: sha512 }
  # Typeform: Typeform-Signature: sha256=<base64 HMAC-SHA256 of the body>.
  typeform:
    source: hmac
    secret: typeform-secret
    recipients: ["0754111222"]
    template: "New response to {{ form_response.definition.title }} from {{ form_response.answers.last.email }}"
    signature: { header: typeform-signature, encoding: base64, prefix: "sha256=" }
  # Slack's signing scheme: x-slack-signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<body>">.
  slack:
    source: hmac
    secret: slack-secret
    recipients: ["0754111222"]
    template: "{{ event.text }}"
    signature: { header: x-slack-signature, prefix: "v0=", signed: "v0:{timestamp}:{body}" }
    timestamp: { header: x-slack-request-timestamp }
  # A sender with a delivery id and its own tolerance.
  ids:
    source: hmac
    secret: ids-secret
    recipients: ["0754111222"]
    toleranceSeconds: 600
    signature: { header: x-signature, algorithm: sha1, signed: "{timestamp}.{body}" }
    timestamp: { header: x-signature-timestamp, tolerance: 60 }
    dedupe: { header: x-request-id }
`).routes;

const routeOf = (id: string): CompiledRoute => ROUTES.get(id)!;
const contextOf = (id: string) => ({
  secret: SECRET,
  toleranceSeconds: routeOf(id).config.toleranceSeconds,
  route: routeOf(id).config,
});
const sign = (algorithm: string, data: Uint8Array | string, encoding: 'hex' | 'base64', key = SECRET): string =>
  createHmac(algorithm, key).update(data).digest(encoding);
const join = (...parts: (string | Uint8Array)[]): Buffer =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : part)));

const PAYSTACK = fixtureBytes('hmac/paystack-charge-success.json');
const TYPEFORM = fixtureBytes('hmac/typeform-form-response.json');
const SLACK = fixtureBytes('hmac/slack-app-mention.json');

const paystack = (
  headers: Record<string, string> = { 'x-paystack-signature': sign('sha512', PAYSTACK, 'hex') },
  body = PAYSTACK,
): InboundWebhook => webhookOf({ body, headers: { 'content-type': 'application/json', ...headers }, receivedAt: NOW });
const typeform = (signature = `sha256=${sign('sha256', TYPEFORM, 'base64')}`, body = TYPEFORM): InboundWebhook =>
  webhookOf({
    body,
    headers: { 'content-type': 'application/json', 'Typeform-Signature': signature },
    receivedAt: NOW,
  });
interface SlackDelivery {
  readonly timestamp?: string;
  readonly body?: Uint8Array;
  /** The timestamp the signature was made with, when it differs from the header's. */
  readonly signedAt?: string;
  readonly key?: string;
}
const slack = ({
  timestamp = String(NOW_SECONDS),
  body = SLACK,
  signedAt = timestamp,
  key = SECRET,
}: SlackDelivery = {}): InboundWebhook =>
  webhookOf({
    body,
    headers: {
      'content-type': 'application/json',
      'X-Slack-Request-Timestamp': timestamp,
      'X-Slack-Signature': `v0=${sign('sha256', join(`v0:${signedAt}:`, SLACK), 'hex', key)}`,
    },
    receivedAt: NOW,
  });

function smsOf(id: string, webhook: InboundWebhook): string[] {
  const evaluation = evaluateWebhook(routeOf(id), webhook, { secret: SECRET });
  expect(evaluation.verdict).toBe('send');
  return evaluation.messages.map((message) => message.text);
}

describe('hmac: genuine deliveries', () => {
  it('accepts Paystack (HMAC-SHA512 hex of the body) and sends the exact SMS', () => {
    expect(hmac.authenticate(paystack(), contextOf('paystack'))).toEqual({ ok: true });
    expect(smsOf('paystack', paystack())).toEqual(['Paystack payment qTPrJoy9Bx: NGN 100.00 from bojack@horseman.com']);
  });

  it('accepts Typeform (sha256= prefix, base64) and sends the exact SMS', () => {
    expect(hmac.authenticate(typeform(), contextOf('typeform'))).toEqual({ ok: true });
    expect(smsOf('typeform', typeform())).toEqual(['New response to Webhooks example from laura@example.com']);
  });

  it("accepts Slack's v0 scheme (prefix, timestamp in the signed string) and sends the exact SMS", () => {
    expect(hmac.authenticate(slack(), contextOf('slack'))).toEqual({ ok: true });
    expect(smsOf('slack', slack())).toEqual(['<@U0LAN0Z89> is it everything a river should be?']);
  });

  it('accepts a hex signature in upper case', () => {
    expect(
      hmac.authenticate(
        paystack({ 'x-paystack-signature': sign('sha512', PAYSTACK, 'hex').toUpperCase() }),
        contextOf('paystack'),
      ),
    ).toEqual({ ok: true });
  });

  it('makes a useful SMS without a template, like generic (message, text, ..., the event name)', () => {
    expect(renderDefault(hmac, fixtureJson('hmac/paystack-charge-success.json'))).toBe('charge.success');
    expect(renderDefault(hmac, fixtureJson('hmac/typeform-form-response.json'))).toBe('form_response');
    expect(renderDefault(hmac, { message: 'Backup failed', event: 'x' })).toBe('Backup failed');
    expect(renderDefault(hmac, {})).toBe('Webhook received');
  });

  it('parses form-encoded bodies as fields, as generic does', () => {
    const body = 'command=%2Fdeploy&text=api+prod';
    expect(
      hmac.parse(webhookOf({ body, headers: { 'content-type': 'application/x-www-form-urlencoded' } })),
    ).toMatchObject({ command: '/deploy', text: 'api prod' });
  });

  it('has no ping: a test delivery is an SMS', () => {
    expect(hmac.ping(fixtureJson('hmac/paystack-charge-success.json'), paystack())).toBeUndefined();
  });
});

describe('hmac: refusals', () => {
  const refused = (id: string, webhook: InboundWebhook, reason: RegExp | string) => {
    const outcome = hmac.authenticate(webhook, contextOf(id));
    expect(outcome).toEqual({ ok: false, reason: expect.stringMatching(reason) });
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
    // And the whole pipeline says unauthorized: nothing to record.
    expect(evaluateWebhook(routeOf(id), webhook, { secret: SECRET })).toMatchObject({
      verdict: 'unauthorized',
      messages: [],
    });
  };

  it('refuses a signature made with another secret', () => {
    refused(
      'paystack',
      paystack({ 'x-paystack-signature': sign('sha512', PAYSTACK, 'hex', 'sk_test_other') }),
      'x-paystack-signature does not match the body',
    );
  });

  it('refuses a tampered body', () => {
    const tampered = Buffer.from(
      Buffer.from(PAYSTACK).toString('utf8').replace('"amount": 10000', '"amount": 1000000'),
    );
    refused(
      'paystack',
      paystack({ 'x-paystack-signature': sign('sha512', PAYSTACK, 'hex') }, tampered),
      'does not match the body',
    );
  });

  it('refuses the wrong algorithm, the wrong encoding and a missing or wrong prefix as malformed', () => {
    refused(
      'paystack',
      paystack({ 'x-paystack-signature': sign('sha256', PAYSTACK, 'hex') }),
      'malformed x-paystack-signature header',
    );
    refused('paystack', paystack({ 'x-paystack-signature': sign('sha512', PAYSTACK, 'base64') }), 'malformed');
    refused('typeform', typeform(`sha256=${sign('sha256', TYPEFORM, 'hex')}`), 'malformed typeform-signature header');
    refused('typeform', typeform(sign('sha256', TYPEFORM, 'base64')), 'malformed');
    refused('typeform', typeform(`sha1=${sign('sha256', TYPEFORM, 'base64')}`), 'malformed');
    refused(
      'slack',
      webhookOf({
        body: SLACK,
        headers: {
          'x-slack-request-timestamp': String(NOW_SECONDS),
          'x-slack-signature': sign('sha256', join(`v0:${NOW_SECONDS}:`, SLACK), 'hex'),
        },
        receivedAt: NOW,
      }),
      'malformed',
    );
  });

  it('refuses a signature of the body alone where the scheme signs the timestamp too', () => {
    refused(
      'slack',
      webhookOf({
        body: SLACK,
        headers: {
          'x-slack-request-timestamp': String(NOW_SECONDS),
          'x-slack-signature': `v0=${sign('sha256', SLACK, 'hex')}`,
        },
        receivedAt: NOW,
      }),
      'does not match the signed "v0:{timestamp}:{body}"',
    );
  });

  it('refuses a missing signature header', () => {
    refused('paystack', paystack({}), 'missing x-paystack-signature header');
  });

  it('refuses stale and future timestamps, in both directions, by the route tolerance', () => {
    const stale = String(NOW_SECONDS - 301);
    const ahead = String(NOW_SECONDS + 301);
    refused('slack', slack({ timestamp: stale }), 'older than the 300 s tolerance');
    refused('slack', slack({ timestamp: ahead }), 'ahead of the 300 s tolerance');
    expect(hmac.authenticate(slack({ timestamp: String(NOW_SECONDS - 299) }), contextOf('slack'))).toEqual({
      ok: true,
    });
  });

  it('refuses a fresh timestamp put on an old signature, and a missing or non-numeric timestamp', () => {
    refused('slack', slack({ timestamp: String(NOW_SECONDS), signedAt: String(NOW_SECONDS - 3600) }), 'does not match');
    const { 'x-slack-request-timestamp': _dropped, ...rest } = slack().headers;
    refused(
      'slack',
      webhookOf({ body: SLACK, headers: rest, receivedAt: NOW }),
      'missing x-slack-request-timestamp header',
    );
    refused('slack', slack({ timestamp: '2026-03-01T10:00:00Z' }), 'not unix seconds');
  });

  it("uses timestamp.tolerance over the route's toleranceSeconds", () => {
    const signed = (at: number) => {
      const body = Buffer.from('{"message":"Door opened"}');
      return webhookOf({
        body,
        headers: { 'x-signature-timestamp': String(at), 'x-signature': sign('sha1', join(`${at}.`, body), 'hex') },
        receivedAt: NOW,
      });
    };
    expect(hmac.authenticate(signed(NOW_SECONDS - 59), contextOf('ids'))).toEqual({ ok: true });
    refused('ids', signed(NOW_SECONDS - 61), 'older than the 60 s tolerance');
  });

  it('refuses with an empty secret and without the route settings', () => {
    expect(hmac.authenticate(paystack(), { ...contextOf('paystack'), secret: '' })).toMatchObject({ ok: false });
    expect(hmac.authenticate(paystack(), { secret: SECRET, toleranceSeconds: 300 })).toEqual({
      ok: false,
      reason: 'the route has no signature settings',
    });
  });
});

describe('hmac: dedupe', () => {
  const body = Buffer.from('{"message":"Door opened","event_id":"evt_42"}');
  const delivery = (requestId?: string, at = NOW_SECONDS) =>
    webhookOf({
      body,
      headers: {
        'x-signature-timestamp': String(at),
        'x-signature': sign('sha1', join(`${at}.`, body), 'hex'),
        ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
      },
      receivedAt: NOW,
    });
  const keyOf = (id: string, webhook: InboundWebhook) => hmac.dedupe(hmac.parse(webhook), webhook, routeOf(id).config);

  it('keys on the dedupe header, with the signed body as a replay key (the header is not signed)', () => {
    expect(keyOf('ids', delivery('req-1'))).toEqual({
      key: 'hmac:header:req-1',
      replayKey: `hmac:body:${sha256Hex(body)}`,
      windowSeconds: 72 * 3600,
    });
  });

  it("deduplicates the sender's retries: same id re-signed later, or a captured body under a new id", () => {
    const first = keyOf('ids', delivery('req-1'));
    const retry = keyOf('ids', delivery('req-1', NOW_SECONDS - 30));
    expect(retry.key).toBe(first.key);
    expect(keyOf('ids', delivery('req-2')).replayKey).toBe(first.replayKey);
  });

  it('falls back to a hash of the body without a dedupe header, or when the route names none', () => {
    expect(keyOf('ids', delivery())).toEqual({ key: `hmac:body:${sha256Hex(body)}`, windowSeconds: 72 * 3600 });
    expect(keyOf('paystack', paystack())).toEqual({
      key: `hmac:body:${sha256Hex(PAYSTACK)}`,
      windowSeconds: 72 * 3600,
    });
    expect(keyOf('paystack', paystack()).key).toBe(keyOf('paystack', paystack()).key);
    const other = Buffer.from(Buffer.from(PAYSTACK).toString('utf8').replace('qTPrJoy9Bx', 'qTPrJoy9By'));
    expect(keyOf('paystack', paystack({}, other)).key).not.toBe(keyOf('paystack', paystack()).key);
  });

  it('carries the keys through the pipeline, and the route dedupeWindow still wins', () => {
    const evaluation = evaluateWebhook(routeOf('ids'), delivery('req-1'), { secret: SECRET });
    expect(evaluation).toMatchObject({
      verdict: 'send',
      dedupeKey: 'hmac:header:req-1',
      replayKey: `hmac:body:${sha256Hex(body)}`,
      dedupeWindowSeconds: 72 * 3600,
    });
  });
});
