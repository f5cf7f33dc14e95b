import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { STRIPE, stripe } from '../../../../functions/core/sources/stripe';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = 'whsec_9c2b7e1f4a8d3c6b0e5f2a9d7c4b1e8f';
const context: AuthContext = { secret: SECRET, toleranceSeconds: 300 };
const NOW = new Date('2024-11-22T12:26:52Z');
const T = Math.floor(NOW.getTime() / 1000);
const succeeded = fixtureBytes('stripe/payment_intent.succeeded.json');

/** `HMAC-SHA256(secret, "<t>.<raw body>")` in hex, as Stripe computes `v1`. */
const v1 = (t: number | string, body: Uint8Array | string, secret = SECRET): string =>
  createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');

const delivered = (body: Uint8Array | string, signature: string | undefined, receivedAt = NOW) =>
  webhookOf({
    body,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      ...(signature === undefined ? {} : { 'Stripe-Signature': signature }),
    },
    receivedAt,
  });

const valid = (body: Uint8Array | string = succeeded, t = T) => delivered(body, `t=${t},v1=${v1(t, body)}`);

describe('stripe.authenticate', () => {
  it('accepts v1 = HMAC-SHA256 of "<t>.<raw body>" keyed with the whole whsec_ secret', () => {
    expect(stripe.authenticate(valid(), context)).toEqual({ ok: true });
  });

  it('signs the body bytes, not a re-encoding of them', () => {
    const body = '{"id":"evt_1","type":"charge.succeeded","data":{"object":{"billing_details":{"name":"Zoë Müller"}}}}';
    expect(stripe.authenticate(valid(body), context)).toEqual({ ok: true });
  });

  it('does not accept the secret without its whsec_ prefix, or base64-decoded, as the key', () => {
    const bare = SECRET.slice('whsec_'.length);
    expect(stripe.authenticate(delivered(succeeded, `t=${T},v1=${v1(T, succeeded, bare)}`), context).ok).toBe(false);
    const decoded = createHmac('sha256', Buffer.from(bare, 'base64')).update(`${T}.`).update(succeeded).digest('hex');
    expect(stripe.authenticate(delivered(succeeded, `t=${T},v1=${decoded}`), context).ok).toBe(false);
  });

  it('rejects a body changed after signing', () => {
    const tampered = Buffer.from(succeeded).toString('utf8').replace('"amount": 4999', '"amount": 1');
    const webhook = delivered(tampered, `t=${T},v1=${v1(T, succeeded)}`);
    expect(stripe.authenticate(webhook, context)).toEqual({
      ok: false,
      reason: 'no v1 signature in Stripe-Signature matches the body',
    });
  });

  it('rejects a signature whose timestamp was changed', () => {
    expect(stripe.authenticate(delivered(succeeded, `t=${T + 1},v1=${v1(T, succeeded)}`), context).ok).toBe(false);
  });

  it('rejects another endpoint secret, without leaking either value', () => {
    const outcome = stripe.authenticate(delivered(succeeded, `t=${T},v1=${v1(T, succeeded, 'whsec_other')}`), context);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.reason).not.toContain(SECRET);
    expect(outcome.reason).not.toContain(v1(T, succeeded));
  });

  it('rejects a missing header', () => {
    expect(stripe.authenticate(delivered(succeeded, undefined), context)).toEqual({
      ok: false,
      reason: 'missing Stripe-Signature header',
    });
  });

  it.each([
    ['no timestamp', () => `v1=${v1(T, succeeded)}`],
    ['a non-numeric timestamp', () => `t=soon,v1=${v1('soon', succeeded)}`],
    ['two timestamps', () => `t=${T},t=${T - 1000},v1=${v1(T, succeeded)}`],
    ['no key=value pairs at all', () => 'garbage'],
  ])('rejects a malformed header: %s', (_case, header) => {
    expect(stripe.authenticate(delivered(succeeded, header()), context)).toEqual({
      ok: false,
      reason: 'malformed Stripe-Signature header: needs exactly one t=<unix seconds>',
    });
  });

  it('rejects a header with only a v0 signature, even a correct one', () => {
    expect(stripe.authenticate(delivered(succeeded, `t=${T},v0=${v1(T, succeeded)}`), context)).toEqual({
      ok: false,
      reason: 'Stripe-Signature header has no v1 signature',
    });
  });

  it('accepts any matching v1 among several (secret roll-over), and ignores v0', () => {
    const stale = v1(T, succeeded, 'whsec_previous');
    const good = v1(T, succeeded);
    expect(stripe.authenticate(delivered(succeeded, `t=${T},v1=${stale},v1=${good},v0=${stale}`), context)).toEqual({
      ok: true,
    });
    expect(stripe.authenticate(delivered(succeeded, `t=${T},v1=${good},v1=${stale}`), context)).toEqual({ ok: true });
    expect(
      stripe.authenticate(delivered(succeeded, `t=${T},v1=${stale},v1=${stale.replace(/^./, 'f')}`), context).ok,
    ).toBe(false);
  });

  it('accepts a timestamp within the tolerance either side', () => {
    expect(stripe.authenticate(valid(succeeded, T - 300), context)).toEqual({ ok: true });
    expect(stripe.authenticate(valid(succeeded, T + 300), context)).toEqual({ ok: true });
  });

  it('rejects a timestamp older than the tolerance, though correctly signed', () => {
    expect(stripe.authenticate(valid(succeeded, T - 301), context)).toEqual({
      ok: false,
      reason: 'timestamp is older than the 300 s tolerance',
    });
  });

  it('rejects a timestamp further ahead than the tolerance', () => {
    expect(stripe.authenticate(valid(succeeded, T + 301), context)).toEqual({
      ok: false,
      reason: 'timestamp is ahead of the 300 s tolerance',
    });
  });

  it("applies the route's tolerance, not a built-in one", () => {
    const old = valid(succeeded, T - 3_000);
    expect(stripe.authenticate(old, { secret: SECRET, toleranceSeconds: 3_600 })).toEqual({ ok: true });
    expect(stripe.authenticate(old, context).ok).toBe(false);
    expect(STRIPE.defaultToleranceSeconds).toBe(300);
  });

  it('fails closed when the route has an empty secret', () => {
    const webhook = delivered(succeeded, `t=${T},v1=${v1(T, succeeded, '')}`);
    expect(stripe.authenticate(webhook, { secret: '', toleranceSeconds: 300 })).toEqual({
      ok: false,
      reason: 'no secret is configured for this route',
    });
  });
});

