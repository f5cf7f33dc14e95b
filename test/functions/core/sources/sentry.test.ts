import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SENTRY, sentry } from '../../../../functions/core/sources/sentry';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, GSM_PRINTABLE, renderDefault } from './pack-helpers';

/** Sentry client secrets are 64 hex characters. */
const SECRET = '3c0f5e9d2b7a41e8a6c4d1f09b8e7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f00';
const context: AuthContext = { secret: SECRET, toleranceSeconds: 300 };

const hexHmac = (body: Uint8Array | string, secret = SECRET): string =>
  createHmac('sha256', secret).update(body).digest('hex');

const delivery = (body: Uint8Array | string, headers: Record<string, string> = {}, secret = SECRET) =>
  webhookOf({
    body,
    headers: {
      'Content-Type': 'application/json',
      'Request-ID': crypto.randomUUID().replaceAll('-', ''),
      'Sentry-Hook-Resource': 'event_alert',
      'Sentry-Hook-Timestamp': String(Math.floor(Date.now() / 1000)),
      'Sentry-Hook-Signature': hexHmac(body, secret),
      ...headers,
    },
  });

describe('sentry.authenticate', () => {
  const alert = fixtureBytes('sentry/event_alert.json');

  it('accepts Sentry-Hook-Signature computed over the raw body with the client secret', () => {
    expect(sentry.authenticate(delivery(alert), context)).toEqual({ ok: true });
    expect(
      sentry.authenticate(delivery(alert, { 'Sentry-Hook-Signature': hexHmac(alert).toUpperCase() }), context),
    ).toEqual({ ok: true });
  });

  it('refuses a body changed after signing', () => {
    const tampered = Buffer.from(alert).toString('utf8').replace('"level": "error"', '"level": "fatal"');
    const webhook = delivery(tampered, { 'Sentry-Hook-Signature': hexHmac(alert) });
    expect(sentry.authenticate(webhook, context)).toEqual({
      ok: false,
      reason: 'Sentry-Hook-Signature does not match the body',
    });
  });

  it('refuses a signature made with another secret, without leaking either value', () => {
    const outcome = sentry.authenticate(delivery(alert, {}, 'another secret'), context);
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
    expect(JSON.stringify(outcome)).not.toContain(hexHmac(alert));
  });

  it('refuses a missing or malformed signature', () => {
    expect(
      sentry.authenticate(webhookOf({ body: alert, headers: { 'Sentry-Hook-Resource': 'event_alert' } }), context),
    ).toEqual({
      ok: false,
      reason: 'missing Sentry-Hook-Signature header',
    });
    expect(
      sentry.authenticate(delivery(alert, { 'Sentry-Hook-Signature': `sha256=${hexHmac(alert)}` }), context),
    ).toEqual({
      ok: false,
      reason: 'malformed Sentry-Hook-Signature header',
    });
  });

  it('fails closed when the route has an empty secret', () => {
    expect(sentry.authenticate(delivery(alert, {}, ''), { secret: '', toleranceSeconds: 300 }).ok).toBe(false);
  });
});

describe('sentry.ping', () => {
  it('acknowledges installation webhooks', () => {
    const webhook = delivery(fixtureBytes('sentry/installation-created.json'), {
      'Sentry-Hook-Resource': 'installation',
    });
    expect(sentry.ping(sentry.parse(webhook), webhook)).toBe('sentry installation created');
  });

  it('lets alerts and issues through', () => {
    for (const [file, resource] of [
      ['sentry/event_alert.json', 'event_alert'],
      ['sentry/metric_alert-critical.json', 'metric_alert'],
      ['sentry/issue-created.json', 'issue'],
    ] as const) {
      const webhook = delivery(fixtureBytes(file), { 'Sentry-Hook-Resource': resource });
      expect(sentry.ping(sentry.parse(webhook), webhook)).toBeUndefined();
    }
  });
});

describe('sentry.dedupe', () => {
  const alert = fixtureBytes('sentry/event_alert.json');

  it('keys on Request-ID, and on the signed body, which a retry built anew (fresh Request-ID) repeats', () => {
    const first = delivery(alert, { 'Request-ID': 'a1b2c3d4e5f60718293a4b5c6d7e8f90' });
    const retry = delivery(alert, { 'Request-ID': '0f9e8d7c6b5a49382716050403020100' });
    const firstKey = sentry.dedupe(sentry.parse(first), first);
    expect(firstKey).toEqual({
      key: 'sentry:request:a1b2c3d4e5f60718293a4b5c6d7e8f90',
      windowSeconds: 24 * 3600,
      replayKey: expect.stringMatching(/^sentry:body:[0-9a-f]{64}$/),
    });
    expect(sentry.dedupe(sentry.parse(retry), retry).replayKey).toBe(firstKey.replayKey);
  });

  it('gives another notification other keys', () => {
    const one = delivery(alert);
    const other = delivery(fixtureBytes('sentry/metric_alert-critical.json'));
    const [a, b] = [sentry.dedupe(undefined, one), sentry.dedupe(undefined, other)];
    expect(a.key).not.toBe(b.key);
    expect(a.replayKey).not.toBe(b.replayKey);
  });

  it('falls back to the body hash without a Request-ID', () => {
    const webhook = webhookOf({ body: alert });
    expect(sentry.dedupe(undefined, webhook)).toEqual({
      key: expect.stringMatching(/^sentry:body:[0-9a-f]{64}$/),
      windowSeconds: SENTRY.dedupeWindowSeconds,
    });
  });
});

describe('sentry.defaultTemplate', () => {
  it('summarises an issue alert with its level and rule', () => {
    expect(renderDefault(sentry, fixtureJson('sentry/event_alert.json'))).toBe(
      '[ERROR] TimeoutError: SMS provider did not answer within 10000 ms (Relay errors)',
    );
  });

  it('summarises a metric alert with the first line of its description', () => {
    expect(renderDefault(sentry, fixtureJson('sentry/metric_alert-critical.json'))).toBe(
      '[CRITICAL] Too many relay errors: 112 events in the last 10 minutes',
    );
    const resolved = { ...fixtureJson('sentry/metric_alert-critical.json'), action: 'resolved' };
    expect(renderDefault(sentry, resolved)).toMatch(/^\[RESOLVED\] Too many relay errors: /);
  });

  it('summarises an issue webhook', () => {
    expect(renderDefault(sentry, fixtureJson('sentry/issue-created.json'))).toBe(
      "[Sentry] SMS-RELAY-9 created: TypeError: Cannot read properties of undefined (reading 'phone')",
    );
  });

  it('names any other resource', () => {
    expect(
      renderDefault(sentry, { action: 'created', data: { comment: 'looking' } }, { 'sentry-hook-resource': 'comment' }),
    ).toBe('Sentry comment created');
  });

  it('stays one line of GSM characters', () => {
    for (const file of ['sentry/event_alert.json', 'sentry/metric_alert-critical.json', 'sentry/issue-created.json']) {
      expect(renderDefault(sentry, fixtureJson(file))).toMatch(GSM_PRINTABLE);
    }
  });
});
