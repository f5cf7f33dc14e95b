import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import { webhookPoster } from '../helpers/fixtures';
import {
  cleanEnv,
  eventually,
  readJsonFile,
  records,
  runCli,
  spawnCli,
  startRelay,
  stopRelay,
  type RecordJson,
  type RelayProcess,
} from './support';

/**
 * Credit safety (limits, the reserve and parking) through `npm start` with the test's own sandbox as the SMS
 * service (it outlives a `kill -9` of the relay, so its inbox shows what was really sent).
 */

const API_KEY = 'credit-safety-provider-key-3f9a';
const RATE = 20;
const NOTIFY = '0712345678';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function sandboxWith(balance: number): Promise<RunningSandbox> {
  const sandbox = await startSandbox({
    apiKey: API_KEY,
    balance,
    rate: RATE,
    senderIds: ['SMSRELAY'],
    defaultSenderId: 'SMSRELAY',
  });
  cleanups.push(() => sandbox.close());
  return sandbox;
}

/** A directory with `relay.yaml` holding `config` (the provider and secrets name added), and the runtime's environment on it. */
function relayDir(label: string, providerUrl: string, config: Record<string, unknown>): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), `sms-relay-credit-${label}-`));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'relay.yaml'),
    stringify({
      provider: { baseUrl: 'http://127.0.0.1:9', defaultSenderId: 'SMSRELAY' },
      secrets: `sms-relay/credit-${label}`,
      ...config,
    }),
  );
  return cleanEnv({
    PORT: '0',
    RELAY_CONFIG: join(dir, 'relay.yaml'),
    RELAY_DATA_DIR: join(dir, 'data'),
    RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    PROVIDER_BASE_URL: providerUrl,
    PROVIDER_API_KEY: API_KEY,
  });
}

async function start(env: NodeJS.ProcessEnv): Promise<RelayProcess> {
  const relay = await startRelay(env);
  cleanups.push(async () => void (await stopRelay(relay, 'SIGKILL')));
  return relay;
}

function poster(relay: RelayProcess, env: NodeJS.ProcessEnv): (route: string, message: string) => Promise<number> {
  const postWebhook = webhookPoster({
    url: relay.url,
    configPath: env['RELAY_CONFIG']!,
    secrets: readJsonFile<Record<string, string>>(env['RELAY_SECRETS_FILE']!),
  });
  return async (route, message) =>
    (await postWebhook(route, { message }, { headers: { 'idempotency-key': randomUUID() } })).status;
}

/** The records of the route's own messages (to 255754111222), not its notices (to `NOTIFY`). */
const ORDERS_TO = '2557****222';

/** Waits until `route` has `count` records (of those `which` keeps), all in one of `states`. */
async function settled(
  relay: RelayProcess,
  route: string,
  count: number,
  states: readonly string[],
  what: string,
  which: (record: RecordJson) => boolean = () => true,
): Promise<RecordJson[]> {
  return await eventually(
    async () => {
      const found = (await records(relay.url, `route=${route}&limit=1000`)).filter(which);
      return found.length === count && found.every((record) => states.includes(record.state)) ? found : undefined;
    },
    { what, timeoutMs: 60_000 },
  );
}

const LOW_BALANCE = 'sms-relay: SMS balance is';
const lowBalanceTexts = (sandbox: RunningSandbox) =>
  sandbox
    .messages()
    .map((message) => message.message)
    .filter((text) => text.startsWith(LOW_BALANCE));

