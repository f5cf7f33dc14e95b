import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import { type PostWebhook, webhookPoster } from '../helpers/fixtures';
import {
  eventually,
  fixture,
  records,
  REPO_ROOT,
  runCli,
  startRelay,
  startRelayOn,
  stopRelay,
  type RelayProcess,
} from './support';

/**
 * Money safety through `npm start`, as an attacker or a large customer would try it: the runtime
 * as a child process on a config of its own, the test's own sandbox as the SMS service.
 */

const API_KEY = 'money-safety-provider-key-8d1e';
const RATE = 20;
/** Ten fixed numbers: 200 credits a send at the sandbox's rate. */
const TEN = Array.from({ length: 10 }, (_, index) => `0713${String(100_000 + index)}`);

let dir: string;
let sandbox: RunningSandbox;
let env: NodeJS.ProcessEnv;
let relay: RelayProcess | undefined;
let secrets: Record<string, string>;

function numbers(count: number): string {
  return Array.from({ length: count }, (_, index) => `07${String(10_000_000 + index).padStart(8, '0')}`).join(',');
}

function writeConfig(path: string): void {
  const local = parse(readFileSync(join(REPO_ROOT, 'config/local.yaml'), 'utf8')) as {
    routes: Record<string, Record<string, unknown>>;
  };
  const config = {
    provider: { baseUrl: 'http://127.0.0.1:9', defaultSenderId: 'SMSRELAY' },
    secrets: 'sms-relay/money-safety',
    balance: { threshold: 5_000, reserve: 1_000, notify: ['0712345678'], schedule: 'rate(1 day)' },
    routes: {
      // The example routes, as a user copies them; only the shop's cap is widened to show the default.
      shop: { ...local.routes['shop'], maxRecipients: 10 },
      github: local.routes['github'],
      orders: { ...local.routes['orders'] },
      group: {
        source: 'alertmanager',
        secret: 'alerts-token',
        recipients: ['0712345678'],
        fanOut: 'alerts',
        template: '{{ item.labels.alertname }}',
        priority: 'critical',
      },
      bulk: {
        source: 'generic',
        secret: 'generic-token',
        recipients: ['{{ phones }}'],
        maxRecipients: 9_000,
        delivery: 'at-least-once',
        priority: 'critical',
      },
      capped: {
        source: 'generic',
        secret: 'generic-token',
        recipients: TEN,
        limits: { creditsPerDay: 250 },
        priority: 'critical',
      },
      oncall: { source: 'generic', secret: 'generic-token', recipients: ['0712345678'], priority: 'critical' },
      notify: { source: 'generic', secret: 'generic-token', recipients: ['0754111222'] },
    },
  };
  writeFileSync(path, stringify(config));
}

/** Signed as the route's source signs (the relay restarts on another port: its URL is read at each post). */
let poster: PostWebhook | undefined;
const postWebhook: PostWebhook = async (route, body, options) => {
  poster ??= webhookPoster({ url: () => relay!.url, configPath: join(dir, 'relay.yaml'), secrets });
  return await poster(route, body, options);
};
const generic = (route: string, payload: Readonly<Record<string, unknown>>) =>
  postWebhook(route, payload, { headers: { 'idempotency-key': randomUUID() } });

const messagesOf = (route: string) => records(relay!.url, `route=${route}&limit=1000`);
const inboxTexts = () => sandbox.messages().map((message) => message.message);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-money-'));
  sandbox = await startSandbox({
    apiKey: API_KEY,
    balance: 1_000_000,
    rate: RATE,
    senderIds: ['SMSRELAY', 'DUKA'],
    defaultSenderId: 'SMSRELAY',
  });
  writeConfig(join(dir, 'relay.yaml'));
  ({ relay, env, secrets } = await startRelayOn(dir, { providerUrl: sandbox.baseUrl, apiKey: API_KEY }));
}, 120_000);

