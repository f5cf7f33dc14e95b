import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PAGERDUTY, pagerduty } from '../../../../functions/core/sources/pagerduty';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = 'Zq8nP0r3kLx5Vt2Wb7Hc9Jd4Fg6Sm1Ay';
const OLD_SECRET = 'Ee2Rr4Tt6Yy8Uu0Ii1Oo3Pp5Aa7Ss9Dd';
const context: AuthContext = { secret: SECRET, toleranceSeconds: 300 };

const v1 = (body: Uint8Array | string, secret = SECRET): string =>
  `v1=${createHmac('sha256', secret).update(body).digest('hex')}`;

const delivery = (body: Uint8Array | string, signature = v1(body), headers: Record<string, string> = {}) =>
  webhookOf({
    body,
    headers: {
      'Content-Type': 'application/json',
      'X-Webhook-Id': '6f1cd0a9-7a4b-4b43-9d87-3a0c2c6ed8f1',
      'X-PagerDuty-Signature': signature,
      ...headers,
    },
  });

describe('pagerduty.authenticate', () => {
  const triggered = fixtureBytes('pagerduty/incident.triggered.json');

  it('accepts v1= HMAC-SHA256 hex of the body', () => {
    expect(pagerduty.authenticate(delivery(triggered), context)).toEqual({ ok: true });
  });

  it('accepts any one of several signatures while a secret is rotated, in either order', () => {
    expect(
      pagerduty.authenticate(delivery(triggered, `${v1(triggered, OLD_SECRET)},${v1(triggered)}`), context),
    ).toEqual({ ok: true });
    expect(
      pagerduty.authenticate(delivery(triggered, `${v1(triggered)}, ${v1(triggered, OLD_SECRET)}`), context),
    ).toEqual({ ok: true });
  });

  it('refuses when no signature matches, without leaking values', () => {
    const outcome = pagerduty.authenticate(
      delivery(triggered, `${v1(triggered, OLD_SECRET)},${v1(triggered, 'third')}`),
      context,
    );
    expect(outcome).toEqual({ ok: false, reason: 'X-PagerDuty-Signature does not match the body' });
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
  });

  it('refuses a body changed after signing', () => {
    const tampered = Buffer.from(triggered).toString('utf8').replace('"urgency": "high"', '"urgency": "low"');
    expect(pagerduty.authenticate(delivery(tampered, v1(triggered)), context).ok).toBe(false);
  });

  it.each([
    ['no version prefix', createHmac('sha256', SECRET).update('x').digest('hex')],
    ['another version only', `v0=${createHmac('sha256', SECRET).update('x').digest('hex')}`],
    ['a truncated digest', v1('x').slice(0, -1)],
    ['empty entries', ', ,'],
  ])('refuses a malformed header: %s', (_case, value) => {
    expect(pagerduty.authenticate(delivery(triggered, value), context)).toEqual({
      ok: false,
      reason: 'malformed X-PagerDuty-Signature header',
    });
  });

  it('refuses a missing signature and an empty secret', () => {
    expect(pagerduty.authenticate(webhookOf({ body: triggered }), context)).toEqual({
      ok: false,
      reason: 'missing X-PagerDuty-Signature header',
    });
    expect(
      pagerduty.authenticate(delivery(triggered, v1(triggered, '')), { secret: '', toleranceSeconds: 300 }).ok,
    ).toBe(false);
  });
});

describe('pagerduty.ping', () => {
  it('acknowledges pagey.ping, the "Send Test Event" button', () => {
    const webhook = delivery(fixtureBytes('pagerduty/pagey.ping.json'));
    expect(pagerduty.ping(pagerduty.parse(webhook), webhook)).toBe('pagerduty ping (pagey.ping)');
  });

  it('lets incident events through', () => {
    const webhook = delivery(fixtureBytes('pagerduty/incident.triggered.json'));
    expect(pagerduty.ping(pagerduty.parse(webhook), webhook)).toBeUndefined();
  });
});

describe('pagerduty.dedupe', () => {
  it('keys on the signed event.id, which every delivery attempt repeats', () => {
    const webhook = delivery(fixtureBytes('pagerduty/incident.triggered.json'));
    const retry = delivery(fixtureBytes('pagerduty/incident.triggered.json'), undefined, { 'X-Webhook-Id': 'another' });
    expect(pagerduty.dedupe(pagerduty.parse(webhook), webhook)).toEqual({
      key: 'pagerduty:event:01DEN7KZ2FQ9S4TDJXE4YVE2ZJ',
      windowSeconds: 24 * 3600,
    });
    expect(pagerduty.dedupe(pagerduty.parse(retry), retry).key).toBe('pagerduty:event:01DEN7KZ2FQ9S4TDJXE4YVE2ZJ');
  });

  it('gives each event of an incident its own key', () => {
    const resolved = delivery(fixtureBytes('pagerduty/incident.resolved.json'));
    expect(pagerduty.dedupe(pagerduty.parse(resolved), resolved).key).toBe(
      'pagerduty:event:01DEN7N3H6X0Q2QKQ8B1P4R5TA',
    );
  });

  it('falls back to X-Webhook-Id, then to the body hash', () => {
    expect(pagerduty.dedupe({}, delivery('{}')).key).toBe('pagerduty:webhook:6f1cd0a9-7a4b-4b43-9d87-3a0c2c6ed8f1');
    expect(pagerduty.dedupe({}, webhookOf({ body: '{}' }))).toEqual({
      key: expect.stringMatching(/^pagerduty:body:[0-9a-f]{64}$/),
      windowSeconds: PAGERDUTY.dedupeWindowSeconds,
    });
  });
});

describe('pagerduty.defaultTemplate', () => {
  it('summarises incident events with title, service and urgency', () => {
    expect(renderDefault(pagerduty, fixtureJson('pagerduty/incident.triggered.json'))).toBe(
      '[TRIGGERED] #731 SMS credit below reserve (SMS relay, high urgency)',
    );
    expect(renderDefault(pagerduty, fixtureJson('pagerduty/incident.resolved.json'))).toBe(
      '[RESOLVED] #731 SMS credit below reserve (SMS relay, high urgency)',
    );
    const acknowledged = fixtureJson('pagerduty/incident.triggered.json') as { event: Record<string, unknown> };
    const priority = { event: { ...acknowledged.event, event_type: 'incident.priority_updated' } };
    expect(renderDefault(pagerduty, priority)).toMatch(/^\[PRIORITY UPDATED\] #731 /);
  });

  it('quotes notes and names other events', () => {
    const note = {
      event: {
        event_type: 'incident.annotated',
        data: {
          type: 'incident_note',
          incident: { summary: 'SMS credit below reserve' },
          content: 'Topped up 50,000 TZS',
        },
      },
    };
    expect(renderDefault(pagerduty, note)).toBe('[NOTE] SMS credit below reserve: Topped up 50,000 TZS');
    const service = { event: { event_type: 'service.updated', data: { type: 'service', summary: 'SMS relay' } } };
    expect(renderDefault(pagerduty, service)).toBe('PagerDuty service.updated: SMS relay');
  });

  it('stays one line of GSM characters', () => {
    expect(renderDefault(pagerduty, fixtureJson('pagerduty/incident.triggered.json'))).toMatch(GSM_PRINTABLE);
  });
});
