import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import {
  cleanEnv,
  eventually,
  FULL_NUMBER,
  freePort,
  post,
  readJsonFile,
  records,
  runCli,
  signedRequest,
  startRelay,
  stopRelay,
  type RelayProcess,
} from './support';

const API_KEY = 'restart-test-provider-key-3f9a';
/** More webhooks than the progress threshold, so redrive takes its many-records path. */
const PARKED_WEBHOOKS = 24;

let dir: string;
let sandbox: RunningSandbox;
let baseEnv: Record<string, string>;
let relay: RelayProcess | undefined;
const printed: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-restart-'));
  // Another implementation of the SMS service's interface (docs/sms-service.md) than the runtime's own: the test's.
  sandbox = await startSandbox({
    apiKey: API_KEY,
    balance: 100_000,
    rate: 20,
    senderIds: ['SMSRELAY', 'ALERTS', 'DUKA'],
    defaultSenderId: 'SMSRELAY',
  });
  baseEnv = {
    PORT: '0',
    RELAY_DATA_DIR: join(dir, 'data'),
    RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    PROVIDER_API_KEY: API_KEY,
    // Many quick retries: records stay PENDING while the provider is down, and are due again soon after.
    RETRY_MAX_ATTEMPTS: '1000',
    RETRY_BASE_DELAY_MS: '100',
    // Above config/local.yaml's provider time-out (10 s), as the runtime requires.
    STALE_SENDING_MS: '11000',
  };
});

