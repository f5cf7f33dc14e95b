import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SHOPIFY, shopify } from '../../../../functions/core/sources/shopify';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = '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';
const context: AuthContext = { secret: SECRET, toleranceSeconds: 300 };
const order = fixtureBytes('shopify/orders-create.json');

const base64Hmac = (body: Uint8Array | string, secret = SECRET): string =>
  createHmac('sha256', secret).update(body).digest('base64');

const HEADERS = {
  'Content-Type': 'application/json',
  'X-Shopify-Topic': 'orders/create',
  'X-Shopify-Shop-Domain': 'duka-la-kahawa.myshopify.com',
  'X-Shopify-API-Version': '2024-10',
  'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
  'X-Shopify-Event-Id': '98880550-7158-44d4-b7cd-2c97c8a091b5',
  'X-Shopify-Triggered-At': '2024-11-22T11:31:09.123456789Z',
};

const signed = (body: Uint8Array | string, headers: Record<string, string> = {}, secret = SECRET) =>
  webhookOf({ body, headers: { ...HEADERS, 'X-Shopify-Hmac-Sha256': base64Hmac(body, secret), ...headers } });

describe('shopify.authenticate', () => {
  it('accepts X-Shopify-Hmac-Sha256, the base64 HMAC of the raw body', () => {
    expect(shopify.authenticate(signed(order), context)).toEqual({ ok: true });
  });

  it('accepts the unprefixed Shopify-Hmac-Sha256 of Events deliveries', () => {
    const webhook = webhookOf({ body: order, headers: { 'Shopify-Hmac-Sha256': base64Hmac(order) } });
    expect(shopify.authenticate(webhook, context)).toEqual({ ok: true });
  });

  it('rejects a body changed after signing', () => {
    const tampered = Buffer.from(order).toString('utf8').replace('"45000.00"', '"4500.00"');
    const webhook = webhookOf({ body: tampered, headers: { 'X-Shopify-Hmac-Sha256': base64Hmac(order) } });
    expect(shopify.authenticate(webhook, context)).toEqual({
      ok: false,
      reason: 'X-Shopify-Hmac-Sha256 does not match the body',
    });
  });

  it('rejects an HMAC keyed with another secret, without leaking either value', () => {
    const outcome = shopify.authenticate(signed(order, {}, 'shpss_someone_else'), context);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.reason).not.toContain(SECRET);
    expect(outcome.reason).not.toContain(base64Hmac(order));
  });

  it('rejects a missing header', () => {
    expect(shopify.authenticate(webhookOf({ body: order, headers: HEADERS }), context)).toEqual({
      ok: false,
      reason: 'missing X-Shopify-Hmac-Sha256 header',
    });
  });

  it.each([
    ['hex instead of base64', createHmac('sha256', SECRET).update(order).digest('hex')],
    ['base64 without padding', base64Hmac(order).replace(/=+$/, '')],
    ['a prefixed value', `sha256=${base64Hmac(order)}`],
  ])('rejects a malformed header: %s', (_case, value) => {
    expect(
      shopify.authenticate(webhookOf({ body: order, headers: { 'X-Shopify-Hmac-Sha256': value } }), context),
    ).toEqual({
      ok: false,
      reason: 'malformed X-Shopify-Hmac-Sha256 header',
    });
  });
});

describe('shopify.parse', () => {
  it('keeps ids beyond 2^53 as their exact decimal strings', () => {
    expect(shopify.parse(signed(order))).toMatchObject({
      id: '820982911946154508',
      customer: { id: '115310627314723954' },
      // Ids that fit stay numbers; money stays the string Shopify sent.
      line_items: [{ id: '866550311766439020', product_id: 7513594265678 }],
      shipping_lines: [{ id: '271878346596884015' }],
      total_price: '45000.00',
    });
  });

  it('exposes the phone numbers a route can send to', () => {
    expect(shopify.parse(signed(order))).toMatchObject({
      phone: '+255712345678',
      billing_address: { phone: '+255712345678' },
    });
  });
});

