import { describe, expect, it } from 'vitest';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { UPTIME_KUMA, uptimeKuma } from '../../../../functions/core/sources/uptime-kuma';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = 'kuma-8b3f61d2c4e7a905';
const context: AuthContext = { secret: SECRET, toleranceSeconds: 300 };

const delivery = (
  body: Uint8Array | string,
  headers: Record<string, string> = { Authorization: `Bearer ${SECRET}` },
  query: Record<string, string> = {},
) => webhookOf({ body, headers: { 'Content-Type': 'application/json', ...headers }, query });

describe('uptime-kuma.authenticate', () => {
  const down = fixtureBytes('uptime-kuma/down.json');

  it('accepts the secret as a Bearer token (Additional Headers) or as ?token= in the URL', () => {
    expect(uptimeKuma.authenticate(delivery(down), context)).toEqual({ ok: true });
    expect(uptimeKuma.authenticate(delivery(down, {}, { token: SECRET }), context)).toEqual({ ok: true });
  });

  it('refuses a wrong or missing credential without echoing it', () => {
    const wrong = uptimeKuma.authenticate(delivery(down, { Authorization: 'Bearer guessed' }), context);
    expect(wrong).toEqual({ ok: false, reason: 'bearer token does not match' });
    expect(uptimeKuma.authenticate(delivery(down, {}, { token: 'guessed' }), context).ok).toBe(false);
    expect(uptimeKuma.authenticate(delivery(down, {}), context)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('Bearer'),
    });
    expect(JSON.stringify(wrong)).not.toContain(SECRET);
  });

  it('fails closed when the route has an empty secret', () => {
    expect(
      uptimeKuma.authenticate(delivery(down, { Authorization: 'Bearer ' }, { token: '' }), {
        secret: '',
        toleranceSeconds: 300,
      }).ok,
    ).toBe(false);
  });
});

describe('uptime-kuma.ping', () => {
  it('acknowledges the Test button: no heartbeat, no monitor, "<name> Testing"', () => {
    const webhook = delivery(fixtureBytes('uptime-kuma/test.json'));
    expect(uptimeKuma.ping(uptimeKuma.parse(webhook), webhook)).toBe('uptime-kuma test notification');
  });

  it('sends certificate expiry warnings, which also come without heartbeat or monitor', () => {
    const webhook = delivery(fixtureBytes('uptime-kuma/certificate-expiry.json'));
    expect(uptimeKuma.ping(uptimeKuma.parse(webhook), webhook)).toBeUndefined();
  });

  it('lets heartbeats through', () => {
    const webhook = delivery(fixtureBytes('uptime-kuma/down.json'));
    expect(uptimeKuma.ping(uptimeKuma.parse(webhook), webhook)).toBeUndefined();
  });

  it('refuses a body that is not JSON (the form-data body type is not supported)', () => {
    expect(() =>
      uptimeKuma.parse(delivery('data=%7B%7D', { 'Content-Type': 'application/x-www-form-urlencoded' })),
    ).toThrow(BadPayloadError);
  });
});

describe('uptime-kuma.dedupe', () => {
  it('keys on monitor, heartbeat time and status', () => {
    const webhook = delivery(fixtureBytes('uptime-kuma/down.json'));
    // The time has a space, so it is hashed (idKeyPart) to keep the key printable.
    expect(uptimeKuma.dedupe(uptimeKuma.parse(webhook), webhook)).toEqual({
      key: expect.stringMatching(/^uptime-kuma:heartbeat:7:sha256-[0-9a-f]{64}:0$/),
      windowSeconds: 24 * 3600,
    });
    const again = delivery(fixtureBytes('uptime-kuma/down.json'));
    expect(uptimeKuma.dedupe(uptimeKuma.parse(again), again).key).toBe(
      uptimeKuma.dedupe(uptimeKuma.parse(webhook), webhook).key,
    );
  });

  it('gives the recovery, and a later outage of the same monitor, other keys', () => {
    const down = fixtureJson('uptime-kuma/down.json') as { heartbeat: Record<string, unknown> };
    const key = (body: unknown) => uptimeKuma.dedupe(body, delivery(JSON.stringify(body))).key;
    const up = fixtureJson('uptime-kuma/up.json');
    const later = { ...down, heartbeat: { ...down.heartbeat, time: '2025-11-21 14:02:40.118' } };
    expect(new Set([key(down), key(up), key(later)]).size).toBe(3);
  });

  it('keys messages without a heartbeat on the body', () => {
    const webhook = delivery(fixtureBytes('uptime-kuma/certificate-expiry.json'));
    expect(uptimeKuma.dedupe(uptimeKuma.parse(webhook), webhook)).toEqual({
      key: expect.stringMatching(/^uptime-kuma:body:[0-9a-f]{64}$/),
      windowSeconds: UPTIME_KUMA.dedupeWindowSeconds,
    });
  });
});

describe('uptime-kuma.defaultTemplate', () => {
  it('says [DOWN] and [UP] with the monitor and the check message', () => {
    expect(renderDefault(uptimeKuma, fixtureJson('uptime-kuma/down.json'))).toBe(
      '[DOWN] M-Pesa callback: Request failed with status code 502',
    );
    expect(renderDefault(uptimeKuma, fixtureJson('uptime-kuma/up.json'))).toBe('[UP] M-Pesa callback: 200 - OK');
  });

  it('sends a message without heartbeat as Uptime Kuma wrote it', () => {
    expect(renderDefault(uptimeKuma, fixtureJson('uptime-kuma/certificate-expiry.json'))).toBe(
      '[M-Pesa callback][https://pay.example.co.tz/mpesa/callback] server certificate pay.example.co.tz will expire in 7 days',
    );
  });

  it('stays one line of GSM characters (the emoji of msg are not used)', () => {
    expect(renderDefault(uptimeKuma, fixtureJson('uptime-kuma/down.json'))).toMatch(GSM_PRINTABLE);
    expect(renderDefault(uptimeKuma, fixtureJson('uptime-kuma/up.json'))).toMatch(GSM_PRINTABLE);
  });
});
