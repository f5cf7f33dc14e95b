import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RouteSchema, type RouteConfig } from '../../../../functions/core/config/schema';
import { GOALERT, goalert } from '../../../../functions/core/sources/goalert';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, renderDefault } from './pack-helpers';

const TOKEN = 'gq7Lr2Vx9Tb4Nw1Kc8Hs3Jd6Fm0Pz5Ya';

/**
 * GoAlert's webhook keyring (target/goalert PR #4225: keyring/store.go `SignASN1`, notification/
 * webhook/sender.go): ECDSA keys on P-224 (`ecdsa.GenerateKey(elliptic.P224(), …)`), the signature
 * `ecdsa.SignASN1(rand, key, sha512.Sum512_224(body))`, base64 (standard alphabet) into
 * `X-Webhook-Signature`. Node's `sign('sha512-224', body, key)` is that: SHA-512/224 of the body,
 * ECDSA over the digest, DER (ASN.1) encoded.
 */
const goalertKeys = () => generateKeyPairSync('ec', { namedCurve: 'P-224' });
const { privateKey, publicKey } = goalertKeys();
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const signature = (body: Uint8Array | string, key = privateKey): string =>
  sign('sha512-224', typeof body === 'string' ? Buffer.from(body) : body, key).toString('base64');

const route = (settings: Record<string, unknown> = {}): RouteConfig =>
  RouteSchema.parse({
    source: 'goalert',
    secret: 'goalert-token',
    recipients: ['{{ query.to }}'],
    allowRecipients: ['person:*'],
    ...settings,
  });

const context = (settings: Record<string, unknown> = {}): AuthContext => ({
  secret: TOKEN,
  toleranceSeconds: 300,
  route: route(settings),
});

/** A POST of GoAlert's webhook contact method: its URL carries the person and the route's token. */
const call = (
  body: Uint8Array | string,
  {
    query = { to: '255712345678', token: TOKEN },
    headers = {},
  }: { query?: Record<string, string>; headers?: Record<string, string> } = {},
) => webhookOf({ body, headers: { 'Content-Type': 'application/json', ...headers }, query });

const alert = fixtureBytes('goalert/alert.json');

describe('goalert.authenticate: the token of the contact method URL', () => {
  it('accepts ?token= (all a GoAlert user can set) and a Bearer header', () => {
    expect(goalert.authenticate(call(alert), context())).toEqual({ ok: true });
    expect(
      goalert.authenticate(
        call(alert, { query: { to: '255712345678' }, headers: goalert.sign({ body: alert, secret: TOKEN }) }),
        context(),
      ),
    ).toEqual({ ok: true });
  });

  it('refuses a missing or wrong token without quoting it', () => {
    expect(goalert.authenticate(call(alert, { query: { to: '255712345678' } }), context()).ok).toBe(false);
    const wrong = goalert.authenticate(call(alert, { query: { to: '255712345678', token: 'not-it' } }), context());
    expect(wrong).toEqual({ ok: false, reason: 'token query parameter does not match' });
    expect(JSON.stringify(wrong)).not.toContain(TOKEN);
  });
});

describe("goalert.authenticate: X-Webhook-Signature, with the route holding GoAlert's public key", () => {
  it('accepts the body signed as GoAlert signs it', () => {
    expect(
      goalert.authenticate(
        call(alert, { headers: { 'X-Webhook-Signature': signature(alert) } }),
        context({ publicKey: PUBLIC_PEM }),
      ),
    ).toEqual({ ok: true });
  });

  it('refuses a signature by another key, over another body, or missing', () => {
    const withKey = context({ publicKey: PUBLIC_PEM });
    expect(
      goalert.authenticate(
        call(alert, { headers: { 'X-Webhook-Signature': signature(alert, goalertKeys().privateKey) } }),
        withKey,
      ),
    ).toEqual({ ok: false, reason: 'X-Webhook-Signature does not match the body' });
    const tampered = Buffer.from(alert).toString('utf8').replace('"AlertID":1942', '"AlertID":1943');
    expect(
      goalert.authenticate(call(tampered, { headers: { 'X-Webhook-Signature': signature(alert) } }), withKey).ok,
    ).toBe(false);
    expect(goalert.authenticate(call(alert), withKey)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^missing X-Webhook-Signature/),
    });
    expect(
      goalert.authenticate(call(alert, { headers: { 'X-Webhook-Signature': 'bm90IGEgc2lnbmF0dXJl' } }), withKey).ok,
    ).toBe(false);
    expect(goalert.authenticate(call(alert, { headers: { 'X-Webhook-Signature': 'not base64!' } }), withKey)).toEqual({
      ok: false,
      reason: 'X-Webhook-Signature is not base64',
    });
  });

  it('still needs the token: a signature proves GoAlert sent it, the token that it was meant for this route', () => {
    const signed = call(alert, { query: { to: '255712345678' }, headers: { 'X-Webhook-Signature': signature(alert) } });
    expect(goalert.authenticate(signed, context({ publicKey: PUBLIC_PEM })).ok).toBe(false);
  });

  it('a route without publicKey ignores the header (GoAlert releases before PR #4225 send none)', () => {
    expect(goalert.authenticate(call(alert, { headers: { 'X-Webhook-Signature': 'AAAA' } }), context())).toEqual({
      ok: true,
    });
  });

  it('takes only an EC public key in publicKey, and on goalert routes only', () => {
    expect(() => route({ publicKey: 'not a key' })).toThrow(/publicKey is a PEM public key/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    expect(() => route({ publicKey: rsa })).toThrow(/publicKey is a PEM public key/);
  });

  it('send-test cannot sign for a route with publicKey: only GoAlert holds the private key', () => {
    expect(() => goalert.sign({ body: alert, secret: TOKEN, route: route({ publicKey: PUBLIC_PEM }) })).toThrow(
      /only GoAlert holds the private key/,
    );
  });
});

