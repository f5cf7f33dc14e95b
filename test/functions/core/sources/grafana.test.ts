import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import { grafana } from '../../../../functions/core/sources/grafana';
import { webhookOf } from './helpers';
import { GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = 'grafana-hmac-test-secret-7d21';
const TOLERANCE = 300;
const CONTEXT = { secret: SECRET, toleranceSeconds: TOLERANCE } as const;
const RECEIVED_AT = new Date('2025-11-21T09:30:00Z');
const NOW = Math.floor(RECEIVED_AT.getTime() / 1000);
const FIXTURES = ['firing', 'resolved', 'test-notification'] as const;

function fixture(name: (typeof FIXTURES)[number]): string {
  return readFileSync(new URL(`../../../../examples/grafana/${name}.json`, import.meta.url), 'utf8');
}

/** Grafana's signer: hex HMAC-SHA256 over the body, or over `<timestamp>:<body>`. */
function sign(body: string, secret = SECRET, timestamp?: number): string {
  const mac = createHmac('sha256', secret);
  if (timestamp !== undefined) mac.update(`${timestamp}:`);
  return mac.update(body).digest('hex');
}

function tamper(body: string): string {
  // One byte changed: the alert's value, not the JSON structure.
  return body.replace('"B": 97.21', '"B": 97.22');
}

type Body = { status: string; groupKey: string; alerts: { status: string }[] } & Record<string, unknown>;

function parsed(text: string): Body {
  return grafana.parse(webhookOf({ body: text })) as Body;
}

describe('grafana.authenticate with an HMAC signature and no timestamp', () => {
  const body = fixture('firing');

  it('accepts the hex HMAC of the body in X-Grafana-Alerting-Signature', () => {
    const webhook = webhookOf({
      body,
      headers: { 'X-Grafana-Alerting-Signature': sign(body) },
      receivedAt: RECEIVED_AT,
    });
    expect(grafana.authenticate(webhook, CONTEXT)).toEqual({ ok: true });
  });

  it('accepts upper-case hex', () => {
    const webhook = webhookOf({ body, headers: { 'X-Grafana-Alerting-Signature': sign(body).toUpperCase() } });
    expect(grafana.authenticate(webhook, CONTEXT)).toEqual({ ok: true });
  });

  it("accepts the signer's fallback header name, X-Grafana-Alert-Signature", () => {
    const webhook = webhookOf({ body, headers: { 'X-Grafana-Alert-Signature': sign(body) } });
    expect(grafana.authenticate(webhook, CONTEXT)).toEqual({ ok: true });
  });

  it('refuses a body with one byte changed', () => {
    const tampered = tamper(body);
    expect(tampered).not.toBe(body);
    const webhook = webhookOf({ body: tampered, headers: { 'X-Grafana-Alerting-Signature': sign(body) } });
    expect(grafana.authenticate(webhook, CONTEXT).ok).toBe(false);
  });

  it('refuses a signature made with another secret, without revealing the expected one', () => {
    const webhook = webhookOf({ body, headers: { 'X-Grafana-Alerting-Signature': sign(body, 'another-secret') } });
    const outcome = grafana.authenticate(webhook, CONTEXT);
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
    expect(JSON.stringify(outcome)).not.toContain(sign(body));
  });

  it('refuses a signature that is not 64 hex characters', () => {
    const webhook = webhookOf({ body, headers: { 'X-Grafana-Alerting-Signature': `sha256=${sign(body)}` } });
    expect(grafana.authenticate(webhook, CONTEXT)).toEqual({ ok: false, reason: expect.stringContaining('malformed') });
  });

  it('lets a present signature decide: a bad one is refused even beside a valid Bearer token', () => {
    const webhook = webhookOf({
      body,
      headers: { 'X-Grafana-Alerting-Signature': sign(body, 'forged'), Authorization: `Bearer ${SECRET}` },
    });
    expect(grafana.authenticate(webhook, CONTEXT).ok).toBe(false);
  });
});

describe('grafana.authenticate with an HMAC signature and a timestamp header', () => {
  const body = fixture('firing');
  const signedAt = (timestamp: number, signature = sign(body, SECRET, timestamp)) =>
    webhookOf({
      body,
      headers: { 'X-Grafana-Alerting-Signature': signature, 'X-Grafana-Alerting-Timestamp': String(timestamp) },
      receivedAt: RECEIVED_AT,
    });

  it('accepts the HMAC of "<timestamp>:<body>"', () => {
    expect(grafana.authenticate(signedAt(NOW - 2), CONTEXT)).toEqual({ ok: true });
  });

  it('accepts a timestamp exactly at the edge of the tolerance, either way', () => {
    expect(grafana.authenticate(signedAt(NOW - TOLERANCE), CONTEXT)).toEqual({ ok: true });
    expect(grafana.authenticate(signedAt(NOW + TOLERANCE), CONTEXT)).toEqual({ ok: true });
  });

  it('refuses a correctly signed but expired timestamp (a replay)', () => {
    expect(grafana.authenticate(signedAt(NOW - TOLERANCE - 1), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('older'),
    });
  });

  it('refuses a correctly signed timestamp from the future', () => {
    expect(grafana.authenticate(signedAt(NOW + TOLERANCE + 1), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('ahead'),
    });
  });

  it('refuses a timestamp changed after signing', () => {
    expect(grafana.authenticate(signedAt(NOW - 1, sign(body, SECRET, NOW - 2)), CONTEXT).ok).toBe(false);
  });

  it('refuses a signature over the body alone once a timestamp header is present', () => {
    expect(grafana.authenticate(signedAt(NOW, sign(body)), CONTEXT).ok).toBe(false);
  });

  it('refuses a body with one byte changed', () => {
    const webhook = webhookOf({
      body: tamper(body),
      headers: { 'X-Grafana-Alerting-Signature': sign(body, SECRET, NOW), 'X-Grafana-Alerting-Timestamp': String(NOW) },
      receivedAt: RECEIVED_AT,
    });
    expect(grafana.authenticate(webhook, CONTEXT).ok).toBe(false);
  });

  it('refuses a timestamp that is not unix seconds', () => {
    const webhook = webhookOf({
      body,
      headers: {
        'X-Grafana-Alerting-Signature': sign(body, SECRET, NOW),
        'X-Grafana-Alerting-Timestamp': RECEIVED_AT.toISOString(),
      },
      receivedAt: RECEIVED_AT,
    });
    expect(grafana.authenticate(webhook, CONTEXT).ok).toBe(false);
  });

  it('also reads the X-Grafana-Alerting-Signature-Timestamp name', () => {
    const webhook = webhookOf({
      body,
      headers: {
        'X-Grafana-Alerting-Signature': sign(body, SECRET, NOW),
        'X-Grafana-Alerting-Signature-Timestamp': String(NOW),
      },
      receivedAt: RECEIVED_AT,
    });
    expect(grafana.authenticate(webhook, CONTEXT)).toEqual({ ok: true });
  });
});

describe('grafana.authenticate with a credential', () => {
  const body = fixture('firing');

  it("accepts the contact point's Authorization header (Bearer scheme)", () => {
    expect(grafana.authenticate(webhookOf({ body, headers: { Authorization: `Bearer ${SECRET}` } }), CONTEXT)).toEqual({
      ok: true,
    });
  });

  it("accepts the contact point's basic auth password", () => {
    const credential = Buffer.from(`grafana:${SECRET}`).toString('base64');
    expect(
      grafana.authenticate(webhookOf({ body, headers: { Authorization: `Basic ${credential}` } }), CONTEXT),
    ).toEqual({ ok: true });
  });

  it('refuses a wrong token', () => {
    expect(grafana.authenticate(webhookOf({ body, headers: { Authorization: 'Bearer wrong' } }), CONTEXT).ok).toBe(
      false,
    );
  });

  it('refuses a request with neither a signature nor a credential', () => {
    expect(grafana.authenticate(webhookOf({ body }), CONTEXT).ok).toBe(false);
  });

  it('refuses everything when the route secret is empty', () => {
    const webhook = webhookOf({ body, headers: { 'X-Grafana-Alerting-Signature': sign(body, '') } });
    expect(grafana.authenticate(webhook, { ...CONTEXT, secret: '' }).ok).toBe(false);
  });
});

describe('grafana.parse', () => {
  it.each(FIXTURES)('parses the %s fixture', (name) => {
    const body = parsed(fixture(name));
    expect(body['version']).toBe('1');
    expect(body.alerts).toHaveLength(1);
  });

  it('refuses a body that is not JSON', () => {
    expect(() => parsed('**Firing**')).toThrow(BadPayloadError);
  });

  it('refuses JSON without an alerts array', () => {
    expect(() => parsed('{"title": "[FIRING:1] High CPU usage"}')).toThrow(/"alerts"/);
  });
});

describe('grafana.dedupe', () => {
  const keyOf = (text: string) => grafana.dedupe(parsed(text), webhookOf({ body: text }));

  it('gives a retry the same key', () => {
    const first = keyOf(fixture('firing'));
    expect(keyOf(fixture('firing'))).toEqual(first);
    expect(first.key).toMatch(/^grafana:[0-9a-f]{64}$/);
    expect(first.windowSeconds).toBe(300);
  });

  it('changes the key when the alert resolves', () => {
    expect(keyOf(fixture('resolved')).key).not.toBe(keyOf(fixture('firing')).key);
  });

  it('changes the key when the alert resolved and fired again (a new startsAt), inside the window', () => {
    const again = fixture('firing').replace('"startsAt": "2025-11-21T08:03:10Z"', '"startsAt": "2025-11-21T08:05:40Z"');
    expect(again).not.toBe(fixture('firing'));
    expect(keyOf(again).key).not.toBe(keyOf(fixture('firing')).key);
  });

  it('gives each press of the Test button its own key, as Grafana gives each its own group key', () => {
    const first = parsed(fixture('test-notification'));
    const second = { ...first, groupKey: first.groupKey.replace(/\d+$/, (seconds) => String(Number(seconds) + 30)) };
    expect(grafana.dedupe(second, webhookOf()).key).not.toBe(grafana.dedupe(first, webhookOf()).key);
  });
});

describe('grafana pack', () => {
  it("sends the Test button's notification instead of treating it as a ping", () => {
    const text = fixture('test-notification');
    const body = parsed(text) as Body & { commonLabels: Record<string, string> };
    expect(body.commonLabels['alertname']).toBe('TestAlert');
    expect(grafana.ping(body, webhookOf({ body: text }))).toBeUndefined();
  });

  it.each([
    ['firing', '[FIRING] High CPU usage: CPU above 95% on web-01'],
    ['resolved', '[RESOLVED] High CPU usage: CPU above 95% on web-01'],
    ['test-notification', '[FIRING] TestAlert: Notification test'],
  ] as const)('renders %s as one GSM line with the default template, not the multi-line message', (name, expected) => {
    const text = renderDefault(grafana, parsed(fixture(name)));
    expect(text).toBe(expected);
    expect(text).toMatch(GSM_PRINTABLE);
  });

  it('falls back on the title when the alerts carry no alertname', () => {
    const body = parsed(
      '{"status": "firing", "title": "[FIRING:1] Disk", "alerts": [{"status": "firing", "labels": {}}]}',
    );
    expect(renderDefault(grafana, body)).toBe('[FIRING] [FIRING:1] Disk');
  });

  it('has a name, a description and a default template', () => {
    expect(grafana.name).toBe('grafana');
    expect(grafana.description.trim()).not.toBe('');
    expect(grafana.defaultTemplate.trim()).not.toBe('');
  });
});
