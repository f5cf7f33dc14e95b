import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { LANES } from '../../functions/core/lanes';
import { forEachConcurrently } from '../../functions/relay/concurrency';
import type { SweepReport } from '../../functions/relay/sweeper';
import { MessageState, type MessageRecord, type MessageStore } from '../../functions/store';
import { scheduledEvent } from '../functions/handlers/support';
import { type AwsRelay, type HttpAnswer, httpApiEvent, startAwsRelay } from './aws-relay';

/**
 * NOT YET IN THE SUITE (named `.pending.ts` so vitest does not collect it): written for the drain
 * figure, its one run on a machine at load average 30 timed out at 900 s before finishing. Rename it
 * to `aws-drain.test.ts` once it has run green under `npm run test:aws`.
 *
 * The drain after an outage and the lanes, as deployed (`npm run test:aws`): the ingest, sweeper and
 * sender bundles with the template's settings on DynamoDB Local, both of the template's stream
 * mappings (one per lane, each with its `ParallelizationFactor`) feeding the sender, the sandbox as
 * the SMS service (test/integration/aws-relay.ts). 2,000 orders and 20 alerts wait PENDING, left by
 * a sender while the SMS service was unreachable (written before the mappings take their position,
 * so no stream event brings them back), with the circuit held open. The circuit is closed by hand
 * (`sms-relay circuit close`); one sweep wakes every waiting record; the stream-fed sender sends them
 * at `provider.maxPerSecond`'s rate, the bulk lane at its share. Meanwhile 20 more alerts arrive
 * through ingest. Asserted: everything SENT once, and every alert (waiting or new) before the order
 * backlog finished: an ordering fact. Printed: the drain's time against the rate's arithmetic and
 * the sweeper's old pace, and the alerts' accept-to-SENT.
 */

const TOKEN = `generic-${randomBytes(12).toString('hex')}`;
const MAX_PER_SECOND = 20;
const ORDERS = 2_000;
const WAITING_ALERTS = 20;
const NEW_ALERTS = 20;
/** The sweeper before waking: one page of 200 due records a run, a run a minute. */
const OLD_SWEEP_PER_MINUTE = 200;
/** How long before the test the waiting records were accepted: older than the sweep's grace for fresh records. */
const OUTAGE_MS = 5 * 60_000;

const CONFIG_TEXT = stringify({
  provider: {
    baseUrl: 'https://sms.example.com/api',
    defaultSenderId: 'SMSRELAY',
    timeoutMs: 5_000,
    maxPerSecond: MAX_PER_SECOND,
  },
  secrets: 'sms-relay/awsdrain',
  routes: {
    orders: { source: 'generic', secret: 'generic-token', recipients: ['0712345678'], template: '{{ message }}' },
    alerts: {
      source: 'generic',
      secret: 'generic-token',
      recipients: ['0754111222'],
      template: '{{ message }}',
      priority: 'critical',
    },
  },
});

let relay: AwsRelay;

/** One waiting record, as ingest records it. */
async function waiting(store: MessageStore, route: 'orders' | 'alerts', text: string): Promise<void> {
  await store.acceptWebhook({
    route,
    dedupeKey: text,
    windowSeconds: 3_600,
    // Accepted during an outage that began a few minutes ago.
    now: new Date(Date.now() - OUTAGE_MS),
    ...(route === 'alerts' ? { priority: 'critical' as const } : {}),
    messages: [
      {
        index: 0,
        part: 1,
        parts: 1,
        text,
        to: [route === 'alerts' ? '255754111222' : '255712345678'],
        encoding: 'GSM-7',
        characters: text.length,
        segments: 1,
        delivery: route === 'alerts' ? 'at-least-once' : 'at-most-once',
      },
    ],
  });
}

beforeAll(async () => {
  relay = await startAwsRelay({
    environmentName: 'awsdrain',
    configText: CONFIG_TEXT,
    secrets: { 'generic-token': TOKEN },
    senderIds: ['SMSRELAY'],
    parallel: true,
    beforeStream: async (store) => {
      await store.circuit.open({ until: new Date(Date.now() + 3_600_000), by: 'aws-drain test' });
      const texts = [
        ...Array.from({ length: ORDERS }, (_, n) => ['orders', `order ${n}`] as const),
        ...Array.from({ length: WAITING_ALERTS }, (_, n) => ['alerts', `waiting alert ${n}`] as const),
      ];
      await forEachConcurrently(texts, 16, async ([route, text]) => await waiting(store, route, text));
    },
  });
}, 600_000);

afterAll(async () => {
  await relay?.stop();
});

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

