import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import {
  eventually,
  fixture,
  records,
  REPO_ROOT,
  runCli,
  startRelayOn,
  stopRelay,
  type RecordJson,
  type RelayProcess,
} from './support';

/**
 * Credit and replays through `npm start`: the reserve under a burst of concurrent webhooks,
 * a redrive after a top-up made in the service's dashboard, and replays under fresh delivery ids
 * followed by genuine deliveries carrying those ids. The runtime runs as a child process on a config
 * of its own, with the test's own sandbox as the SMS service.
 */

const API_KEY = 'credit-replay-provider-key-51c7';
const RATE = 20;

let dir: string;
let sandbox: RunningSandbox;
let env: NodeJS.ProcessEnv;
let relay: RelayProcess | undefined;
let secrets: Record<string, string>;

function writeConfig(path: string): void {
  const local = parse(readFileSync(join(REPO_ROOT, 'config/local.yaml'), 'utf8')) as {
    routes: Record<string, Record<string, unknown>>;
  };
  const config = {
    provider: { baseUrl: 'http://127.0.0.1:9', defaultSenderId: 'SMSRELAY' },
    secrets: 'sms-relay/credit-replay',
    balance: { threshold: 210, reserve: 200, schedule: 'rate(1 day)' },
    routes: {
      shop: { source: 'generic', secret: 'generic-token', recipients: ['0754111222'] },
      pager: { source: 'generic', secret: 'generic-token', recipients: ['0712345678'], priority: 'critical' },
      payments: {
        source: 'hmac',
        secret: 'payments-secret',
        recipients: ['0754111222'],
        template: 'Payment {{ data.reference }}',
        signature: { header: 'x-paystack-signature', algorithm: 'sha512' },
        dedupe: { header: 'x-paystack-seq' },
      },
      github: local.routes['github'],
    },
  };
  writeFileSync(path, stringify(config));
}

