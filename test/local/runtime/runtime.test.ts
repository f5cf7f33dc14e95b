import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { test } from '../../helpers/fixtures';
import { loadConfigFile } from '../../../functions/core/config/load';
import { ingestWebhook } from '../../../functions/relay/ingest';
import { sendMessage } from '../../../functions/relay/sender';
import { createConsoleAccess } from '../../../local/console/access';
import { openLocalStore, type LocalStore } from '../../../local/shared/local-store';
import { createLocalContext } from '../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../local/runtime/secrets';
import { createSendQueue, type SendQueue } from '../../../local/runtime/send-queue';
import { createRelayServer, type RelayServer, type WebhookReport } from '../../../local/runtime/server';
import { resolveRuntimeSettings } from '../../../local/shared/settings';
import { signWebhook } from '../../../local/runtime/signers';
import { startSandbox } from '../../../local/sandbox/server';
import { Lane } from '../../../functions/core/lanes';
import type { RunningSandbox } from '../../../local/sandbox/types';

const CONFIG = new URL('../../../config/local.yaml', import.meta.url).pathname;
const MAX_BODY_BYTES = 1024;
const OPERATOR_SECRET = 'runtime-test-operator-secret';
/** What `logs` and `redrive` send: the secret of runtime.json. */
const OPERATOR = { authorization: `Bearer ${OPERATOR_SECRET}` } as const;

let dir: string;
let local: LocalStore;
let sandbox: RunningSandbox;
let relay: RelayServer;
let url: string;
let port: number;
let feeder: SendQueue;
let token: string;
const problems: string[] = [];
const reports: WebhookReport[] = [];

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  const settings = resolveRuntimeSettings(
    { config: CONFIG, secrets: join(dir, 'secrets.json'), dataDir: join(dir, 'data') },
    { MAX_BODY_BYTES: String(MAX_BODY_BYTES) },
  );
  const secrets = ensureSecretsFile(settings.secretsPath, loadConfigFile(CONFIG)).values;
  token = secrets['generic-token']!;
  local = await openLocalStore({ dataDir: settings.dataDir, tableName: settings.tableName });
  sandbox = await startSandbox({
    apiKey: secrets['providerApiKey']!,
    senderIds: ['SMSRELAY', 'ALERTS', 'DUKA'],
    defaultSenderId: 'SMSRELAY',
    balance: 1000,
    rate: 1,
  });
  const loaded = loadConfigFile(CONFIG);
  const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const context = createLocalContext({
    loaded,
    store: local.store,
    secretsPath: settings.secretsPath,
    providerBaseUrl: sandbox.baseUrl,
    providerApiKey: secrets['providerApiKey']!,
    logger: silent,
    policy: settings.policy,
  });
  feeder = createSendQueue({
    send: (id) => sendMessage(context, id),
    concurrency: 4,
    onError: (id) => problems.push(`send of ${id} failed`),
  });
  relay = createRelayServer();
  port = await relay.listen(0, '127.0.0.1');
  url = `http://127.0.0.1:${port}`;
  relay.attach({
    maxBodyBytes: settings.maxBodyBytes,
    ingest: async (request) => await ingestWebhook(context, request, { maxBodyBytes: settings.maxBodyBytes }),
    onAccepted: (ids) => feeder.feed(ids, Lane.Bulk),
    onWebhook: (report) => reports.push(report),
    onError: (message) => problems.push(message),
    health: async () => ({ ok: true }),
    store: local.store,
    isOperator: createConsoleAccess({ forwardSecret: OPERATOR_SECRET }).isForwarder,
  });
}, 60_000);

afterAll(async () => {
  await relay?.close();
  // A send still running must finish before its store goes away.
  await feeder?.idle();
  await sandbox?.close();
  await local?.close();
});

