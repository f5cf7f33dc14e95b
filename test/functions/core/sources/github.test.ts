import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import { GITHUB, github } from '../../../../functions/core/sources/github';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = "It's a Secret to Everybody";
const context: AuthContext = { secret: SECRET, toleranceSeconds: 300 };
const DELIVERY = '72d3162e-cc78-11e3-81ab-4c9367dc0958';

const hexHmac = (body: Uint8Array | string, secret = SECRET): string =>
  createHmac('sha256', secret).update(body).digest('hex');

const signed = (body: Uint8Array | string, headers: Record<string, string> = {}, secret = SECRET) =>
  webhookOf({
    body,
    headers: {
      'Content-Type': 'application/json',
      'X-GitHub-Event': 'push',
      'X-GitHub-Delivery': DELIVERY,
      'X-Hub-Signature-256': `sha256=${hexHmac(body, secret)}`,
      ...headers,
    },
  });

describe('github.authenticate', () => {
  const push = fixtureBytes('github/push.json');

  it('accepts X-Hub-Signature-256 computed over the raw body', () => {
    expect(github.authenticate(signed(push), context)).toEqual({ ok: true });
  });

  it('accepts the hex digest in upper case too', () => {
    const webhook = signed(push, { 'X-Hub-Signature-256': `sha256=${hexHmac(push).toUpperCase()}` });
    expect(github.authenticate(webhook, context)).toEqual({ ok: true });
  });

  it('rejects a body changed after signing', () => {
    const tampered = Buffer.from(push).toString('utf8').replace('"forced": false', '"forced": true');
    const webhook = webhookOf({ body: tampered, headers: { 'X-Hub-Signature-256': `sha256=${hexHmac(push)}` } });
    expect(github.authenticate(webhook, context)).toEqual({
      ok: false,
      reason: 'X-Hub-Signature-256 does not match the body',
    });
  });

  it('rejects a signature made with another secret, without leaking either value', () => {
    const outcome = github.authenticate(signed(push, {}, 'another secret'), context);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.reason).not.toContain(SECRET);
    expect(outcome.reason).not.toContain(hexHmac(push));
  });

  it('rejects a missing signature header', () => {
    expect(github.authenticate(webhookOf({ body: push }), context)).toEqual({
      ok: false,
      reason: 'missing X-Hub-Signature-256 header',
    });
  });

  it.each([
    ['no algorithm prefix', hexHmac('x')],
    ['the legacy SHA-1 form', `sha1=${createHmac('sha1', SECRET).update('x').digest('hex')}`],
    ['a truncated digest', `sha256=${hexHmac('x').slice(0, 63)}`],
    ['non-hex digits', `sha256=${'z'.repeat(64)}`],
  ])('rejects a malformed header: %s', (_case, value) => {
    expect(github.authenticate(webhookOf({ body: push, headers: { 'X-Hub-Signature-256': value } }), context)).toEqual({
      ok: false,
      reason: 'malformed X-Hub-Signature-256 header',
    });
  });

  it('ignores the legacy X-Hub-Signature header even when it is valid', () => {
    const webhook = webhookOf({
      body: push,
      headers: { 'X-Hub-Signature': `sha1=${createHmac('sha1', SECRET).update(push).digest('hex')}` },
    });
    expect(github.authenticate(webhook, context).ok).toBe(false);
  });

  it('fails closed when the route has an empty secret', () => {
    const webhook = signed(push, {}, '');
    expect(github.authenticate(webhook, { secret: '', toleranceSeconds: 300 })).toEqual({
      ok: false,
      reason: 'no secret is configured for this route',
    });
  });
});

describe('github form-encoded deliveries (the default content type)', () => {
  const form = fixtureBytes('github/push.form.txt');
  const formHeaders = { 'Content-Type': 'application/x-www-form-urlencoded' };

  it('verifies the signature over the raw form bytes', () => {
    expect(github.authenticate(signed(form, formHeaders), context)).toEqual({ ok: true });
  });

  it('does not accept a signature over the JSON inside payload=', () => {
    const json = new URLSearchParams(Buffer.from(form).toString('utf8')).get('payload') ?? '';
    const webhook = webhookOf({
      body: form,
      headers: { ...formHeaders, 'X-Hub-Signature-256': `sha256=${hexHmac(json)}` },
    });
    expect(github.authenticate(webhook, context).ok).toBe(false);
  });

  it('parses the JSON from the payload field', () => {
    expect(github.parse(signed(form, formHeaders))).toEqual(fixtureJson('github/push.json'));
  });

  it('refuses a form body without a payload field', () => {
    expect(() => github.parse(signed('ref=refs%2Fheads%2Fmain', formHeaders))).toThrow(BadPayloadError);
  });
});