async function postRaw(
  route: string,
  body: string | Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${relay!.url}/hooks/${route}`, { method: 'POST', headers, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const generic = (route: string, message: string) =>
  postRaw(route, JSON.stringify({ message }), {
    authorization: `Bearer ${secrets['generic-token']}`,
    'content-type': 'application/json',
    'idempotency-key': randomUUID(),
  });

const routeRecords = (route: string) => records(relay!.url, `route=${route}&limit=1000`);
const inboxTexts = () => sandbox.messages().map((message) => message.message);
const balanceReads = () => sandbox.requests().filter((request) => request.path === '/v1/account/balance').length;

/** Waits until every record of `route` is in one of `states`, and returns them. */
async function settled(route: string, count: number, states: readonly string[], what: string): Promise<RecordJson[]> {
  return await eventually(
    async () => {
      const found = await routeRecords(route);
      return found.length === count && found.every((record) => states.includes(record.state)) ? found : undefined;
    },
    { what, timeoutMs: 120_000 },
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-credit-'));
  // The numbers: 400 credits, a reserve of 200, 20 per SMS.
  sandbox = await startSandbox({
    apiKey: API_KEY,
    balance: 400,
    rate: RATE,
    senderIds: ['SMSRELAY'],
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

describe('the reserve, a redrive after a top-up and replays, through npm start', () => {
  it('3: 30 concurrent webhooks on a normal route with 400 credits, a reserve of 200 and 20 per SMS send at most 10 and park the rest; a critical route still sends', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, n) => generic('shop', `order ${n}`)));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 30 }, () => 202));

    const shop = await settled('shop', 30, ['SENT', 'PARKED'], 'every order SENT or PARKED');
    const sent = shop.filter((record) => record.state === 'SENT');
    const parked = shop.filter((record) => record.state === 'PARKED');
    process.stdout.write(
      `reserve burst: ${sent.length} SENT, ${parked.length} PARKED, sandbox balance ${sandbox.balance()}\n`,
    );
    expect(sent.length).toBeLessThanOrEqual(10);
    expect(sent.length).toBeGreaterThan(0);
    expect(parked).toHaveLength(30 - sent.length);
    for (const record of parked)
      expect(record.reason).toMatch(
        /^balance reserve: 20 credits would leave \d+, below the reserve of 200 kept for critical routes/,
      );
    expect(sandbox.balance()).toBeGreaterThanOrEqual(200);

    expect((await generic('pager', 'Payment gateway down')).status).toBe(202);
    await eventually(async () => (inboxTexts().includes('Payment gateway down') ? true : undefined), {
      what: 'the critical SMS sent',
    });
  }, 180_000);

  it('4: after a top-up in the dashboard, redrive --state PARKED reads the balance once and sends every parked order once', async () => {
    const parkedBefore = (await routeRecords('shop')).filter((record) => record.state === 'PARKED');
    expect(parkedBefore.length).toBeGreaterThan(0);
    sandbox.setBalance(10_000); // the relay is not told
    const readsBefore = balanceReads();

    const redrive = await runCli(['redrive', '--state', 'PARKED'], env);
    expect(redrive.code, redrive.stderr).toBe(0);

    await settled('shop', 30, ['SENT'], 'every order SENT after the redrive');
    const orders = inboxTexts().filter((text) => text.startsWith('order '));
    expect(orders).toHaveLength(30);
    expect(new Set(orders).size).toBe(30);
    // One read for the redrive (the sends of one process share it), not one per message.
    expect(balanceReads() - readsBefore).toBe(1);
  }, 180_000);

  it('1: an hmac route with dedupe.header: a replay of seq 100 as 101-103 is a duplicate, and new payments 101-103 are accepted and sent', async () => {
    const sign = (body: string) => createHmac('sha512', secrets['payments-secret']!).update(body).digest('hex');
    const payment = (reference: string, seq: number) => {
      const body = JSON.stringify({ event: 'charge.success', data: { reference } });
      return {
        body,
        headers: {
          'content-type': 'application/json',
          'x-paystack-signature': sign(body),
          'x-paystack-seq': String(seq),
        },
      };
    };
    const genuine = payment('PAY-100', 100);
    const first = await postRaw('payments', genuine.body, genuine.headers);
    expect(first.status).toBe(202);
    for (const seq of [101, 102, 103]) {
      expect(await postRaw('payments', genuine.body, { ...genuine.headers, 'x-paystack-seq': String(seq) })).toEqual({
        status: 200,
        body: { status: 'duplicate', ids: first.body['ids'] },
      });
    }
    for (const seq of [101, 102, 103]) {
      const next = payment(`PAY-${seq}`, seq);
      const answer = await postRaw('payments', next.body, next.headers);
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    }
    await settled('payments', 4, ['SENT'], 'four payments SENT');
    for (const reference of ['PAY-100', 'PAY-101', 'PAY-102', 'PAY-103'])
      expect(inboxTexts().filter((text) => text === `Payment ${reference}`)).toHaveLength(1);
  }, 120_000);

  it('1: GitHub: delivery A replayed as id B is a duplicate, and a new push with id B is accepted and sent', async () => {
    const push = fixture('github/push.json');
    const other = Buffer.from(
      JSON.stringify({ ...(JSON.parse(push.toString('utf8')) as Record<string, unknown>), after: 'f'.repeat(40) }),
    );
    const headers = (body: Buffer, delivery: string) => ({
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': delivery,
      'x-hub-signature-256': `sha256=${createHmac('sha256', secrets['github-secret']!).update(body).digest('hex')}`,
    });
    const a = randomUUID();
    const b = randomUUID();
    const first = await postRaw('github', push, headers(push, a));
    expect(first.status).toBe(202);
    expect(await postRaw('github', push, headers(push, b))).toEqual({
      status: 200,
      body: { status: 'duplicate', ids: first.body['ids'] },
    });
    const genuine = await postRaw('github', other, headers(other, b));
    expect(genuine.status, JSON.stringify(genuine.body)).toBe(202);
    await settled('github', 2, ['SENT'], 'both pushes SENT');
  }, 120_000);
});
