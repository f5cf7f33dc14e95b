import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import { standardWebhooks } from '../../../../functions/core/sources/standard-webhooks';
import { webhookOf } from './helpers';
import { GSM_PRINTABLE, renderDefault } from './pack-helpers';

const KEY = Buffer.from('sms-relay standard webhooks test key 01', 'utf8');
const SECRET = `whsec_${KEY.toString('base64')}`;
const OLD_KEY = Buffer.from('sms-relay standard webhooks old key 0001', 'utf8');
const TOLERANCE = 300;
const CONTEXT = { secret: SECRET, toleranceSeconds: TOLERANCE } as const;
const RECEIVED_AT = new Date('2025-11-21T09:14:05Z');
const NOW = Math.floor(RECEIVED_AT.getTime() / 1000);
const MSG_ID = 'msg_2pKx7MvB3cD9eF0gH1iJ2kL3mN4';

const BODY = readFileSync(new URL('../../../../examples/standard-webhooks/invoice-paid.json', import.meta.url), 'utf8');

/** The spec's scheme: `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`. */
function sign(
  body: string,
  { key = KEY, id = MSG_ID, timestamp = NOW }: { key?: Buffer; id?: string; timestamp?: number } = {},
): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

function delivery({
  body = BODY,
  id = MSG_ID,
  timestamp = NOW,
  signature = sign(body, { id, timestamp }),
}: {
  body?: string;
  id?: string;
  timestamp?: number;
  signature?: string;
} = {}) {
  return webhookOf({
    body,
    headers: { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature },
    receivedAt: RECEIVED_AT,
  });
}