describe('1: the low-balance SMS survives a kill -9 of the relay', () => {
  const config = {
    balance: { threshold: 5_000, notify: [NOTIFY], schedule: 'rate(1 day)' },
    routes: { notify: { source: 'generic', secret: 'generic-token', recipients: ['0754111222'] } },
  };

  /** Runs the relay until it kills itself at `crashAt`, then restarts it on the same data dir and waits for its first balance read. */
  async function crashThenRestart(
    label: string,
    crashAt: string,
  ): Promise<{ sandbox: RunningSandbox; relay: RelayProcess }> {
    const sandbox = await sandboxWith(1_000);
    const env = relayDir(label, sandbox.baseUrl, config);
    // The balance watch reads 1,000 at start, below the threshold of 5,000: the crash point comes in the first second.
    const crashed = spawnCli(['start'], { ...env, RELAY_CRASH_AT: crashAt });
    cleanups.push(async () => void (await stopRelay(crashed, 'SIGKILL')));
    expect(await crashed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const relay = await start(env);
    await relay.waitFor(/balance\s+1000 TZS\s+\(alert below 5000\)/);
    return { sandbox, relay };
  }

  it('killed the moment armed=false is stored: after the restart the SMS arrives', async () => {
    const { sandbox, relay } = await crashThenRestart('disarmed', 'balance-disarmed');
    const [text] = await eventually(
      async () => (lowBalanceTexts(sandbox).length > 0 ? lowBalanceTexts(sandbox) : undefined),
      { what: 'the low-balance SMS after the restart', timeoutMs: 30_000 },
    );
    expect(text).toBe(
      'sms-relay: SMS balance is TZS 1,000, below the threshold of 5,000. Too little spend seen to forecast how long it lasts. Top up soon.',
    );
    const notices = await settled(relay, '_relay', 1, ['SENT'], 'one notice SENT');
    expect(notices).toHaveLength(1);
    expect(lowBalanceTexts(sandbox)).toHaveLength(1);
  }, 180_000);

  it('killed after the notice is recorded and before the disarm: one SMS, not two', async () => {
    const { sandbox, relay } = await crashThenRestart('recorded', 'low-balance-recorded');
    // The restart's balance read observed the crossing again (the line waited for): it found the notice recorded.
    await settled(relay, '_relay', 1, ['SENT'], 'the one notice SENT');
    expect(lowBalanceTexts(sandbox)).toHaveLength(1);
  }, 180_000);
});

/**
 * A front for the sandbox that holds the sends whose text starts with `held` until `release()`:
 * those SMS are in flight, as long as the test needs, while others go on.
 */
async function holdingFront(
  target: string,
  held: string,
): Promise<{ baseUrl: string; holding(): number; release(): void }> {
  const upstream = new URL(target);
  const waiting: (() => void)[] = [];
  let released = false;
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = (): void => {
        const forwarded = httpRequest(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: incoming.method,
            path: incoming.url,
            headers: incoming.headers,
          },
          (answer) => {
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outgoing);
          },
        );
        forwarded.on('error', () => outgoing.destroy());
        forwarded.end(body);
      };
      const text =
        body.length === 0 ? '' : String((JSON.parse(body.toString('utf8')) as { message?: unknown }).message ?? '');
      if (!released && incoming.url === '/v1/sms/send' && text.startsWith(held)) waiting.push(forward);
      else forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holding: () => waiting.length,
    release: () => {
      released = true;
      for (const forward of waiting.splice(0)) forward();
    },
  };
}

describe('2: balance.reserve on a fresh store that knows no price yet', () => {
  it('400 credits, a reserve of 200, 20 per SMS: 5 critical SMS in flight, then 30 normal webhooks at once → 5 orders sent, 200 left', async () => {
    const sandbox = await sandboxWith(400);
    const front = await holdingFront(sandbox.baseUrl, 'pager');
    const env = relayDir('fresh', front.baseUrl, {
      provider: { baseUrl: 'http://127.0.0.1:9', defaultSenderId: 'SMSRELAY', timeoutMs: 60_000 },
      balance: { threshold: 210, reserve: 200, schedule: 'rate(1 day)' },
      routes: {
        shop: { source: 'generic', secret: 'generic-token', recipients: ['0754111222'] },
        pager: { source: 'generic', secret: 'generic-token', recipients: [NOTIFY], priority: 'critical' },
      },
    });
    const relay = await start(env);
    const post = poster(relay, env);

    // The critical SMS reach the service and wait there: in flight while the orders decide.
    expect(await Promise.all(Array.from({ length: 5 }, (_, n) => post('pager', `pager ${n}`)))).toEqual([
      202, 202, 202, 202, 202,
    ]);
    await eventually(async () => (front.holding() === 5 ? true : undefined), {
      what: 'the 5 critical sends in flight',
    });
    expect(await Promise.all(Array.from({ length: 30 }, (_, n) => post('shop', `order ${n}`)))).toEqual(
      Array.from({ length: 30 }, () => 202),
    );
    const shop = await settled(relay, 'shop', 30, ['SENT', 'PARKED'], 'every order SENT or PARKED');
    front.release();
    await settled(relay, 'pager', 5, ['SENT'], 'the 5 critical SMS SENT');

    const sent = shop.filter((record) => record.state === 'SENT').length;
    process.stdout.write(
      `fresh-store race: ${sent} orders SENT, ${30 - sent} PARKED, 5 critical SENT, sandbox balance ${sandbox.balance()}\n`,
    );
    expect(sandbox.balance()).toBe(200);
    expect(sent).toBe(5);
  }, 180_000);
});

