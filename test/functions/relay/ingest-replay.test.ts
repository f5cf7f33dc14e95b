import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RouteConfig } from '../../../functions/core/config/schema';
import { signWebhook } from '../../../local/runtime/signers';
import { expectNoLeaks } from './leaks';
import { fixtureText, harness, type Harness, secretValues, useRelayServers } from './support';

/**
 * Replays, for every source whose delivery id is not signed: a signed body replayed under
 * a fresh delivery id is a duplicate and leaves nothing under that id, so the genuine delivery that
 * later carries it is accepted.
 */

const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

interface Case {
  readonly source: 'github' | 'shopify' | 'sentry' | 'hmac';
  readonly fixture: string;
  /** The unsigned header that names the delivery, with the headers the source needs besides. */
  readonly headers: (delivery: string) => Record<string, string>;
  readonly route?: Partial<RouteConfig>;
}

const CASES: readonly Case[] = [
  {
    source: 'github',
    fixture: 'github/push.json',
    headers: (delivery) => ({ 'x-github-event': 'push', 'x-github-delivery': delivery }),
  },
  {
    source: 'shopify',
    fixture: 'shopify/orders-create.json',
    headers: (delivery) => ({ 'x-shopify-topic': 'orders/create', 'x-shopify-event-id': delivery }),
  },
  {
    source: 'sentry',
    fixture: 'sentry/issue-created.json',
    headers: (delivery) => ({ 'sentry-hook-resource': 'issue', 'request-id': delivery }),
  },
  {
    source: 'hmac',
    fixture: 'hmac/paystack-charge-success.json',
    headers: (delivery) => ({ 'x-paystack-seq': delivery }),
    route: {
      signature: { header: 'x-paystack-signature', algorithm: 'sha512' },
      dedupe: { header: 'x-paystack-seq' },
    } as Partial<RouteConfig>,
  },
];

/** The fixture with one field changed: a new event of the same kind, signed like the first. */
const anotherBody = (text: string): string =>
  JSON.stringify({ ...(JSON.parse(text) as Record<string, unknown>), relayTestNonce: randomUUID() });

describe('a replay under a fresh delivery id', () => {
  it.each(CASES)(
    '$source: is a duplicate and leaves the id free for the genuine delivery that carries it',
    async ({ source, fixture, headers, route = {} }) => {
      const secret = `${source}-secret-${randomUUID()}`;
      relay = await harness({
        db: servers.db,
        baseUrl: servers.sandbox.baseUrl,
        secrets: secretValues({ [`${source}-secret`]: secret }),
        config: (config) => ({
          ...config,
          routes: {
            ...config.routes,
            replayed: {
              source,
              secret: `${source}-secret`,
              recipients: ['0754111222'],
              template: 'event',
              ...route,
            } as never,
          },
        }),
      });
      const routeConfig = relay.context.config.routes.get('replayed')!.config;
      const post = (body: string, delivery: string) =>
        relay.ingest('replayed', body, {
          headers: signWebhook(source, {
            body: Buffer.from(body),
            secret,
            headers: headers(delivery),
            route: routeConfig,
          }),
        });

      const original = fixtureText(fixture);
      const first = await post(original, 'delivery-100');
      expect(first.status, JSON.stringify(first.body)).toBe(202);
      for (const delivery of ['delivery-101', 'delivery-102']) {
        expect(await post(original, delivery)).toMatchObject({
          status: 200,
          body: { status: 'duplicate', ids: first.body['ids'] },
        });
      }
      for (const delivery of ['delivery-101', 'delivery-102']) {
        const genuine = await post(anotherBody(original), delivery);
        expect(genuine.status, JSON.stringify(genuine.body)).toBe(202);
      }
      expect(await relay.records('replayed')).toHaveLength(3);
    },
  );
});