describe('standardWebhooks.authenticate', () => {
  it('accepts a valid v1 signature', () => {
    expect(standardWebhooks.authenticate(delivery(), CONTEXT)).toEqual({ ok: true });
  });

  it('refuses a body with one byte changed', () => {
    const tampered = BODY.replace('"amount_paid": 4500', '"amount_paid": 4501');
    expect(tampered).not.toBe(BODY);
    expect(standardWebhooks.authenticate(delivery({ body: tampered, signature: sign(BODY) }), CONTEXT).ok).toBe(false);
  });

  it('refuses a signature made with another key, without revealing the secret or the expected signature', () => {
    const outcome = standardWebhooks.authenticate(delivery({ signature: sign(BODY, { key: OLD_KEY }) }), CONTEXT);
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
    expect(JSON.stringify(outcome)).not.toContain(KEY.toString('base64'));
    expect(JSON.stringify(outcome)).not.toContain(sign(BODY).slice(3));
  });

  it('refuses a webhook-id changed after signing', () => {
    const signature = sign(BODY, { id: MSG_ID });
    expect(standardWebhooks.authenticate(delivery({ id: 'msg_other', signature }), CONTEXT).ok).toBe(false);
  });

  it('refuses a webhook-timestamp changed after signing', () => {
    const signature = sign(BODY, { timestamp: NOW - 10 });
    expect(standardWebhooks.authenticate(delivery({ timestamp: NOW - 9, signature }), CONTEXT).ok).toBe(false);
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('refuses a request without %s', (name) => {
    const complete = delivery();
    const headers = Object.fromEntries(Object.entries(complete.headers).filter(([header]) => header !== name));
    const outcome = standardWebhooks.authenticate({ ...complete, headers }, CONTEXT);
    expect(outcome).toEqual({ ok: false, reason: expect.stringContaining(name) });
  });

  it('refuses a correctly signed but expired timestamp (a replay)', () => {
    expect(standardWebhooks.authenticate(delivery({ timestamp: NOW - TOLERANCE - 1 }), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('older'),
    });
  });

  it('refuses a correctly signed timestamp from the future', () => {
    expect(standardWebhooks.authenticate(delivery({ timestamp: NOW + TOLERANCE + 1 }), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('ahead'),
    });
  });

  it('accepts timestamps at the edge of the tolerance', () => {
    expect(standardWebhooks.authenticate(delivery({ timestamp: NOW - TOLERANCE }), CONTEXT)).toEqual({ ok: true });
    expect(standardWebhooks.authenticate(delivery({ timestamp: NOW + TOLERANCE }), CONTEXT)).toEqual({ ok: true });
  });

  it('accepts any matching signature in the list, as during a key rotation', () => {
    const signature = `${sign(BODY, { key: OLD_KEY })} v1a,${Buffer.alloc(64, 7).toString('base64')} ${sign(BODY)}`;
    expect(standardWebhooks.authenticate(delivery({ signature }), CONTEXT)).toEqual({ ok: true });
  });

  it('refuses a list in which no signature matches', () => {
    const signature = `${sign(BODY, { key: OLD_KEY })} ${sign(BODY, { key: Buffer.from('third key') })}`;
    expect(standardWebhooks.authenticate(delivery({ signature }), CONTEXT).ok).toBe(false);
  });

  it('does not take a v1a (asymmetric) or unversioned entry for a v1 one', () => {
    const expected = sign(BODY).slice(3);
    const outcome = standardWebhooks.authenticate(delivery({ signature: `v1a,${expected} ${expected}` }), CONTEXT);
    expect(outcome).toEqual({ ok: false, reason: expect.stringContaining('no v1') });
  });

  it('takes a secret without the whsec_ prefix as the base64 key itself', () => {
    expect(standardWebhooks.authenticate(delivery(), { ...CONTEXT, secret: KEY.toString('base64') })).toEqual({
      ok: true,
    });
  });

  it('refuses, with a clear reason, a secret that is not base64', () => {
    const secret = 'whsec_not base64!';
    const outcome = standardWebhooks.authenticate(delivery(), { ...CONTEXT, secret });
    expect(outcome).toEqual({ ok: false, reason: expect.stringContaining('base64') });
    expect(JSON.stringify(outcome)).not.toContain(secret);
  });

  it('refuses everything when the route secret is empty', () => {
    const signature = `v1,${createHmac('sha256', Buffer.alloc(0)).update(`${MSG_ID}.${NOW}.${BODY}`).digest('base64')}`;
    expect(standardWebhooks.authenticate(delivery({ signature }), { ...CONTEXT, secret: '' }).ok).toBe(false);
    expect(standardWebhooks.authenticate(delivery({ signature }), { ...CONTEXT, secret: 'whsec_' }).ok).toBe(false);
  });
});

describe('standardWebhooks.parse', () => {
  it('parses the invoice.paid fixture into the spec envelope', () => {
    const body = standardWebhooks.parse(delivery()) as {
      type: string;
      timestamp: string;
      data: { id: string; amount_paid: number };
    };
    expect(body.type).toBe('invoice.paid');
    expect(body.data.id).toBe('inv_2pKx7LqN4vR8sT1w');
    expect(body.data.amount_paid).toBe(4500);
  });

  it('refuses a body that is not JSON', () => {
    expect(() => standardWebhooks.parse(delivery({ body: '{"type": "invoice.paid",' }))).toThrow(BadPayloadError);
  });
});

describe('standardWebhooks.dedupe', () => {
  it('keys on webhook-id, which every retry keeps while its timestamp and signature change', () => {
    const first = delivery();
    const retry = delivery({ timestamp: NOW + 305 });
    expect(retry.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    const key = standardWebhooks.dedupe(standardWebhooks.parse(first), first);
    expect(key).toEqual({ key: `standard-webhooks:${MSG_ID}`, windowSeconds: 76 * 3600 });
    expect(standardWebhooks.dedupe(standardWebhooks.parse(retry), retry)).toEqual(key);
  });

  it('gives another event with the same body another key', () => {
    const other = delivery({ id: 'msg_2pKx7MvB3cD9eF0gH1iJ2kL3mN5' });
    expect(standardWebhooks.dedupe(undefined, other).key).not.toBe(standardWebhooks.dedupe(undefined, delivery()).key);
  });

  it('hashes an id too long or too strange to keep as is', () => {
    const key = standardWebhooks.dedupe(undefined, delivery({ id: 'x'.repeat(500) })).key;
    expect(key).toMatch(/^standard-webhooks:sha256-[0-9a-f]{64}$/);
  });
});

describe('standardWebhooks pack', () => {
  it('has no ping', () => {
    expect(standardWebhooks.ping(standardWebhooks.parse(delivery()), delivery())).toBeUndefined();
  });

  it('renders the event type, id and status with the default template', () => {
    const text = renderDefault(standardWebhooks, standardWebhooks.parse(delivery()));
    expect(text).toBe('invoice.paid inv_2pKx7LqN4vR8sT1w (paid)');
    expect(text).toMatch(GSM_PRINTABLE);
    expect(renderDefault(standardWebhooks, { type: 'user.deleted', timestamp: '2025-11-21T09:14:03Z', data: {} })).toBe(
      'user.deleted',
    );
  });

  it('has a name, a description and a default template', () => {
    expect(standardWebhooks.name).toBe('standard-webhooks');
    expect(standardWebhooks.description.trim()).not.toBe('');
    expect(standardWebhooks.defaultTemplate.trim()).not.toBe('');
  });
});

/**
 * Svix's own library (`svix` on npm, `Webhook#sign`): `v1,` + base64 HMAC-SHA256 of
 * `${msgId}.${seconds}.${payload}`, keyed with the base64 after `whsec_`, sent under
 * `svix-id` / `svix-timestamp` / `svix-signature`. Written out here from Svix's documentation
 * ("Verifying webhooks manually"), independently of the pack.
 */
function svixSign(secret: string, msgId: string, timestamp: Date, payload: string): string {
  const key = Buffer.from(secret.split('_')[1]!, 'base64');
  const seconds = Math.floor(timestamp.getTime() / 1000);
  return `v1,${createHmac('sha256', key).update(`${msgId}.${seconds}.${payload}`).digest('base64')}`;
}

describe('standardWebhooks with Svix header names', () => {
  // The example secret of Svix's documentation.
  const SVIX_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const SVIX_CONTEXT = { secret: SVIX_SECRET, toleranceSeconds: TOLERANCE } as const;
  const SVIX_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';

  function svixDelivery({
    body = BODY,
    id = SVIX_ID,
    signedAt = RECEIVED_AT,
    signature = svixSign(SVIX_SECRET, id, signedAt, body),
  } = {}) {
    return webhookOf({
      body,
      headers: {
        'svix-id': id,
        'svix-timestamp': String(Math.floor(signedAt.getTime() / 1000)),
        'svix-signature': signature,
      },
      receivedAt: RECEIVED_AT,
    });
  }

  it('accepts a payload signed exactly as Svix signs it, under the svix-* headers', () => {
    expect(standardWebhooks.authenticate(svixDelivery(), SVIX_CONTEXT)).toEqual({ ok: true });
  });

  it('accepts any of several space-separated svix-signature entries (a secret being rotated)', () => {
    const signature = `v1,${Buffer.alloc(32, 1).toString('base64')} ${svixSign(SVIX_SECRET, SVIX_ID, RECEIVED_AT, BODY)}`;
    expect(standardWebhooks.authenticate(svixDelivery({ signature }), SVIX_CONTEXT)).toEqual({ ok: true });
  });

  it('refuses a tampered body, another secret and a stale timestamp, naming the svix-* headers', () => {
    const tampered = BODY.replace('"amount_paid": 4500', '"amount_paid": 4501');
    expect(
      standardWebhooks.authenticate(
        svixDelivery({ body: tampered, signature: svixSign(SVIX_SECRET, SVIX_ID, RECEIVED_AT, BODY) }),
        SVIX_CONTEXT,
      ),
    ).toEqual({
      ok: false,
      reason: expect.stringContaining('svix-signature'),
    });
    expect(standardWebhooks.authenticate(svixDelivery(), { ...SVIX_CONTEXT, secret: SECRET }).ok).toBe(false);
    const stale = new Date(RECEIVED_AT.getTime() - (TOLERANCE + 1) * 1000);
    expect(standardWebhooks.authenticate(svixDelivery({ signedAt: stale }), SVIX_CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('older'),
    });
  });

  it.each(['svix-id', 'svix-timestamp', 'svix-signature'])('refuses a Svix delivery without %s', (name) => {
    const complete = svixDelivery();
    const headers = Object.fromEntries(Object.entries(complete.headers).filter(([header]) => header !== name));
    expect(standardWebhooks.authenticate({ ...complete, headers }, SVIX_CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining(name),
    });
  });

  it('never mixes the families: a webhook-* header makes the svix-* ones irrelevant', () => {
    const complete = svixDelivery();
    const mixed = { ...complete, headers: { ...complete.headers, 'webhook-id': SVIX_ID } };
    expect(standardWebhooks.authenticate(mixed, SVIX_CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('webhook-timestamp'),
    });
  });

  it('deduplicates on svix-id exactly as on webhook-id', () => {
    const svix = svixDelivery();
    const retry = svixDelivery({ signedAt: new Date(RECEIVED_AT.getTime() + 5_000) });
    const key = standardWebhooks.dedupe(standardWebhooks.parse(svix), svix);
    expect(key).toEqual({ key: `standard-webhooks:${SVIX_ID}`, windowSeconds: 76 * 3600 });
    expect(standardWebhooks.dedupe(undefined, retry)).toEqual(key);
    const spec = webhookOf({ body: BODY, headers: { 'webhook-id': SVIX_ID } });
    expect(standardWebhooks.dedupe(undefined, spec)).toEqual(key);
  });

  it('renders the same SMS from a Svix delivery', () => {
    expect(renderDefault(standardWebhooks, standardWebhooks.parse(svixDelivery()))).toBe(
      'invoice.paid inv_2pKx7LqN4vR8sT1w (paid)',
    );
  });
});