describe('github.parse', () => {
  it('parses a JSON body', () => {
    expect(github.parse(signed(fixtureBytes('github/issues-opened.json')))).toMatchObject({
      action: 'opened',
      issue: { number: 17 },
    });
  });

  it('refuses a body that is not JSON', () => {
    expect(() => github.parse(signed('{"ref": '))).toThrow(BadPayloadError);
  });
});

describe('github.ping', () => {
  it('acknowledges the ping GitHub sends when a webhook is created', () => {
    const webhook = signed(fixtureBytes('github/ping.json'), { 'X-GitHub-Event': 'ping' });
    expect(github.ping(github.parse(webhook), webhook)).toBe('github ping');
  });

  it('lets every other event through', () => {
    const webhook = signed(fixtureBytes('github/push.json'));
    expect(github.ping(github.parse(webhook), webhook)).toBeUndefined();
  });
});

describe('github.dedupe', () => {
  const push = fixtureBytes('github/push.json');

  it('keys on X-GitHub-Delivery, which a redelivery keeps', () => {
    const first = signed(push);
    const redelivery = signed(push);
    expect(github.dedupe(github.parse(first), first)).toEqual({
      key: `github:delivery:${DELIVERY}`,
      windowSeconds: 72 * 3600,
      replayKey: expect.stringMatching(/^github:body:[0-9a-f]{64}$/),
    });
    expect(github.dedupe(github.parse(redelivery), redelivery).key).toBe(github.dedupe(github.parse(first), first).key);
  });

  it('keys the signed body too, so a captured delivery replayed under a fresh delivery id is a repeat', () => {
    const first = signed(push);
    const replay = signed(push, { 'X-GitHub-Delivery': '0b989ba4-242f-11e5-81e1-c7b6966d2516' });
    const other = signed(
      new TextEncoder().encode(new TextDecoder().decode(push).replace('"ref"', '"after_replay": 1, "ref"')),
    );
    expect(github.dedupe(github.parse(replay), replay).replayKey).toBe(
      github.dedupe(github.parse(first), first).replayKey,
    );
    expect(github.dedupe(github.parse(other), other).replayKey).not.toBe(
      github.dedupe(github.parse(first), first).replayKey,
    );
  });

  it('gives another delivery of the same body another key', () => {
    const other = signed(push, { 'X-GitHub-Delivery': '0b989ba4-242f-11e5-81e1-c7b6966d2516' });
    expect(github.dedupe(github.parse(other), other).key).not.toBe(`github:delivery:${DELIVERY}`);
  });

  it('falls back to a hash of the raw body without a delivery id', () => {
    const webhook = webhookOf({ body: push });
    const key = github.dedupe({}, webhook).key;
    expect(key).toMatch(/^github:body:[0-9a-f]{64}$/);
    expect(github.dedupe({}, webhookOf({ body: push })).key).toBe(key);
    expect(github.dedupe({}, webhookOf({ body: fixtureBytes('github/issues-opened.json') })).key).not.toBe(key);
    expect(GITHUB.dedupeWindowSeconds).toBe(259_200);
  });
});

describe('github.defaultTemplate', () => {
  const render = (file: string, event: string) => renderDefault(github, fixtureJson(file), { 'x-github-event': event });

  it('summarises a push', () => {
    expect(render('github/push.json', 'push')).toBe('[kilimo-labs/sms-relay] amina-mushi pushed 2 commit(s) to main');
  });

  it('summarises an opened issue', () => {
    expect(render('github/issues-opened.json', 'issues')).toBe(
      '[kilimo-labs/sms-relay] Issue #17 opened by juma-kassim: Balance alert SMS not sent when top-up fails',
    );
  });

  it('summarises a completed workflow run by its conclusion', () => {
    expect(render('github/workflow_run-completed.json', 'workflow_run')).toBe(
      '[kilimo-labs/sms-relay] CI failure on main',
    );
  });

  it('says merged for a pull request closed by merging', () => {
    const body = {
      action: 'closed',
      number: 42,
      pull_request: { number: 42, title: 'Add WooCommerce pack', merged: true },
      repository: { full_name: 'kilimo-labs/sms-relay' },
      sender: { login: 'juma-kassim' },
    };
    expect(renderDefault(github, body, { 'x-github-event': 'pull_request' })).toBe(
      '[kilimo-labs/sms-relay] PR #42 merged by juma-kassim: Add WooCommerce pack',
    );
  });

  it('names any other event', () => {
    const body = { action: 'created', repository: { full_name: 'kilimo-labs/sms-relay' }, sender: { login: 'neema' } };
    expect(renderDefault(github, body, { 'x-github-event': 'star' })).toBe(
      '[kilimo-labs/sms-relay] star created by neema',
    );
  });

  it('stays one line of GSM characters', () => {
    expect(render('github/push.json', 'push')).toMatch(GSM_PRINTABLE);
    expect(github.description).not.toContain('\n');
  });
});