afterAll(async () => {
  if (relay !== undefined) await stopRelay(relay, 'SIGKILL');
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('restarts and redrive', () => {
  const alertIds: string[] = [];

  it('keeps records PENDING while the SMS service is unreachable, across a kill -9', async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    relay = await startRelay(cleanEnv({ ...baseEnv, PROVIDER_BASE_URL: down }));
    expect(relay.banner).toContain(`SMS        ${down} (PROVIDER_BASE_URL)`);
    expect(relay.sandboxUrl).toBeUndefined();
    const secret = readJsonFile<Record<string, string>>(join(dir, 'secrets.json'))['alerts-token']!;

    // `alerts` is an at-least-once route: even a record killed mid-send is sent again, exactly once here
    // because nothing can have reached the closed port.
    for (const fixture of ['alertmanager/firing-single.json', 'alertmanager/firing-grouped.json']) {
      const answer = await post(relay.url, signedRequest('alerts', 'alertmanager', fixture, secret));
      expect(answer.status).toBe(202);
      alertIds.push(...(answer.body['ids'] as string[]));
    }
    await eventually(
      async () => {
        const pending = await records(relay!.url, 'route=alerts');
        return pending.length === alertIds.length &&
          pending.every((record) => record.state === 'PENDING' && record.attempts >= 1)
          ? true
          : undefined;
      },
      { what: 'both alerts tried and still PENDING' },
    );

    const { signal } = await stopRelay(relay, 'SIGKILL');
    expect(signal).toBe('SIGKILL');
    printed.push(relay.stdout(), relay.stderr());
    relay = undefined;
    expect(sandbox.messages()).toHaveLength(0);
  }, 180_000);

  it('sends them exactly once after a restart with a working SMS service', async () => {
    relay = await startRelay(cleanEnv({ ...baseEnv, PROVIDER_BASE_URL: sandbox.baseUrl }));
    const sent = await eventually(
      async () => {
        const all = await records(relay!.url, 'route=alerts');
        return all.every((record) => record.state === 'SENT') ? all : undefined;
      },
      { what: 'both alerts SENT after the restart' },
    );
    expect(sent.map((record) => record.id).sort()).toEqual([...alertIds].sort());
    // SENT is final: no further send of these records can happen, so the inbox is complete for them.
    const texts = sandbox
      .messages()
      .map((message) => message.message)
      .filter((text) => text.startsWith('[FIRING'));
    expect(texts.sort()).toEqual([
      '[FIRING x3] InstanceDown: api-01.internal:8080 of job checkout-api has been down for more than 2 minutes',
      '[FIRING] DiskAlmostFull: Disk /var/lib/postgresql on db-01 is 94% full',
    ]);
    expect(sent.every((record) => record.attempts >= 1 && record.deducted === 20)).toBe(true);
  }, 180_000);

  it('parks messages on 402, and redrive sends them after a top-up', async () => {
    const secret = readJsonFile<Record<string, string>>(join(dir, 'secrets.json'))['generic-token']!;
    sandbox.setBalance(0);
    const ids: string[] = [];
    for (let index = 0; index < PARKED_WEBHOOKS; index += 1) {
      const request = signedRequest('notify', 'generic', 'generic/backup-failed.json', secret, {
        'Idempotency-Key': `parked-${index}`,
      });
      const answer = await post(relay!.url, request);
      expect(answer.status).toBe(202);
      ids.push(...(answer.body['ids'] as string[]));
    }
    await eventually(
      async () => {
        const parked = await records(relay!.url, 'route=notify&state=PARKED');
        return ids.every((id) => parked.some((record) => record.id === id)) ? true : undefined;
      },
      { what: 'every message PARKED' },
    );
    expect(sandbox.messages().filter((message) => message.message.startsWith('Nightly backup'))).toHaveLength(0);

    // The top-up, through the sandbox's control endpoint as a person would.
    const topUp = await fetch(`${sandbox.baseUrl}/_sandbox/balance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"balance":5000}',
    });
    expect(topUp.status).toBe(200);

    const env = cleanEnv(baseEnv);
    const [dryRun, onOtherRoute] = await Promise.all([
      runCli(['redrive', '--route', 'notify', '--dry-run'], env),
      runCli(['redrive', '--route', 'github'], env),
    ]);
    printed.push(dryRun.stdout, dryRun.stderr, onOtherRoute.stdout, onOtherRoute.stderr);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stdout).toContain(`${PARKED_WEBHOOKS} PARKED on route notify records would be re-queued (dry run).`);
    expect(onOtherRoute.stdout).toMatch(/^Nothing to re-queue: no PARKED on route github records/);
    expect((await records(relay!.url, 'route=notify&state=PARKED')).length).toBe(PARKED_WEBHOOKS);

    const redrive = await runCli(['redrive', '--route', 'notify'], env);
    printed.push(redrive.stdout, redrive.stderr);
    expect(redrive.code, redrive.stderr).toBe(0);
    // Not a terminal: progress as plain lines, then the total.
    expect(redrive.stdout).toContain(`re-queued ${PARKED_WEBHOOKS}, ${PARKED_WEBHOOKS}/${PARKED_WEBHOOKS} done`);
    expect(redrive.stdout).toContain(
      `Re-queued ${PARKED_WEBHOOKS} of ${PARKED_WEBHOOKS} PARKED on route notify records; the running relay sends them within a few seconds.`,
    );

    await eventually(
      async () => {
        const sent = await records(relay!.url, 'route=notify&state=SENT');
        return ids.every((id) => sent.some((record) => record.id === id)) ? true : undefined;
      },
      { what: 'every redriven message SENT' },
    );
    expect(sandbox.messages().filter((message) => message.message.startsWith('Nightly backup'))).toHaveLength(
      PARKED_WEBHOOKS,
    );
  }, 240_000);

  it('stops cleanly on SIGTERM without printing secrets or full numbers', async () => {
    const { code } = await stopRelay(relay!, 'SIGTERM');
    expect(code).toBe(0);
    printed.push(relay!.stdout(), relay!.stderr());
    relay = undefined;
    const secrets = readJsonFile<Record<string, string>>(join(dir, 'secrets.json'));
    const all = printed.join('\n');
    // The runtime ran with PROVIDER_API_KEY, so that key is the one that must never show.
    for (const [name, value] of Object.entries({ ...secrets, PROVIDER_API_KEY: API_KEY })) {
      const shown = all.split('\n').filter((line) => line.includes(value));
      expect(shown, name).toEqual([]);
    }
    const numbers = all.match(FULL_NUMBER);
    expect(numbers).toBeNull();
  }, 120_000);
});
