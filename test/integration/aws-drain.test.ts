import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { Lane, laneRate } from '../../functions/core/lanes';
import { forEachConcurrently } from '../../functions/relay/concurrency';
import type { SweepReport } from '../../functions/relay/sweeper';
import { MessageState, type MessageRecord, type MessageStore } from '../../functions/store';
import { messageKey } from '../../functions/store/keys';
import { TABLE } from '../../functions/store/table';
import { scheduledEvent } from '../functions/handlers/support';
import { type AwsRelay, type HttpAnswer, httpApiEvent, startAwsRelay } from './aws-relay';

/**
 * The drain after an outage and the lanes, as deployed (`npm run test:aws`): the ingest, sweeper and
 * sender bundles with the template's settings on DynamoDB Local, both of the template's stream
 * mappings (one per lane, each with its `ParallelizationFactor`) feeding the sender, the sandbox as
 * the SMS service (test/integration/aws-relay.ts), each function's execution environments kept for its
 * next invocations as Lambda keeps them (the first of each a cold start). 2,000 orders and 20 alerts wait PENDING, left by
 * a sender while the SMS service was unreachable (written before the mappings take their position,
 * so no stream event brings them back), with the circuit held open. The circuit is closed by hand
 * (`sms-relay circuit close`); the sweeper, run as its schedule runs it (one run a minute), wakes
 * the waiting records; the stream-fed sender sends them at `provider.maxPerSecond`'s rate, the bulk
 * lane at its share. Meanwhile 20 more alerts arrive through ingest, spread over the drain by its
 * progress. Asserted: everything SENT once, the waiting alerts before half the orders, and every
 * new alert while orders accepted before it still waited: ordering facts. Printed: the drain's
 * time against the rate's arithmetic and the sweeper's old pace, and the alerts' accept-to-SENT.
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
    warm: true,
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

/** The period of a `rate(n minute[s])` schedule expression, in ms. */
function schedulePeriodMs(expression: string): number {
  const match = /^rate\((\d+) minutes?\)$/.exec(expression);
  if (match === null) throw new Error(`the sweeper's schedule ${expression} is not a rate in minutes`);
  return Number(match[1]) * 60_000;
}

/**
 * Runs the sweeper as its schedule does, one run each period (a run that overran its period is
 * followed at once), until `stop`: the reports of the runs so far, and the loop to wait for.
 */
function sweepOnSchedule(): { readonly runs: SweepReport[]; stop(): Promise<void> } {
  const periodMs = schedulePeriodMs(relay.sweepSchedule);
  const runs: SweepReport[] = [];
  const stopped = new AbortController();
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const started = Date.now();
      runs.push(await relay.call<SweepReport>('sweeper', scheduledEvent()));
      const untilNext = started + periodMs - Date.now();
      if (untilNext > 0) await sleep(untilNext, undefined, { signal: stopped.signal }).catch(() => undefined);
    }
  })();
  return {
    runs,
    stop: async () => {
      stopped.abort();
      await loop;
    },
  };
}

/** A record's partition key, as a stream record's `Keys` carry it. */
const partitionKeyOf = (record: MessageRecord): string => messageKey(record.id)[TABLE.partitionKey]?.S ?? '';

const sentOf = (text: string): boolean => relay.sandbox.messages().some((message) => message.message === text);
const ordersSent = (): number =>
  relay.sandbox.messages().filter((message) => message.message.startsWith('order ')).length;