describe("4: a normal route's own notices are not parked by the reserve", () => {
  it('balance 530, reserve 500: the 80 % budget warning of a normal route is sent while credit is there', async () => {
    const sandbox = await sandboxWith(530);
    const env = relayDir('notice', sandbox.baseUrl, {
      balance: { threshold: 501, reserve: 500, notify: [NOTIFY], schedule: 'rate(1 day)' },
      routes: {
        orders: {
          source: 'generic',
          secret: 'generic-token',
          recipients: ['0754111222'],
          limits: { creditsPerMonth: 25 },
          timeZone: 'UTC',
        },
      },
    });
    const relay = await start(env);
    const post = poster(relay, env);

    // 20 of 25 credits: the order's reservation records the 80 % warning, a notice of route orders.
    expect(await post('orders', 'order 1')).toBe(202);
    const [order, warning] = await settled(
      relay,
      'orders',
      2,
      ['SENT', 'PARKED'],
      'the order and its warning settled',
    ).then(
      (found) =>
        [
          found.find((record) => record.to[0] === ORDERS_TO),
          found.find((record) => record.to[0] !== ORDERS_TO),
        ] as const,
    );
    expect(order?.state).toBe('SENT');
    expect(warning).toMatchObject({ state: 'SENT', reason: null });
    expect(sandbox.messages().map((message) => message.message)).toContain(
      `sms-relay: route 'orders' has used 20 of its 25 credits for ${new Date().toISOString().slice(0, 7)} (80 %); past 25 its messages are held until the month ends.`,
    );
    expect(relay.stdout()).not.toMatch(/PARKED/);
  }, 180_000);
});

describe('5: limits.creditsPerMonth counts only sends that went out', () => {
  it('100 credits a month, balance 20: 1 sent, 4 parked by 402; after a top-up and redrive all 4 are sent', async () => {
    const isOrder = (record: RecordJson) => record.to[0] === ORDERS_TO;
    const sandbox = await sandboxWith(RATE);
    const env = relayDir('budget', sandbox.baseUrl, {
      balance: { threshold: 0, notify: [NOTIFY], schedule: 'rate(1 day)' },
      routes: {
        orders: {
          source: 'generic',
          secret: 'generic-token',
          recipients: ['0754111222'],
          limits: { creditsPerMonth: 100 },
          timeZone: 'UTC',
        },
      },
    });
    const relay = await start(env);
    const post = poster(relay, env);

    for (const n of [1, 2, 3, 4, 5]) {
      expect(await post('orders', `order ${n}`)).toBe(202);
      await settled(relay, 'orders', n, ['SENT', 'PARKED'], `order ${n} settled`, isOrder);
    }
    const before = (await records(relay.url, 'route=orders&limit=1000')).filter(isOrder);
    expect(before.map((record) => record.state).sort()).toEqual(['PARKED', 'PARKED', 'PARKED', 'PARKED', 'SENT']);
    // 20 of 100 credits went out: no 80 % warning yet.
    const noticesBefore = (await records(relay.url, 'route=orders&limit=1000')).filter((record) => !isOrder(record));
    const warnings = () =>
      sandbox
        .messages()
        .filter((message) => message.message.startsWith("sms-relay: route 'orders'"))
        .map((message) => message.message);

    sandbox.setBalance(10_000);
    const redrive = await runCli(['redrive', '--state', 'PARKED'], env);
    expect(redrive.code, redrive.stderr).toBe(0);
    const after = await settled(
      relay,
      'orders',
      5,
      ['SENT', 'HELD'],
      'every order SENT or HELD after the redrive',
      isOrder,
    );
    process.stdout.write(
      `monthly budget after the redrive: ${after.map((record) => `${record.state}${record.reason === null ? '' : ` (${record.reason})`}`).join(', ')}\n`,
    );
    expect(after.map((record) => record.state)).toEqual(['SENT', 'SENT', 'SENT', 'SENT', 'SENT']);
    // The warning (recorded under the route, sent to balance.notify) comes at 80 credits actually taken, once.
    await eventually(async () => (warnings().length === 1 ? true : undefined), { what: 'the 80 % warning sent' });
    expect(noticesBefore).toEqual([]);
    // Two sends passing 80 % together may both record it; the one recorded first (80 or 100) is the one kept.
    expect(warnings()).toEqual([
      expect.stringMatching(
        /^sms-relay: route 'orders' has used (80|100) of its 100 credits for \d{4}-\d\d \((80|100) %\)/,
      ),
    ]);
    expect(
      sandbox
        .messages()
        .filter((message) => message.message.startsWith('order '))
        .map((message) => message.message)
        .sort(),
    ).toEqual(['order 1', 'order 2', 'order 3', 'order 4', 'order 5']);
  }, 180_000);
});