describe('goalert default template: the SMS GoAlert itself sends (notification/twilio/alertsms.go)', () => {
  it.each([
    [
      'goalert/alert.json',
      'GoAlert: Alert #1942: api-01 down: HTTP check failing for 5 minutes\n\nhttps://goalert.example.com/alerts/1942',
    ],
    [
      'goalert/alert-bundle.json',
      "GoAlert: Svc 'Shop API': 3 unacked alerts\n\nhttps://goalert.example.com/services/8a0c3a48-7d7f-4f4e-9b1e-2f1c1d6e7a10/alerts",
    ],
    [
      'goalert/alert-status.json',
      'GoAlert: Alert #1942: api-01 down: HTTP check failing for 5 minutes\n\nAcknowledged by Asha Mwita',
    ],
    ['goalert/test.json', 'GoAlert: Test message.'],
    ['goalert/verification.json', 'GoAlert: Verification code: 428913'],
  ])('%s', (path, text) => {
    expect(renderDefault(goalert, fixtureJson(path))).toBe(text);
  });

  it('shortens a long summary so that the alert link still fits 160 characters', () => {
    const long = {
      ...fixtureJson('goalert/alert.json'),
      Summary: 'disk usage above 95 percent on db-primary-01 '.repeat(5),
    };
    const text = renderDefault(goalert, long);
    expect(text.length).toBeLessThanOrEqual(160);
    expect(text).toMatch(
      /^GoAlert: Alert #1942: disk usage above 95 percent.*\.\.\.\n\nhttps:\/\/goalert\.example\.com\/alerts\/1942$/s,
    );
  });

  it("keeps a status update's log entry whole when the summary is long", () => {
    const long = { ...fixtureJson('goalert/alert-status.json'), Summary: 'x'.repeat(300) };
    const text = renderDefault(goalert, long);
    expect(text.length).toBeLessThanOrEqual(160);
    expect(text.endsWith('\n\nAcknowledged by Asha Mwita')).toBe(true);
  });

  it('uses the AppName GoAlert is configured with', () => {
    expect(renderDefault(goalert, { AppName: 'Kilimo Pager', Type: 'Test' })).toBe('Kilimo Pager: Test message.');
  });
});

describe('goalert.dedupe', () => {
  const key = (path: string, query: Record<string, string> = { to: '255712345678', token: TOKEN }) => {
    const webhook = call(fixtureBytes(path), { query });
    return goalert.dedupe(goalert.parse(webhook), webhook);
  };

  it("catches GoAlert's retries of one notification within a minute", () => {
    expect(key('goalert/alert.json')).toEqual(key('goalert/alert.json'));
    expect(key('goalert/alert.json').windowSeconds).toBe(GOALERT.dedupeWindowSeconds);
    expect(key('goalert/alert.json').key).toMatch(/^goalert:alert:1942:sha256-/);
  });

  it('tells apart the same alert sent to two people (two URLs), and each kind of message', () => {
    expect(key('goalert/alert.json').key).not.toBe(key('goalert/alert.json', { to: '255754000111', token: TOKEN }).key);
    const kinds = [
      'goalert/alert.json',
      'goalert/alert-status.json',
      'goalert/alert-bundle.json',
      'goalert/test.json',
      'goalert/verification.json',
    ].map((path) => key(path).key);
    expect(new Set(kinds).size).toBe(kinds.length);
  });

  it('does not count the token: the same person reached through a rotated token is the same delivery', () => {
    expect(key('goalert/alert.json', { to: '255712345678', token: 'a' }).key).toBe(
      key('goalert/alert.json', { to: '255712345678', token: 'b' }).key,
    );
  });

  it('tells apart two status updates of one alert by their log entry', () => {
    const first = call(fixtureBytes('goalert/alert-status.json'));
    const second = call(
      Buffer.from(fixtureBytes('goalert/alert-status.json'))
        .toString('utf8')
        .replace('Acknowledged by Asha Mwita', 'Closed by Asha Mwita'),
    );
    expect(goalert.dedupe(goalert.parse(first), first).key).not.toBe(goalert.dedupe(goalert.parse(second), second).key);
  });
});
