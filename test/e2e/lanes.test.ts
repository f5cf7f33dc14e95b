import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostWebhook, test, webhookPoster } from '../helpers/fixtures';
import { MAX_MESSAGES_PER_WEBHOOK } from '../../functions/core/defaults';
import {
  cleanEnv,
  eventually,
  readJsonFile,
  records,
  STARTUP_TIMEOUT_MS,
  startRelay,
  stopRelay,
  type RecordJson,
  type RelayProcess,
} from './support';

/**
 * Priority lanes through `npm start` and its own sandbox: 2,000 orders arrive at once (40 webhooks
 * of 50 fan-out items), and while the runtime sends them at the bulk lane's share of
 * `provider.maxPerSecond`, 20 alerts of a `priority: critical` route arrive one after the other.
 * Every alert is SENT while part of the order backlog still waits; each alert's accept-to-SENT is
 * printed (p50, p99, max) beside the orders' rate meanwhile, as measured figures, not asserted times.
 */

const ORDERS = 2_000;
const ALERTS = 20;
/** One alert this often while the backlog drains: the load, not a wait for a state. */
const ALERT_EVERY_MS = 250;
const MAX_PER_SECOND = 100;

let dir: string;
let relay: RelayProcess;
let postWebhook: PostWebhook;

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  writeFileSync(
    join(dir, 'relay.yaml'),
    JSON.stringify({
      provider: { baseUrl: 'http://127.0.0.1:9/unused', maxPerSecond: MAX_PER_SECOND },
      secrets: 'sms-relay/lanes',
      routes: {
        orders: {
          source: 'generic',
          secret: 'generic-token',
          recipients: ['0712345678'],
          fanOut: 'items',
          template: '{{ item }}',
        },
        alerts: {
          source: 'generic',
          secret: 'generic-token',
          recipients: ['0754111222'],
          template: '{{ message }}',
          priority: 'critical',
        },
      },
    }),
  );
  relay = await startRelay(
    cleanEnv({
      PORT: '0',
      RELAY_CONFIG: join(dir, 'relay.yaml'),
      RELAY_DATA_DIR: join(dir, 'data'),
      RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    }),
  );
  postWebhook = webhookPoster({
    url: relay.url,
    configPath: join(dir, 'relay.yaml'),
    secrets: readJsonFile<Record<string, string>>(join(dir, 'secrets.json')),
  });
}, STARTUP_TIMEOUT_MS);

afterAll(async () => {
  if (relay !== undefined) await stopRelay(relay);
});

async function hook(route: string, body: Readonly<Record<string, unknown>>): Promise<void> {
  const answer = await postWebhook(route, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(202);
}

/** p-th percentile, nearest rank. */
const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const sentAt = (record: RecordJson): number => Date.parse(record.updatedAt);

describe('priority lanes in the local runtime', () => {
  it('sends every alert of a critical route while a backlog of 2,000 orders that arrived first still waits', {
    timeout: 300_000,
  }, async () => {
    // The sandbox starts with 10,000 credits (500 SMS at 20): enough for the alerts only while the
    // orders have not spent it first, which a machine that sends faster than it posts does.
    const topUp = await fetch(`${relay.sandboxUrl}/_sandbox/balance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ balance: (ORDERS + ALERTS) * 20 }),
    });
    expect(topUp.status).toBe(200);
    const webhooks = ORDERS / MAX_MESSAGES_PER_WEBHOOK;
    await Promise.all(
      Array.from({ length: webhooks }, async (_, webhook) =>
        hook('orders', {
          items: Array.from({ length: MAX_MESSAGES_PER_WEBHOOK }, (__, item) => `order ${webhook}-${item}`),
        }),
      ),
    );
    // The backlog is being sent when the alerts come.
    await eventually(
      async () => ((await records(relay.url, 'route=orders&state=SENT')).length > 0 ? true : undefined),
      {
        what: 'the first order sent',
      },
    );
    for (let alert = 0; alert < ALERTS; alert += 1) {
      await hook('alerts', { message: `alert ${alert}` });
      // Pacing of input (ALERT_EVERY_MS): alerts arrive while the backlog drains, not all at once.
      await new Promise((resolve) => setTimeout(resolve, ALERT_EVERY_MS));
    }

    const alerts = await eventually(
      async () => {
        const sent = await records(relay.url, 'route=alerts&state=SENT');
        return sent.length === ALERTS ? sent : undefined;
      },
      {
        what: `all ${ALERTS} alerts SENT`,
        timeoutMs: 240_000,
        describe: async () => {
          const waiting = (await records(relay.url, 'route=alerts')).filter((alert) => alert.state !== 'SENT');
          return `alerts not SENT: ${JSON.stringify(waiting)}\nthe relay's last lines:\n${relay.stdout().split('\n').slice(-40).join('\n')}\n${relay.stderr()}`;
        },
      },
    );
    // The ordering fact: with every alert SENT, part of the order backlog (accepted before any
    // alert) still waits.
    const orders = await records(relay.url, 'route=orders');
    const ordersSent = orders.filter((order) => order.state === 'SENT');
    const lastAlert = Math.max(...alerts.map(sentAt));
    expect(ordersSent.length).toBeLessThan(ORDERS);
    expect(orders).toHaveLength(ORDERS);
    expect(Math.min(...alerts.map((alert) => Date.parse(alert.createdAt)))).toBeGreaterThan(
      Math.max(...orders.map((order) => Date.parse(order.createdAt))),
    );

    const latencies = alerts.map((alert) => sentAt(alert) - Date.parse(alert.createdAt));
    const firstOrder = Math.min(...orders.map((order) => Date.parse(order.createdAt)));
    const sentBefore = ordersSent.filter((order) => sentAt(order) <= lastAlert).length;
    const seconds = (lastAlert - firstOrder) / 1_000;
    console.log(
      `lanes (local runtime, provider.maxPerSecond ${MAX_PER_SECOND}): ${ALERTS} alerts accept-to-SENT p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${Math.max(...latencies)} ms; ` +
        `of ${ORDERS} orders accepted at once before them, ${sentBefore} were SENT in the ${seconds.toFixed(1)} s until the last alert went (${(sentBefore / seconds).toFixed(1)} SMS/s), ${ORDERS - ordersSent.length} still waiting after it`,
    );
  });
});
