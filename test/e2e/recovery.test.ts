import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import { webhookPoster } from '../helpers/fixtures';
import { waitUntil } from '../helpers/wait';
import {
  cleanEnv,
  readJsonFile,
  records,
  runCli,
  startRelay,
  stopRelay,
  type RecordJson,
  type RelayProcess,
} from './support';

/**
 * Recovery through `npm start`: a backlog left by a kill -9 (records PENDING, some SENDING)
 * is sent after one clean start while a user polls `sms-relay logs --json --route` every 1.5 s.
 * Every record must reach a final state within 60 s of the start: the recovery hands every due
 * record to the send queue, and the listings never hold sending up.
 */

const API_KEY = 'recovery-test-provider-key-81c2';
const WEBHOOKS = 500;
const FINAL = new Set(['SENT', 'FAILED', 'UNKNOWN', 'PARKED', 'HELD', 'DROPPED']);
/** What the issue promises after a clean start, polled state by state (not a speed measurement). */
const RECOVERY_BOUND_MS = 60_000;
const POLL_EVERY_MS = 1_500;

let dir: string;
let sandbox: RunningSandbox;
let blackHole: Server;
const held = new Set<Socket>();
let env: Record<string, string>;
let relay: RelayProcess | undefined;
const accepted: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-recovery-'));
  sandbox = await startSandbox({ apiKey: API_KEY, balance: 1_000_000, rate: 1, senderIds: ['SANDBOX'] });
  // An SMS service that takes the request and never answers: sends hang until the kill.
  blackHole = createServer((socket) => {
    held.add(socket);
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
  const route = (delivery: string): Record<string, unknown> => ({
    source: 'generic',
    secret: 'generic-token',
    recipients: ['0712345678'],
    template: '{{ tag }}',
    delivery,
  });
  writeFileSync(
    join(dir, 'relay.yaml'),
    JSON.stringify({
      provider: { baseUrl: 'http://127.0.0.1:9/unused', timeoutMs: 1_500 },
      secrets: 'sms-relay/recovery',
      routes: { alo: route('at-least-once'), amo: route('at-most-once') },
    }),
  );
  env = {
    PORT: '0',
    RELAY_CONFIG: join(dir, 'relay.yaml'),
    RELAY_DATA_DIR: join(dir, 'data'),
    RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    PROVIDER_API_KEY: API_KEY,
    RETRY_BASE_DELAY_MS: '200',
    STALE_SENDING_MS: '4000',
  };
});

afterAll(async () => {
  if (relay !== undefined) await stopRelay(relay, 'SIGKILL');
  for (const socket of held) socket.destroy();
  await new Promise<void>((resolve) => blackHole?.close(() => resolve()));
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('recovery after a kill -9, while logs is polling', () => {
  it('accepts a burst while the SMS service hangs, then dies with kill -9', async () => {
    const { port } = blackHole.address() as { port: number };
    relay = await startRelay(cleanEnv({ ...env, PROVIDER_BASE_URL: `http://127.0.0.1:${port}` }));
    const postWebhook = webhookPoster({
      url: relay.url,
      configPath: join(dir, 'relay.yaml'),
      secrets: readJsonFile<Record<string, string>>(join(dir, 'secrets.json')),
    });
    for (let start = 0; start < WEBHOOKS; start += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, WEBHOOKS - start) }, async (_, offset) => {
          const index = start + offset;
          const { status, body } = await postWebhook(
            index % 2 === 0 ? 'alo' : 'amo',
            { tag: `recovery ${index}` },
            { headers: { 'idempotency-key': randomUUID() } },
          );
          expect(status, JSON.stringify(body)).toBe(202);
          accepted.push(...((body['ids'] as string[] | undefined) ?? []));
        }),
      );
    }
    expect(accepted).toHaveLength(WEBHOOKS);
    expect((await stopRelay(relay, 'SIGKILL')).signal).toBe('SIGKILL');
    relay = undefined;
    expect(sandbox.messages()).toHaveLength(0);
  }, 240_000);

  it('ends every accepted record final within 60 s of a clean start, with logs --json --route polling every 1.5 s', async () => {
    relay = await startRelay(cleanEnv({ ...env, PROVIDER_BASE_URL: sandbox.baseUrl }));
    const started = Date.now();
    let polling = true;
    let polls = 0;
    const poller = (async () => {
      for (let turn = 0; polling; turn += 1) {
        const began = Date.now();
        const listed = await runCli(['logs', '--json', '--route', turn % 2 === 0 ? 'alo' : 'amo'], cleanEnv(env));
        expect(listed.code, listed.stderr).toBe(0);
        polls += 1;
        // Pacing of input: the user polling every 1.5 s is the load under which recovery must hold.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, POLL_EVERY_MS - (Date.now() - began))));
      }
    })();
    let latest = new Map<string, RecordJson>();
    const open = (): string[] => accepted.filter((id) => !FINAL.has(latest.get(id)?.state ?? 'MISSING'));
    const running = relay;
    try {
      // Past the bound the wait ends without a throw: the assertion below says what was left open.
      await waitUntil(
        'every accepted record final',
        async () => {
          latest = new Map(
            [
              ...(await records(running.url, 'route=alo&limit=100000')),
              ...(await records(running.url, 'route=amo&limit=100000')),
            ].map((record) => [record.id, record]),
          );
          return open().length === 0;
        },
        { timeoutMs: Math.max(0, RECOVERY_BOUND_MS - (Date.now() - started)), intervalMs: 1_000 },
      ).catch(() => undefined);
    } finally {
      polling = false;
      await poller;
    }
    const counts: Record<string, number> = {};
    for (const id of open())
      counts[latest.get(id)?.state ?? 'MISSING'] = (counts[latest.get(id)?.state ?? 'MISSING'] ?? 0) + 1;
    expect(
      open(),
      `${open().length} of ${accepted.length} not final ${RECOVERY_BOUND_MS / 1000} s after the start (${polls} logs polls): ${JSON.stringify(counts)}`,
    ).toHaveLength(0);
    // At-least-once records all went out; nothing went out twice.
    const texts = sandbox.messages().map((message) => message.message);
    expect(new Set(texts).size).toBe(texts.length);
    const alo = accepted.filter((id) => latest.get(id)?.route === 'alo');
    expect(alo.every((id) => latest.get(id)?.state === 'SENT')).toBe(true);
    expect((await stopRelay(relay, 'SIGTERM')).code).toBe(0);
    relay = undefined;
  }, 240_000);
});
