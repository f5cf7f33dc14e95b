import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type HttpAnswer, mapConcurrent } from './support/http';
import { countBy, storedRecords, waitUntil } from './support/records';
import { inboxCounts } from './support/sandbox';
import { runId, type Scenario, startScenario } from './support/scenario';
import { hmacRouteHeaders, nowSeconds, standardWebhooksHeaders, svixHeaders } from './support/signers';
import { bodyFor, headersFor, ROUTE_SECRET, type SourceRoute, type Webhook } from './support/webhooks';

/**
 * Each delivery is posted 5 times at once, as a sender's retries racing each other would be:
 * exactly one is accepted, the others are answered as duplicates of it, and exactly one SMS goes
 * out. Per source, the copies are what that sender really repeats: the same bytes (GitHub delivery
 * id, generic Idempotency-Key, Alertmanager group, Shopify event id), or the same event re-signed
 * with a newer timestamp (Stripe event id, Standard Webhooks webhook-id).
 * GitLab repeats its Idempotency-Key, PagerDuty its event id, Uptime Kuma its heartbeat; Sentry
 * builds a retry anew, with a fresh Request-ID over the same signed body; the hmac route repeats
 * its X-Delivery-Id.
 * SNS retries the same signed message (same MessageId, Timestamp and Signature): the same bytes;
 * Svix re-signs under the same svix-id.
 */

const COPIES = 5;
/** Deliveries in all (RELIABILITY_DUPLICATE_DELIVERIES, default 200), shared out over the sources by these weights. */
const DELIVERIES = Number(process.env['RELIABILITY_DUPLICATE_DELIVERIES'] ?? '200');
const WEIGHTS: Readonly<Record<string, number>> = {
  amo: 2,
  github: 2,
  stripe: 2,
  alerts: 2,
  standard: 1,
  shopify: 1,
  gitlab: 0.5,
  sentry: 0.5,
  pagerduty: 0.5,
  kuma: 0.5,
  hmac: 1,
  svix: 0.5,
  sns: 0.5,
};
const PLAN: Readonly<Record<string, number>> = Object.fromEntries(
  Object.entries(WEIGHTS).map(([route, weight]) => [route, Math.max(1, Math.round((DELIVERIES * weight) / 10))]),
);
const RESIGNED: ReadonlySet<SourceRoute> = new Set(['stripe', 'standard', 'sentry']);

interface Delivery {
  readonly tag: string;
  readonly copies: readonly Webhook[];
}

function delivery(scenario: Scenario, route: SourceRoute, tag: string, index: number): Delivery {
  const secret = scenario.secrets[ROUTE_SECRET[route]]!;
  const body = bodyFor(route, tag);
  const first = headersFor(route, secret, body);
  const id = `msg_${tag.replaceAll(' ', '_')}_${index}`;
  const copies = Array.from({ length: COPIES }, (_, copy): Webhook => {
    // A retry is signed anew at its own time; the event (and so the dedupe key) stays the same.
    const timestamp = nowSeconds() - copy;
    const headers =
      route === 'standard'
        ? standardWebhooksHeaders(secret, body, { id, timestamp })
        : route === 'hmac'
          ? hmacRouteHeaders(secret, body, { delivery: id, timestamp })
          : route === 'svix'
            ? svixHeaders(secret, body, { id, timestamp })
            : RESIGNED.has(route) && copy > 0
              ? headersFor(route, secret, body, { timestamp })
              : first;
    return { route, path: `/hooks/${route}`, headers, body, tag };
  });
  return { tag, copies };
}

describe('duplicates: a delivery posted 5 times at once is sent once', () => {
  let scenario: Scenario;
  const run = runId();
  const deliveries: Delivery[] = [];
  const answers = new Map<string, HttpAnswer[]>();

  beforeAll(async () => {
    scenario = await startScenario({ label: 'duplicates' });
    for (const [route, count] of Object.entries(PLAN)) {
      for (let index = 0; index < count; index += 1)
        deliveries.push(delivery(scenario, route as SourceRoute, `dup ${run} ${route} ${index}`, index));
    }
  });

  afterAll(async () => {
    await scenario?.close();
  });

  it(`answers exactly one of the ${COPIES} copies with 202 and the others as its duplicates`, async () => {
    const started = Date.now();
    await mapConcurrent(deliveries, 16, async (each) => {
      const got = await Promise.all(
        each.copies.map(
          async (copy) =>
            await call(scenario.runtime.baseUrl, {
              method: 'POST',
              path: copy.path,
              headers: copy.headers,
              body: copy.body,
            }).catch(
              (error: unknown): HttpAnswer => ({
                status: 0,
                text: `no answer: ${(error as Error).message}`,
                json: undefined,
                headers: {},
              }),
            ),
        ),
      );
      answers.set(each.tag, got);
    });
    console.log(`duplicates: ${deliveries.length} deliveries x ${COPIES} copies posted in ${Date.now() - started} ms`);

    const problems: string[] = [];
    for (const each of deliveries) {
      const got = answers.get(each.tag)!;
      const accepted = got.filter((answer) => answer.status === 202);
      const duplicates = got.filter((answer) => answer.status === 200 && answer.json?.['status'] === 'duplicate');
      if (accepted.length !== 1 || duplicates.length !== COPIES - 1) {
        problems.push(
          `${each.tag}: ${got.map((answer) => `${answer.status} ${answer.text.slice(0, 120)}`).join(' / ')}`,
        );
        continue;
      }
      const ids = JSON.stringify(accepted[0]!.json?.['ids']);
      if (duplicates.some((answer) => JSON.stringify(answer.json?.['ids']) !== ids))
        problems.push(`${each.tag}: a duplicate names other ids than the accepted copy`);
    }
    expect(problems.slice(0, 10)).toEqual([]);
    expect(problems.length).toBe(0);
  });

  it('sends each delivery exactly once and records one SENT message for it', async () => {
    const tags = deliveries.map((each) => each.tag);
    await waitUntil(
      `all ${tags.length} deliveries to reach the SMS service`,
      () => inboxCounts(scenario.sandbox).size >= tags.length,
      {
        timeoutMs: 180_000,
        describe: () => `inbox has ${inboxCounts(scenario.sandbox).size} distinct texts`,
      },
    );
    expect(await scenario.runtime.stop()).toEqual({ code: 0, signal: null });

    const inbox = inboxCounts(scenario.sandbox);
    expect([...inbox.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    expect([...inbox.keys()].sort()).toEqual([...tags].sort());

    const accepted = deliveries.flatMap(
      (each) => (answers.get(each.tag)!.find((answer) => answer.status === 202)?.json?.['ids'] as string[]) ?? [],
    );
    const records = await storedRecords(scenario.files.dataDir);
    expect(records.length).toBe(deliveries.length);
    expect(records.map((record) => record.id).sort()).toEqual([...accepted].sort());
    expect(countBy(records.map((record) => record.state))).toEqual({ SENT: deliveries.length });
    expect(records.every((record) => record.attempts === 1)).toBe(true);
  });
});
