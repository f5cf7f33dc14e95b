import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { WOOCOMMERCE, isCreationPing, woocommerce } from '../../../../functions/core/sources/woocommerce';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = 'w<k3&Y$r9!pZq@4vB{x1]LmN7';
const context: AuthContext = { secret: SECRET, toleranceSeconds: 300 };
const order = fixtureJson('woocommerce/order-created.json');

/** What `trim( wp_json_encode( $payload ) )` puts on the wire: compact, slashes escaped. */
const wire = (payload: unknown): string => JSON.stringify(payload).replace(/\//g, '\\/');

const base64Hmac = (body: Uint8Array | string, secret = SECRET): string =>
  createHmac('sha256', secret).update(body).digest('base64');

const HEADERS = {
  'Content-Type': 'application/json',
  'User-Agent': 'WooCommerce/9.4.2 Hookshot (WordPress/6.7.1)',
  'X-WC-Webhook-Source': 'https://duka.example.co.tz/',
  'X-WC-Webhook-Topic': 'order.created',
  'X-WC-Webhook-Resource': 'order',
  'X-WC-Webhook-Event': 'created',
  'X-WC-Webhook-ID': '42',
  'X-WC-Webhook-Delivery-ID': '5e8a1f3b7c2d9e4a6b0c8d1e2f3a4b5c',
};

const signed = (body: string | Uint8Array, headers: Record<string, string> = {}, secret = SECRET) =>
  webhookOf({ body, headers: { ...HEADERS, 'X-WC-Webhook-Signature': base64Hmac(body, secret), ...headers } });

const ping = (body: string | Uint8Array = fixtureBytes('woocommerce/ping.txt'), headers: Record<string, string> = {}) =>
  webhookOf({
    body,
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8',
      'User-Agent': 'WooCommerce/9.4.2 Hookshot (WordPress/6.7.1)',
      ...headers,
    },
  });

describe('woocommerce.authenticate', () => {
  it('accepts X-WC-Webhook-Signature, the base64 HMAC of the body as sent', () => {
    expect(woocommerce.authenticate(signed(wire(order)), context)).toEqual({ ok: true });
  });

  it('rejects a body changed after signing, even one that parses the same', () => {
    // Same JSON value, different bytes: the signature covers the bytes.
    const webhook = webhookOf({
      body: JSON.stringify(order),
      headers: { ...HEADERS, 'X-WC-Webhook-Signature': base64Hmac(wire(order)) },
    });
    expect(woocommerce.authenticate(webhook, context)).toEqual({
      ok: false,
      reason: 'X-WC-Webhook-Signature does not match the body',
    });
  });

  it('rejects a signature keyed with another secret, without leaking either value', () => {
    const outcome = woocommerce.authenticate(signed(wire(order), {}, 'not the webhook secret'), context);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.reason).not.toContain(SECRET);
    expect(outcome.reason).not.toContain(base64Hmac(wire(order)));
  });

  it('rejects a delivery without a signature', () => {
    expect(woocommerce.authenticate(webhookOf({ body: wire(order), headers: HEADERS }), context)).toEqual({
      ok: false,
      reason: 'missing X-WC-Webhook-Signature header',
    });
  });

  it('rejects a malformed signature header', () => {
    const webhook = signed(wire(order), {
      'X-WC-Webhook-Signature': createHmac('sha256', SECRET).update(wire(order)).digest('hex'),
    });
    expect(woocommerce.authenticate(webhook, context)).toEqual({
      ok: false,
      reason: 'malformed X-WC-Webhook-Signature header',
    });
  });
});

describe('woocommerce creation ping', () => {
  it('is accepted unsigned, parsed, and answered without a send', () => {
    const webhook = ping();
    expect(isCreationPing(webhook)).toBe(true);
    expect(woocommerce.authenticate(webhook, context)).toEqual({ ok: true });
    const body = woocommerce.parse(webhook);
    expect(body).toEqual({ webhook_id: '42' });
    expect(woocommerce.ping(body, webhook)).toBe('woocommerce creation ping (webhook 42)');
  });

  it('is recognised by its bytes whatever the declared content type', () => {
    const webhook = webhookOf({ body: 'webhook_id=7' });
    expect(woocommerce.ping(woocommerce.parse(webhook), webhook)).toBe('woocommerce creation ping (webhook 7)');
  });

  it.each([
    ['a second field', 'webhook_id=42&status=active'],
    ['a trailing newline', 'webhook_id=42\n'],
    ['a non-numeric id', 'webhook_id=abc'],
    ['JSON that looks alike', '{"webhook_id":42}'],
    ['an empty body', ''],
  ])('is not granted to anything else unsigned: %s', (_case, body) => {
    const webhook = ping(body);
    expect(isCreationPing(webhook)).toBe(false);
    expect(woocommerce.authenticate(webhook, context)).toEqual({
      ok: false,
      reason: 'missing X-WC-Webhook-Signature header',
    });
  });

  it('is never a ping for a signed order, so every send went through the signature', () => {
    const webhook = signed(wire(order));
    expect(woocommerce.ping(woocommerce.parse(webhook), webhook)).toBeUndefined();
  });

  it('refuses other form-encoded bodies even when signed', () => {
    const body = 'webhook_id=42&status=active';
    expect(() => woocommerce.parse(signed(body, { 'Content-Type': 'application/x-www-form-urlencoded' }))).toThrow(
      BadPayloadError,
    );
  });
});

