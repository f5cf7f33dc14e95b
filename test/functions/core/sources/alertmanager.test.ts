import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { alertmanager } from '../../../../functions/core/sources/alertmanager';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import { webhookOf } from './helpers';
import { GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = 'am-test-token-4f9c2e1b7a';
const CONTEXT = { secret: SECRET, toleranceSeconds: 300 } as const;
const FIXTURES = ['firing-single', 'firing-grouped', 'resolved'] as const;

function fixture(name: (typeof FIXTURES)[number]): string {
  return readFileSync(new URL(`../../../../examples/alertmanager/${name}.json`, import.meta.url), 'utf8');
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

type Alert = { status: string; fingerprint?: string; startsAt?: string; labels: Record<string, string> };
type Body = { status: string; alerts: Alert[] } & Record<string, unknown>;

/** Parses a body exactly as the relay would, from bytes. */
function parsed(text: string): Body {
  return alertmanager.parse(webhookOf({ body: text, headers: { 'Content-Type': 'application/json' } })) as Body;
}

function keyOf(body: Body): string {
  return alertmanager.dedupe(body, webhookOf({ body: JSON.stringify(body) })).key;
}

describe('alertmanager.authenticate', () => {
  const body = fixture('firing-single');

  it('accepts the Bearer credential from http_config.authorization', () => {
    const outcome = alertmanager.authenticate(
      webhookOf({ body, headers: { Authorization: `Bearer ${SECRET}` } }),
      CONTEXT,
    );
    expect(outcome).toEqual({ ok: true });
  });

  it('accepts basic_auth whose password is the secret, whatever the username', () => {
    const outcome = alertmanager.authenticate(
      webhookOf({ body, headers: { Authorization: basic('alertmanager', SECRET) } }),
      CONTEXT,
    );
    expect(outcome).toEqual({ ok: true });
  });

  it('refuses a wrong Bearer token without echoing either token', () => {
    const outcome = alertmanager.authenticate(
      webhookOf({ body, headers: { Authorization: 'Bearer not-the-token' } }),
      CONTEXT,
    );
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
    expect(JSON.stringify(outcome)).not.toContain('not-the-token');
  });

  it('refuses basic auth with the wrong password', () => {
    const outcome = alertmanager.authenticate(
      webhookOf({ body, headers: { Authorization: basic('alertmanager', `${SECRET}x`) } }),
      CONTEXT,
    );
    expect(outcome.ok).toBe(false);
  });

  it('refuses a request without an Authorization header', () => {
    const outcome = alertmanager.authenticate(webhookOf({ body }), CONTEXT);
    expect(outcome).toEqual({ ok: false, reason: expect.stringContaining('Authorization') });
  });

  it('refuses everything when the route secret is empty, even a bare "Bearer"', () => {
    const outcome = alertmanager.authenticate(webhookOf({ body, headers: { Authorization: 'Bearer ' } }), {
      ...CONTEXT,
      secret: '',
    });
    expect(outcome.ok).toBe(false);
  });
});

describe('alertmanager.parse', () => {
  it.each(FIXTURES)('parses the %s fixture', (name) => {
    const body = parsed(fixture(name));
    expect(body['version']).toBe('4');
    expect(body.alerts.length).toBeGreaterThan(0);
  });

  it('keeps the on-call number exactly as written, leading zero included', () => {
    const body = parsed(fixture('firing-single')) as Body & { commonAnnotations: Record<string, string> };
    expect(body.commonAnnotations['oncall_phone']).toBe('0712345678');
  });

  it('refuses a body that is not JSON', () => {
    expect(() => parsed('{"status": "firing", "alerts": [')).toThrow(BadPayloadError);
  });

  it('refuses JSON without an alerts array, saying what is missing', () => {
    expect(() => parsed('{"status": "firing"}')).toThrow(/"alerts"/);
    expect(() => parsed('{"status": "firing", "alerts": {}}')).toThrow(BadPayloadError);
    expect(() => parsed('[{"status": "firing"}]')).toThrow(BadPayloadError);
  });

  it('refuses form-encoded bodies', () => {
    const webhook = webhookOf({
      body: 'status=firing',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(() => alertmanager.parse(webhook)).toThrow(BadPayloadError);
  });
});

describe('alertmanager.dedupe', () => {
  it('gives a retry of one notification the same key, however it is serialised', () => {
    const text = fixture('firing-grouped');
    const first = alertmanager.dedupe(parsed(text), webhookOf({ body: text }));
    const retry = parsed(JSON.stringify(JSON.parse(text)));
    expect(keyOf(retry)).toBe(first.key);
    expect(first.key).toMatch(/^alertmanager:[0-9a-f]{64}$/);
    expect(first.windowSeconds).toBe(300);
  });

  it('changes the key when the group resolves', () => {
    expect(keyOf(parsed(fixture('resolved')))).not.toBe(keyOf(parsed(fixture('firing-single'))));
  });

  it('changes the key when one alert of a still-firing group resolves', () => {
    const before = parsed(fixture('firing-grouped'));
    const after = parsed(fixture('firing-grouped'));
    after.alerts[2]!.status = 'resolved';
    expect(after.status).toBe('firing');
    expect(keyOf(after)).not.toBe(keyOf(before));
  });

  it('changes the key when an alert resolved and fired again (a new startsAt), inside the window', () => {
    const first = parsed(fixture('firing-single'));
    const again = parsed(fixture('firing-single'));
    again.alerts[0]!.startsAt = '2025-11-21T06:15:02.000Z';
    expect(keyOf(again)).not.toBe(keyOf(first));
  });

  it('changes the key when the group holds different alerts', () => {
    const before = parsed(fixture('firing-grouped'));
    const after = parsed(fixture('firing-grouped'));
    after.alerts[1]!.fingerprint = '1111111111111111';
    expect(keyOf(after)).not.toBe(keyOf(before));
    after.alerts.pop();
    expect(keyOf(after)).not.toBe(keyOf(before));
  });

  it('ignores the order of the alerts', () => {
    const before = parsed(fixture('firing-grouped'));
    const reordered = parsed(fixture('firing-grouped'));
    reordered.alerts.reverse();
    expect(keyOf(reordered)).toBe(keyOf(before));
  });

  it('tells alerts without fingerprints apart by their labels', () => {
    const body = (instance: string): Body =>
      parsed(
        JSON.stringify({ status: 'firing', alerts: [{ status: 'firing', labels: { alertname: 'Down', instance } }] }),
      );
    expect(keyOf(body('a:9100'))).not.toBe(keyOf(body('b:9100')));
    expect(keyOf(body('a:9100'))).toBe(keyOf(body('a:9100')));
  });
});

describe('alertmanager pack', () => {
  it.each(FIXTURES)('treats %s as an ordinary notification, not a ping', (name) => {
    const text = fixture(name);
    expect(alertmanager.ping(parsed(text), webhookOf({ body: text }))).toBeUndefined();
  });

  it.each([
    ['firing-single', '[FIRING] DiskAlmostFull: Disk /var/lib/postgresql on db-01 is 94% full'],
    [
      'firing-grouped',
      '[FIRING x3] InstanceDown: api-01.internal:8080 of job checkout-api has been down for more than 2 minutes',
    ],
    ['resolved', '[RESOLVED] DiskAlmostFull: Disk /var/lib/postgresql on db-01 is 94% full'],
  ] as const)('renders %s as one GSM line with the default template', (name, expected) => {
    const text = renderDefault(alertmanager, parsed(fixture(name)));
    expect(text).toBe(expected);
    expect(text).toMatch(GSM_PRINTABLE);
  });

  it('leaves the colon out when no alert has a summary or description', () => {
    const body = parsed('{"status": "firing", "alerts": [{"status": "firing", "labels": {"alertname": "Watchdog"}}]}');
    expect(renderDefault(alertmanager, body)).toBe('[FIRING] Watchdog');
  });

  it('has a name, a description and a default template', () => {
    expect(alertmanager.name).toBe('alertmanager');
    expect(alertmanager.description.trim()).not.toBe('');
    expect(alertmanager.defaultTemplate.trim()).not.toBe('');
  });
});