describe('after an outage, as deployed', () => {
  it('sends 2,000 waiting orders at the rate provider.maxPerSecond allows once the circuit closes, the waiting alerts first and every new alert while orders still wait', {
    timeout: 1_500_000,
  }, async () => {
    const total = ORDERS + WAITING_ALERTS + NEW_ALERTS;
    const loadBefore = loadavg()[0]!;
    // While the circuit is open nothing is woken: the senders would only leave the records waiting.
    const held = await relay.call<SweepReport>('sweeper', scheduledEvent());
    expect(held.woken ?? 0).toBe(0);
    expect(relay.sandbox.messages()).toHaveLength(0);

    await relay.store.circuit.close();
    const closedAt = Date.now();
    const sweeps = sweepOnSchedule();
    try {
      await expect.poll(() => sweeps.runs.length, { timeout: 300_000, interval: 500 }).toBeGreaterThan(0);
      expect(sweeps.runs[0]!.woken, 'the first run after the close woke records').toBeGreaterThan(0);
      const wokenIn = Date.now() - closedAt;

      // Alerts arriving while the backlog drains: the n-th once n/21 of the orders are SENT.
      await Promise.all(
        Array.from({ length: NEW_ALERTS }, async (_, n) => {
          await expect
            .poll(
              () => {
                relay.mappings.critical.check();
                relay.mappings.bulk.check();
                return ordersSent();
              },
              { timeout: 1_200_000, interval: 500 },
            )
            .toBeGreaterThanOrEqual(Math.floor((n * ORDERS) / (NEW_ALERTS + 1)));
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
          await expect.poll(() => sentOf(`new alert ${n}`), { timeout: 600_000, interval: 250 }).toBe(true);
        }),
      );

      // Every SMS sent, or a record that ended unsent (the assertions below then name it).
      await expect
        .poll(
          async () => {
            relay.mappings.critical.check();
            relay.mappings.bulk.check();
            if (relay.sandbox.messages().length === total) return true;
            const stuck = await relay.store.countStuck({ overdueBefore: new Date(0) });
            return stuck.unknown + stuck.failed + stuck.parked + stuck.held > 0;
          },
          { timeout: 1_200_000, interval: 2_000 },
        )
        .toBe(true);

      const orders = await all('orders');
      const alerts = await all('alerts');
      expect(orders).toHaveLength(ORDERS);
      expect(alerts).toHaveLength(WAITING_ALERTS + NEW_ALERTS);
      for (const record of [...orders, ...alerts]) expect(record.state, record.id).toBe(MessageState.Sent);
      // Each SMS once.
      expect(new Set(relay.sandbox.messages().map((message) => message.message)).size).toBe(total);

      const sentAt = (record: MessageRecord): number => Date.parse(record.sentAt!);
      const orderTimes = orders.map(sentAt).sort((a, b) => a - b);
      const lastOrder = orderTimes.at(-1)!;
      const newAlerts = alerts.filter((alert) => alert.text.startsWith('new alert'));
      const waitingAlerts = alerts.filter((alert) => alert.text.startsWith('waiting alert'));
      const waitingAlertsDone = Math.max(...waitingAlerts.map(sentAt));
      // Critical first: every alert that waited through the outage went before half the orders did.
      expect(waitingAlertsDone).toBeLessThan(percentile(orderTimes, 50));
      // No alert queued behind the backlog: each was SENT while orders accepted before it still waited.
      for (const alert of newAlerts)
        expect(
          orderTimes.filter((time) => time > sentAt(alert)).length,
          `orders still waiting when ${alert.text} was SENT`,
        ).toBeGreaterThan(0);

      const drainSeconds = (lastOrder - closedAt) / 1_000;
      const bulkRate = laneRate(Lane.Bulk, MAX_PER_SECOND);
      const latencies = newAlerts.map((alert) => sentAt(alert) - Date.parse(alert.createdAt));
      // Where an alert's time goes: from its accept to the critical mapping handing it to the sender
      // (the stream and the poll), then that invocation (the process, the send, the settle).
      const invocationOf = (alert: MessageRecord) =>
        relay.mappings.critical.invocations.find(
          (each) => each.keys.includes(partitionKeyOf(alert)) && !('functionError' in each.outcome),
        );
      const toInvocation = newAlerts.map(
        (alert) => (invocationOf(alert)?.startedAt ?? Number.NaN) - Date.parse(alert.createdAt),
      );
      const invocationMs = newAlerts.map((alert) => {
        const invocation = invocationOf(alert);
        return invocation === undefined ? Number.NaN : invocation.endedAt - invocation.startedAt;
      });
      const runs = sweeps.runs.map((run) => run.woken ?? 0);
      console.log(
        [
          `drain after an outage (AWS-shaped, provider.maxPerSecond ${MAX_PER_SECOND}, bulk lane ${bulkRate}/s; load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after): ${ORDERS} orders + ${WAITING_ALERTS} alerts waiting, all SENT ${drainSeconds.toFixed(1)} s after the circuit closed`,
          `  the rate allows ${ORDERS} ÷ ${bulkRate}/s = ${(ORDERS / bulkRate).toFixed(0)} s for the orders; the sweeper alone, ${OLD_SWEEP_PER_MINUTE} a minute, would take ${(ORDERS / OLD_SWEEP_PER_MINUTE).toFixed(0)} min`,
          `  the first sweep run woke ${runs[0]} in ${(wokenIn / 1_000).toFixed(1)} s (its cold start, the listing and the wakes); ${runs.length} runs in all woke ${runs.join(' + ')}`,
          `  the ${WAITING_ALERTS} waiting alerts all SENT ${((waitingAlertsDone - closedAt) / 1_000).toFixed(1)} s after the close; ${NEW_ALERTS} alerts arriving during the drain: accept-to-SENT p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms (each execution environment kept for the next invocation, as Lambda keeps them)`,
          `    of which accept to the critical mapping's invocation p50 ${percentile(toInvocation, 50)} ms, p99 ${percentile(toInvocation, 99)} ms; the invocation (a new environment's init, the send, the settle) p50 ${percentile(invocationMs, 50)} ms, p99 ${percentile(invocationMs, 99)} ms`,
        ].join('\n'),
      );
    } finally {
      await sweeps.stop();
    }
  });
});