describe('shopify.ping', () => {
  it('has none: a test notification is a signed sample that should produce its SMS', () => {
    const webhook = signed(order);
    expect(shopify.ping(shopify.parse(webhook), webhook)).toBeUndefined();
  });
});

describe('shopify.dedupe', () => {
  const keyOf = (headers: Record<string, string>, body: Uint8Array | string = order) => {
    const webhook = signed(body, headers);
    return shopify.dedupe(shopify.parse(webhook), webhook);
  };

  it('keys on the topic and X-Shopify-Event-Id, as Shopify advises', () => {
    expect(keyOf({})).toEqual({
      key: 'shopify:event:orders/create:98880550-7158-44d4-b7cd-2c97c8a091b5',
      windowSeconds: 48 * 3600,
      replayKey: expect.stringMatching(/^shopify:body:[0-9a-f]{64}$/),
    });
  });

  it('keys the signed body too: the same body under another (unsigned) webhook id is a repeat', () => {
    expect(keyOf({ 'X-Shopify-Webhook-Id': 'fresh-id', 'X-Shopify-Event-Id': 'fresh-event' }).replayKey).toBe(
      keyOf({}).replayKey,
    );
  });

  it('gives a retry (same event, later trigger time) the same key', () => {
    expect(keyOf({ 'X-Shopify-Triggered-At': '2024-11-22T11:45:00.000000000Z' }).key).toBe(keyOf({}).key);
  });

  it('keeps apart two topics raised by one event', () => {
    expect(keyOf({ 'X-Shopify-Topic': 'orders/paid' }).key).not.toBe(keyOf({}).key);
  });

  it('falls back to X-Shopify-Webhook-Id, then to a hash of the raw body', () => {
    expect(keyOf({ 'X-Shopify-Event-Id': '' }).key).toBe('shopify:webhook:b54557e4-bdd9-4b37-8a5f-bf7d70bcd043');
    const bare = webhookOf({ body: order });
    const key = shopify.dedupe(shopify.parse(bare), bare).key;
    expect(key).toMatch(/^shopify:body:[0-9a-f]{64}$/);
    const other = webhookOf({ body: order.subarray(0, order.length - 1) });
    expect(shopify.dedupe({}, other).key).not.toBe(key);
  });

  it('hashes a header value too long or odd to keep readable', () => {
    expect(keyOf({ 'X-Shopify-Event-Id': 'x'.repeat(300) }).key).toMatch(
      /^shopify:event:orders\/create:sha256-[0-9a-f]{64}$/,
    );
    expect(SHOPIFY.dedupeWindowSeconds).toBe(172_800);
  });
});

describe('shopify.defaultTemplate', () => {
  const body = fixtureJson('shopify/orders-create.json');

  it('announces a new order with its total in the shop currency', () => {
    expect(renderDefault(shopify, body, { 'x-shopify-topic': 'orders/create' })).toBe(
      'New order #1001: TZS 45,000.00 from Neema Joseph',
    );
  });

  it('names the buyer from the billing address on a guest checkout', () => {
    const guest = { ...body, customer: null, billing_address: { first_name: 'Asha', last_name: 'Said' } };
    expect(renderDefault(shopify, guest, { 'x-shopify-topic': 'orders/paid' })).toBe(
      'Order #1001 paid: TZS 45,000.00 from Asha Said',
    );
  });

  it('says why an order was cancelled', () => {
    const cancelled = { ...body, cancel_reason: 'customer' };
    expect(renderDefault(shopify, cancelled, { 'x-shopify-topic': 'orders/cancelled' })).toBe(
      'Order #1001 cancelled (customer): TZS 45,000.00',
    );
  });

  it('falls back to the topic and the exact id for other topics', () => {
    expect(renderDefault(shopify, { id: '820982911946154508' }, { 'x-shopify-topic': 'refunds/create' })).toBe(
      'Shopify refunds/create: 820982911946154508',
    );
  });

  it('stays one line of GSM characters', () => {
    expect(renderDefault(shopify, body, { 'x-shopify-topic': 'orders/create' })).toMatch(GSM_PRINTABLE);
  });
});
