import { describe, expect, it } from 'vitest';
import { RouteSchema } from '../../../../functions/core/config/schema';
import { capturedHeaderNames } from '../../../../functions/core/sources/captured-headers';
import { SOURCES } from '../../../../functions/core/sources/registry';

describe('capturedHeaderNames', () => {
  it.each(Object.values(SOURCES))(
    '$name keeps content type, user agent and event and delivery ids, never a credential or signature',
    (pack) => {
      const names = capturedHeaderNames(pack);
      expect(names.slice(0, 2)).toEqual(['content-type', 'user-agent']);
      expect(
        names.filter((name) => /authorization|signature|hmac|token|secret|cookie|timestamp|api-key/.test(name)),
      ).toEqual([]);
    },
  );

  it("keeps an hmac route's delivery-id header and never its signature or timestamp header, whatever they are called", () => {
    const route = RouteSchema.parse({
      source: 'hmac',
      secret: 's',
      recipients: ['0754111222'],
      signature: { header: 'X-Trello-Webhook', signed: '{timestamp}.{body}' },
      timestamp: { header: 'x-trello-time' },
      dedupe: { header: 'X-Trello-Delivery' },
    });
    expect(capturedHeaderNames(SOURCES.hmac, route)).toEqual(['content-type', 'user-agent', 'x-trello-delivery']);
    // A route that names a kept header as its signature: the signature wins.
    const odd = RouteSchema.parse({
      source: 'hmac',
      secret: 's',
      recipients: ['0754111222'],
      signature: { header: 'user-agent' },
      dedupe: { header: 'x-id' },
    });
    expect(capturedHeaderNames(SOURCES.hmac, odd)).toEqual(['content-type', 'x-id']);
  });

  it('keeps what each source reads to tell events apart', () => {
    expect(capturedHeaderNames(SOURCES.github)).toEqual(
      expect.arrayContaining(['x-github-event', 'x-github-delivery']),
    );
    expect(capturedHeaderNames(SOURCES.shopify)).toEqual(
      expect.arrayContaining(['x-shopify-topic', 'x-shopify-webhook-id']),
    );
    expect(capturedHeaderNames(SOURCES.woocommerce)).toEqual(
      expect.arrayContaining(['x-wc-webhook-topic', 'x-wc-webhook-delivery-id']),
    );
    expect(capturedHeaderNames(SOURCES['standard-webhooks'])).toEqual(
      expect.arrayContaining(['webhook-id', 'svix-id']),
    );
    expect(capturedHeaderNames(SOURCES.stripe)).toEqual(['content-type', 'user-agent']);
  });
});