describe('woocommerce.parse', () => {
  it('reads the JSON WooCommerce sends, escaped slashes included', () => {
    expect(woocommerce.parse(signed(wire(order)))).toMatchObject({
      payment_url: 'https://duka.example.co.tz/checkout/order-pay/4821/?pay_for_order=true&key=wc_order_q7Lx2mN9vB4tR',
      billing: { phone: '0712345678' },
      total: '27000.00',
      currency: 'TZS',
    });
  });
});

describe('woocommerce.dedupe', () => {
  const keyOf = (payload: unknown, headers: Record<string, string> = {}) => {
    const webhook = signed(wire(payload), headers);
    return woocommerce.dedupe(woocommerce.parse(webhook), webhook);
  };
  const updated = { 'X-WC-Webhook-Topic': 'order.updated', 'X-WC-Webhook-Event': 'updated' };

  it('keys a created resource on site, topic and id, ignoring the per-attempt delivery id', () => {
    const first = keyOf(order);
    expect(first).toEqual({
      key: 'woocommerce:https://duka.example.co.tz/:order.created:4821',
      windowSeconds: 24 * 3600,
      replayKey: expect.stringMatching(/^woocommerce:body:[0-9a-f]{64}$/),
    });
    // The same signed body under other (unsigned) headers is a replay, whatever key they give it.
    expect(keyOf(order, { 'X-WC-Webhook-Topic': 'order.deleted' }).replayKey).toBe(first.replayKey);
    // A second order.created for the same order (hooks firing twice) is a duplicate even though
    // WooCommerce gave it a fresh delivery id and the order was touched in between.
    const again = keyOf(
      { ...order, date_modified_gmt: '2024-11-22T12:03:10' },
      { 'X-WC-Webhook-Delivery-ID': 'c0ffee00c0ffee00c0ffee00c0ffee00' },
    );
    expect(again.key).toBe(first.key);
  });

  it('keys an update on the modification time too, so a later change is sent again', () => {
    const first = keyOf(order, updated).key;
    expect(first).toBe('woocommerce:https://duka.example.co.tz/:order.updated:4821:2024-11-22T12:02:44');
    expect(keyOf(order, { ...updated, 'X-WC-Webhook-Delivery-ID': 'another' }).key).toBe(first);
    expect(keyOf({ ...order, status: 'completed', date_modified_gmt: '2024-11-23T08:00:00' }, updated).key).not.toBe(
      first,
    );
  });

  it('keys a deletion, whose body is only the id', () => {
    const deleted = { 'X-WC-Webhook-Topic': 'order.deleted', 'X-WC-Webhook-Event': 'deleted' };
    expect(keyOf({ id: 4821 }, deleted).key).toBe('woocommerce:https://duka.example.co.tz/:order.deleted:4821');
  });

  it('falls back to a hash of the raw body without topic or id', () => {
    const action = { 'X-WC-Webhook-Topic': 'action.woocommerce_low_stock', 'X-WC-Webhook-Resource': 'action' };
    expect(keyOf({ action: 'woocommerce_low_stock', arg: 233 }, action).key).toMatch(/^woocommerce:body:[0-9a-f]{64}$/);
    const bare = webhookOf({ body: wire(order) });
    expect(woocommerce.dedupe(order, bare).key).toMatch(/^woocommerce:body:[0-9a-f]{64}$/);
    expect(WOOCOMMERCE.dedupeWindowSeconds).toBe(86_400);
  });
});

describe('woocommerce.defaultTemplate', () => {
  const headers = {
    'x-wc-webhook-topic': 'order.created',
    'x-wc-webhook-resource': 'order',
    'x-wc-webhook-event': 'created',
  };

  it('summarises an order in GSM characters only (a hyphen, not an em dash)', () => {
    const text = renderDefault(woocommerce, order, headers);
    expect(text).toBe('Order #4821 processing: TZS 27,000.00 - Baraka Mwakyusa');
    expect(text).toMatch(GSM_PRINTABLE);
  });

  it('still says something for a deleted order', () => {
    const deleted = { ...headers, 'x-wc-webhook-topic': 'order.deleted', 'x-wc-webhook-event': 'deleted' };
    expect(renderDefault(woocommerce, { id: 4821 }, deleted)).toBe('Order 4821 deleted');
  });

  it('names the topic for other resources', () => {
    const coupon = {
      'x-wc-webhook-topic': 'coupon.created',
      'x-wc-webhook-resource': 'coupon',
      'x-wc-webhook-event': 'created',
    };
    expect(renderDefault(woocommerce, { id: 719, code: 'KARIBU10' }, coupon)).toBe('WooCommerce coupon.created 719');
  });
});