async function postNotify(
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const bytes = Buffer.from(body);
  const response = await fetch(`${url}/hooks/notify`, {
    method: 'POST',
    headers: signWebhook('generic', { body: bytes, secret: token, headers }),
    body: bytes,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the local sender, fed by ingest', () => {
  it('sends what ingest accepted, without any sweeper', async () => {
    const answer = await postNotify('{"message":"stream one","phone":"0754111222"}');
    expect(answer.status).toBe(202);
    const [id] = answer.body['ids'] as string[];
    expect(reports.at(-1)).toEqual({ route: 'notify', status: 202, outcome: 'accepted', reason: undefined, ids: [id] });
    await feeder.idle();
    expect(await local.store.getMessage(id!)).toMatchObject({ state: 'SENT', attempts: 1 });
    expect(sandbox.messages().filter((message) => message.message === 'stream one')).toHaveLength(1);
    expect(problems).toEqual([]);
  });

  it('sends nothing more when the same record is delivered again', async () => {
    const answer = await postNotify('{"message":"stream two"}');
    const [id] = answer.body['ids'] as string[];
    await feeder.idle();
    feeder.feed([id!, id!], Lane.Bulk);
    await feeder.idle();
    expect(sandbox.messages().filter((message) => message.message === 'stream two')).toHaveLength(1);
    expect(await local.store.getMessage(id!)).toMatchObject({ state: 'SENT', attempts: 1 });
  });

  it('sends many new records, each once', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 25; index += 1) {
      const answer = await postNotify(`{"message":"batch ${index}"}`);
      ids.push(...(answer.body['ids'] as string[]));
    }
    await feeder.idle();
    const states = await Promise.all(ids.map(async (id) => (await local.store.getMessage(id))?.state));
    expect(states.every((state) => state === 'SENT')).toBe(true);
    expect(sandbox.messages().filter((message) => message.message.startsWith('batch '))).toHaveLength(25);
  });
});

describe('the HTTP layer in front of ingest', () => {
  it('refuses an oversized chunked body while reading it, and records nothing', async () => {
    const before = reports.length;
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        `${url}/hooks/notify`,
        { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      // No content-length: the limit can only be found by counting.
      for (let index = 0; index < 4; index += 1) request.write(`{"message":"${'y'.repeat(400)}"}`);
      request.end();
    });
    expect(status).toBe(413);
    expect(reports.slice(before)).toEqual([
      {
        route: 'notify',
        status: 413,
        outcome: 'error',
        reason: `body exceeds the limit of ${MAX_BODY_BYTES} bytes`,
        ids: [],
      },
    ]);
  });

  it('passes a body of exactly the limit to ingest', async () => {
    const body = JSON.stringify({ message: 'edge', pad: '' });
    const padded = body.replace('"pad":""', `"pad":"${'z'.repeat(MAX_BODY_BYTES - body.length)}"`);
    expect(Buffer.byteLength(padded)).toBe(MAX_BODY_BYTES);
    expect((await postNotify(padded)).status).toBe(202);
  });

  it('keeps the local-only endpoints local and strict', async () => {
    // A DNS-rebound page reaches 127.0.0.1 under its own host name.
    const foreign = await new Promise<number>((resolve, reject) => {
      httpRequest(`${url}/_relay/records`, { headers: { host: `attacker.example:${port}` } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(foreign).toBe(403);
    for (const authorization of [undefined, 'Bearer wrong-secret', OPERATOR_SECRET, `Basic ${OPERATOR_SECRET}`]) {
      const unauthorized = await fetch(
        `${url}/_relay/records`,
        authorization === undefined ? {} : { headers: { authorization } },
      );
      expect({ authorization, status: unauthorized.status }).toEqual({ authorization, status: 401 });
    }
    const plain = await fetch(`${url}/_relay/redrive`, {
      method: 'POST',
      headers: { ...OPERATOR, 'content-type': 'text/plain' },
      body: '{"from":"PARKED","ids":[]}',
    });
    expect(plain.status).toBe(415);
    const bad = await fetch(`${url}/_relay/redrive`, {
      method: 'POST',
      headers: { ...OPERATOR, 'content-type': 'application/json' },
      body: '{"from":"SENT","ids":[]}',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'from: expected one of PARKED, FAILED, HELD, UNKNOWN, got "SENT"' });
    const state = await fetch(`${url}/_relay/records?state=NOPE`, { headers: OPERATOR });
    expect(state.status).toBe(400);
    const listed = (await (
      await fetch(`${url}/_relay/records?route=notify&limit=2`, { headers: OPERATOR })
    ).json()) as { records: { route: string; to: string[] }[] };
    expect(listed.records).toHaveLength(2);
    expect(
      listed.records.every(
        (record) => record.route === 'notify' && record.to.every((to) => /^\d{4}\*{4}\d{3}$/.test(to)),
      ),
    ).toBe(true);
  });
});