describe('stripe.parse and stripe.ping', () => {
  it('parses the event and never treats one as a ping', () => {
    const webhook = valid();
    const event = stripe.parse(webhook);
    expect(event).toMatchObject({
      id: 'evt_3QNxK2LkdIwHu7ix0mVb1Qe4',
      type: 'payment_intent.succeeded',
      data: { object: { amount: 4999, currency: 'usd' } },
    });
    expect(stripe.ping(event, webhook)).toBeUndefined();
  });

  it('treats an event from `stripe trigger` (test mode) as an ordinary event', () => {
    const triggered = {
      ...fixtureJson('stripe/payment_intent.succeeded.json'),
      livemode: false,
      request: { id: null, idempotency_key: null },
    };
    const webhook = valid(JSON.stringify(triggered));
    expect(stripe.authenticate(webhook, context)).toEqual({ ok: true });
    expect(stripe.ping(stripe.parse(webhook), webhook)).toBeUndefined();
  });
});

describe('stripe.dedupe', () => {
  it('keys on the event id, which every retry of the event keeps', () => {
    const first = valid(succeeded, T);
    const retry = valid(succeeded, T + 3_600);
    expect(stripe.dedupe(stripe.parse(first), first)).toEqual({
      key: 'stripe:event:evt_3QNxK2LkdIwHu7ix0mVb1Qe4',
      windowSeconds: 72 * 3600,
    });
    expect(stripe.dedupe(stripe.parse(retry), retry).key).toBe('stripe:event:evt_3QNxK2LkdIwHu7ix0mVb1Qe4');
  });

  it('gives different events different keys', () => {
    const refunded = valid(fixtureBytes('stripe/charge.refunded.json'));
    expect(stripe.dedupe(stripe.parse(refunded), refunded).key).toBe('stripe:event:evt_3QNxK2LkdIwHu7ix0qZr8Tn1');
  });

  it('falls back to a hash of the raw body without an id', () => {
    const webhook = valid('{"type":"charge.succeeded"}');
    expect(stripe.dedupe(stripe.parse(webhook), webhook).key).toMatch(/^stripe:body:[0-9a-f]{64}$/);
    expect(STRIPE.dedupeWindowSeconds).toBe(259_200);
  });
});

describe('stripe.defaultTemplate', () => {
  it('reports a succeeded payment intent in major units', () => {
    expect(renderDefault(stripe, fixtureJson('stripe/payment_intent.succeeded.json'))).toBe(
      'Payment received: USD 49.99 - Order #2031 - Safari sandals',
    );
  });

  it('reports a partial refund', () => {
    expect(renderDefault(stripe, fixtureJson('stripe/charge.refunded.json'))).toBe(
      'Refunded USD 15.00 of USD 49.99 to Grace Otieno',
    );
  });

  it('reports a paid invoice, marking test mode', () => {
    const invoice = {
      id: 'evt_1QO0aBLkdIwHu7ixc1Yk2Rz5',
      type: 'invoice.paid',
      livemode: false,
      data: {
        object: {
          id: 'in_1QO0a9LkdIwHu7ixb8Jt6X0q',
          number: 'D4E2F1A0-0007',
          amount_paid: 250000,
          currency: 'tzs',
          customer_name: 'Ushirika wa Moshi',
        },
      },
    };
    expect(renderDefault(stripe, invoice)).toBe('[TEST] Invoice D4E2F1A0-0007 paid: TZS 2,500.00 by Ushirika wa Moshi');
  });

  it('reports a failed payment with its reason', () => {
    const failed = {
      type: 'payment_intent.payment_failed',
      livemode: true,
      data: {
        object: {
          amount: 1200,
          currency: 'eur',
          last_payment_error: { code: 'card_declined', message: 'Your card was declined.' },
        },
      },
    };
    expect(renderDefault(stripe, failed)).toBe('Payment failed: EUR 12.00 - Your card was declined.');
  });

  it('names any other event type', () => {
    expect(
      renderDefault(stripe, {
        type: 'customer.created',
        livemode: true,
        data: { object: { id: 'cus_RGa1Zb7QvN3mLp' } },
      }),
    ).toBe('Stripe customer.created: cus_RGa1Zb7QvN3mLp');
  });

  it('stays one line of GSM characters', () => {
    expect(renderDefault(stripe, fixtureJson('stripe/charge.refunded.json'))).toMatch(GSM_PRINTABLE);
  });
});