async function all(route: string): Promise<MessageRecord[]> {
  const records: MessageRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await relay.store.listByRoute(route, { limit: 500, ...(cursor === undefined ? {} : { cursor }) });
    records.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return records;
}

describe('after an outage, as deployed', () => {
  it('sends 2,000 waiting orders at the rate provider.maxPerSecond allows once the circuit closes, and every alert before the orders are done', {
    timeout: 900_000,
  }, async () => {
    const total = ORDERS + WAITING_ALERTS + NEW_ALERTS;
    // While the circuit is open nothing is woken: the senders would only leave the records waiting.
    const held = await relay.call<SweepReport>('sweeper', scheduledEvent());
    expect(held.woken ?? 0).toBe(0);
    expect(relay.sandbox.messages()).toHaveLength(0);

    await relay.store.circuit.close();
    const closedAt = Date.now();
    // The sweeper's runs, as its schedule starts one each minute (here back to back): each wakes
    // what its time allows (DynamoDB Local takes far longer per write than DynamoDB), and what a
    // send slot's wait put back to PENDING.
    const runs: number[] = [];
    let drained = false;
    const sweeping = (async () => {
      while (!drained) runs.push((await relay.call<SweepReport>('sweeper', scheduledEvent())).woken ?? 0);
    })();
    await expect.poll(() => runs.length, { timeout: 120_000, interval: 500 }).toBeGreaterThan(0);
    expect(runs[0], 'the first run after the close woke records').toBeGreaterThan(0);
    const wokenIn = Date.now() - closedAt;

    // Alerts arriving while the backlog drains.
    for (let n = 0; n < NEW_ALERTS; n += 1) {
      const answer = await relay.call<HttpAnswer>(
        'ingest',
        httpApiEvent({
          routeKey: 'POST /hooks/{route}',
          path: '/hooks/alerts',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ message: `new alert ${n}` }),
        }),
      );
      expect(answer.statusCode).toBe(202);
    }

    await expect
      .poll(
        () => {
          relay.mappings.critical.check();
          relay.mappings.bulk.check();
          return relay.sandbox.messages().length;
        },
        { timeout: 840_000, interval: 2_000 },
      )
      .toBe(total);
    drained = true;
    await sweeping;

    const orders = await all('orders');
    const alerts = await all('alerts');
    expect(orders).toHaveLength(ORDERS);
    expect(alerts).toHaveLength(WAITING_ALERTS + NEW_ALERTS);
    for (const record of [...orders, ...alerts]) expect(record.state, record.id).toBe(MessageState.Sent);
    // Each SMS once.
    expect(new Set(relay.sandbox.messages().map((message) => message.message)).size).toBe(total);

    const sentAt = (record: MessageRecord): number => Date.parse(record.sentAt!);
    const lastOrder = Math.max(...orders.map(sentAt));
    const lastAlert = Math.max(...alerts.map(sentAt));
    expect(lastAlert).toBeLessThan(lastOrder);

    const drainSeconds = (lastOrder - closedAt) / 1_000;
    const bulkRate = Math.max(1, Math.floor(MAX_PER_SECOND * LANES.bulkShare));
    const newAlerts = alerts.filter((alert) => alert.text.startsWith('new alert'));
    const latencies = newAlerts.map((alert) => sentAt(alert) - Date.parse(alert.createdAt));
    const waitingAlertsDone =
      (Math.max(...alerts.filter((a) => !newAlerts.includes(a)).map(sentAt)) - closedAt) / 1_000;
    console.log(
      [
        `drain after an outage (AWS-shaped, provider.maxPerSecond ${MAX_PER_SECOND}, bulk lane ${bulkRate}/s): ${ORDERS} orders + ${WAITING_ALERTS} alerts waiting, all SENT ${drainSeconds.toFixed(1)} s after the circuit closed`,
        `  (the first sweep run woke ${runs[0]} in ${(wokenIn / 1_000).toFixed(1)} s, ${runs.length} runs in all woke ${runs.join(' + ')}; the rate allows ${ORDERS} ÷ ${bulkRate}/s = ${(ORDERS / bulkRate).toFixed(0)} s for the orders; the sweeper alone, ${OLD_SWEEP_PER_MINUTE} a minute, would take ${(ORDERS / OLD_SWEEP_PER_MINUTE).toFixed(0)} min)`,
        `  the ${WAITING_ALERTS} waiting alerts all SENT ${waitingAlertsDone.toFixed(1)} s after the close; ${NEW_ALERTS} alerts arriving during the drain: accept-to-SENT p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms (each sender invocation a cold Node process here)`,
      ].join('\n'),
    );
  });
});