afterAll(async () => {
  if (relay !== undefined) await stopRelay(relay, 'SIGKILL');
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('money safety through npm start', () => {
  it('1: a WooCommerce order with 200 numbers in billing.phone is recorded DROPPED, never sent', async () => {
    const order = JSON.parse(fixture('woocommerce/order-created.json').toString('utf8')) as {
      billing: { phone: string };
    };
    order.billing.phone = numbers(200);
    const answer = await postWebhook('shop', order, {
      headers: {
        'x-wc-webhook-topic': 'order.created',
        'x-wc-webhook-resource': 'order',
        'x-wc-webhook-event': 'created',
        'x-wc-webhook-source': 'https://duka.example.co.tz/',
      },
    });

    expect(answer).toMatchObject({
      status: 200,
      body: { status: 'dropped', reason: '201 recipients, more than maxRecipients (10)' },
    });
    expect(await messagesOf('shop')).toEqual([
      expect.objectContaining({ state: 'DROPPED', reason: '201 recipients, more than maxRecipients (10)' }),
    ]);
    expect(sandbox.messages()).toHaveLength(0);
  }, 60_000);

  it('4: an Alertmanager group of 60 alerts sends 50 SMS and records the 10 left out', async () => {
    const group = JSON.parse(fixture('alertmanager/firing-single.json').toString('utf8')) as {
      alerts: { labels: Record<string, string>; fingerprint: string }[];
    };
    const [alert] = group.alerts;
    group.alerts = Array.from({ length: 60 }, (_, index) => ({
      ...alert!,
      fingerprint: `fp-${index}`,
      labels: { ...alert!.labels, alertname: `Alert${index}` },
    }));
    const answer = await postWebhook('group', group);

    expect(answer.status).toBe(202);
    expect(answer.body['ids']).toHaveLength(50);
    expect(answer.body['notSent']).toEqual({
      items: 10,
      reason: '10 items not sent: beyond the cap of 50 SMS per webhook',
      id: expect.any(String),
    });
    await eventually(
      async () =>
        (await messagesOf('group')).filter((record) => record.state === 'SENT').length === 50 ? true : undefined,
      { what: '50 SENT' },
    );
    expect((await messagesOf('group')).filter((record) => record.state === 'DROPPED')).toEqual([
      expect.objectContaining({
        id: (answer.body['notSent'] as { id: string }).id,
        reason: '10 items not sent: beyond the cap of 50 SMS per webhook',
      }),
    ]);
    expect(inboxTexts().filter((text) => text.startsWith('Alert'))).toHaveLength(50);
  }, 120_000);

  it('5: a captured GitHub or Shopify delivery replayed under a fresh delivery id sends nothing', async () => {
    const push = fixture('github/push.json');
    const githubHeaders = (delivery: string) => ({
      headers: { 'x-github-event': 'push', 'x-github-delivery': delivery },
    });
    const first = await postWebhook('github', push, githubHeaders(randomUUID()));
    const replay = await postWebhook('github', push, githubHeaders(randomUUID()));
    expect(first.status).toBe(202);
    expect([replay.status, replay.body]).toEqual([200, { status: 'duplicate', ids: first.body['ids'] }]);

    const order = fixture('shopify/orders-create.json');
    const shopifyHeaders = (id: string) => ({
      headers: { 'x-shopify-topic': 'orders/create', 'x-shopify-webhook-id': id, 'x-shopify-event-id': id },
    });
    const placed = await postWebhook('orders', order, shopifyHeaders(randomUUID()));
    const replayed = await postWebhook('orders', order, shopifyHeaders(randomUUID()));
    expect(placed.status).toBe(202);
    expect([replayed.status, replayed.body]).toEqual([200, { status: 'duplicate', ids: placed.body['ids'] }]);
    expect(await messagesOf('github')).toHaveLength(1);
    expect(await messagesOf('orders')).toHaveLength(1);
  }, 60_000);

  it('6: a payload that can never render is answered 200 dropped and recorded, not 503', async () => {
    const deep = `{"message":${'['.repeat(60_000)}${']'.repeat(60_000)}}`;
    const answer = await postWebhook('notify', Buffer.from(deep));
    expect(answer).toMatchObject({
      status: 200,
      body: { status: 'dropped', reason: 'the payload cannot be read: JSON nested deeper than 64 levels' },
    });
    expect(await messagesOf('notify')).toEqual([expect.objectContaining({ state: 'DROPPED' })]);
  }, 60_000);

  it('3: a send to 9,000 numbers ends SENT once on an at-least-once route, its credits counted', async () => {
    const answer = await generic('bulk', { message: 'Shop closed today', phones: numbers(9_000) });
    expect(answer.status).toBe(202);
    const [id] = answer.body['ids'] as string[];
    const sent = await eventually(
      async () => (await messagesOf('bulk')).find((record) => record.id === id && record.state === 'SENT'),
      { what: 'bulk SENT' },
    );
    expect(sent.deducted).toBe(9_000 * RATE);
    // "Nothing more happens": a second send would come from a later sweep (one a second), so three
    // sweeps are given; no state marks a send that did not happen.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(sandbox.messages().filter((message) => message.message === 'Shop closed today')).toHaveLength(1);
    expect((await messagesOf('bulk')).map((record) => record.state)).toEqual(['SENT']);
  }, 120_000);

  it('2: limits.creditsPerDay holds from the first send after a restart', async () => {
    expect((await generic('capped', { message: 'capped one' })).status).toBe(202);
    await eventually(
      async () => ((await messagesOf('capped')).some((record) => record.state === 'SENT') ? true : undefined),
      { what: 'first capped SENT' },
    );

    await stopRelay(relay!, 'SIGKILL');
    relay = await startRelay(env);

    // 200 credits spent of 250: the next 200 do not fit, in this fresh process too.
    expect((await generic('capped', { message: 'capped two' })).status).toBe(202);
    const held = await eventually(async () => (await messagesOf('capped')).find((record) => record.state === 'HELD'), {
      what: 'second capped HELD',
    });
    expect(held.reason).toBe('route limit: more than 250 credits per day');
    expect(inboxTexts().filter((text) => text.startsWith('capped'))).toEqual(['capped one']);
  }, 180_000);

  it('7: a low-balance notice parked by a 402 is dropped as stale when redriven after the top-up', async () => {
    sandbox.setBalance(0);
    expect((await generic('oncall', { message: 'Disk full on db-01' })).status).toBe(202);
    const notice = await eventually(
      async () =>
        (await records(relay!.url, 'route=_relay&state=PARKED')).find((record) =>
          record.reason?.startsWith('insufficient balance'),
        ),
      { what: 'the low-balance notice PARKED' },
    );
    await eventually(
      async () => ((await messagesOf('oncall')).some((record) => record.state === 'PARKED') ? true : undefined),
      { what: 'oncall PARKED' },
    );

    sandbox.setBalance(100_000);
    const redrive = await runCli(['redrive', '--state', 'PARKED'], env);
    expect(redrive.code, redrive.stderr).toBe(0);

    await eventually(
      async () => ((await messagesOf('oncall')).some((record) => record.state === 'SENT') ? true : undefined),
      { what: 'oncall SENT after the redrive' },
    );
    const stale = await eventually(
      async () =>
        (await records(relay!.url, 'route=_relay')).find(
          (record) => record.id === notice.id && record.state === 'DROPPED',
        ),
      { what: 'notice DROPPED' },
    );
    expect(stale.reason).toMatch(/^stale: the balance is back at \d+, not below the threshold of 5000$/);
    expect(inboxTexts().filter((text) => text.startsWith('sms-relay: SMS balance'))).toEqual([]);
  }, 180_000);

  it('reserve: a normal route parks at the reserve while a critical one still sends; a redrive after a top-up sends it once', async () => {
    // 1,030 left: one 20-credit SMS leaves 1,010, the next would leave 990, below the reserve of 1,000.
    sandbox.setBalance(1_030);
    expect((await generic('notify', { message: 'order one' })).status).toBe(202);
    await eventually(
      async () => ((await messagesOf('notify')).some((record) => record.state === 'SENT') ? true : undefined),
      { what: 'order one SENT' },
    );
    expect((await generic('notify', { message: 'order two' })).status).toBe(202);
    const parked = await eventually(
      async () => (await messagesOf('notify')).find((record) => record.state === 'PARKED'),
      { what: 'order two PARKED' },
    );
    expect(parked.reason).toMatch(
      /^balance reserve: 20 credits would leave \d+, below the reserve of 1000 kept for critical routes/,
    );
    expect((await generic('oncall', { message: 'Payment gateway down' })).status).toBe(202);
    await eventually(async () => (inboxTexts().includes('Payment gateway down') ? true : undefined), {
      what: 'the critical SMS sent',
    });
    expect(inboxTexts()).not.toContain('order two');

    sandbox.setBalance(50_000);
    const balance = await runCli(['balance'], env);
    expect(balance.code, balance.stderr).toBe(0);
    // The balance watch reads it on its schedule; a send's answer or this top-up's read updates it.
    await generic('oncall', { message: 'after top-up' });
    await eventually(async () => (inboxTexts().includes('after top-up') ? true : undefined), {
      what: 'a send after the top-up',
    });
    const redrive = await runCli(['redrive', '--state', 'PARKED', '--route', 'notify'], env);
    expect(redrive.code, redrive.stderr).toBe(0);
    await eventually(
      async () =>
        (await messagesOf('notify')).find((record) => record.id === parked.id)?.state === 'SENT' ? true : undefined,
      { what: 'order two SENT' },
    );
    // "Nothing more happens": a second send of the redriven record would come within a sweep or two
    // (one a second); no state marks a send that did not happen.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(inboxTexts().filter((text) => text === 'order two')).toHaveLength(1);
  }, 180_000);
});
