/**
 * `redrive`: how fast `sms-relay redrive` sends a backlog of parked messages after a top-up, on the
 * real runtime (`node bin/sms-relay.mjs start`, a child process on dynalite) pointed at a sandbox
 * SMS service in this process. The messages are parked the way they would be (webhooks accepted
 * while the balance is 0: each send answered 402), the balance is topped up, and the clock runs
 * from the start of `sms-relay redrive` to the last SMS received by the sandbox.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSandbox } from '../local/sandbox/server';
import { SENDER_ID } from './relay-config';
import { operatorHeaders } from '../test/helpers/relay-operator';
import { round } from './stats';
import { pool, startBenchRelay, type Relay } from './time-to-sms';

export interface Redrive {
  readonly records: number;
  /** From the start of `sms-relay redrive` to the last of its SMS at the SMS service. */
  readonly seconds: number;
  readonly smsPerSecond: number;
}

export interface RedriveOptions {
  readonly records?: number;
  readonly concurrency?: number;
  readonly log?: (line: string) => void;
}

/** Bounds a lost SMS or a record that never parks: the bench fails instead of waiting for ever. */
const DEADLINE_MS = 600_000;

export async function runRedrive(
  repoRoot: string,
  { records = 2_000, concurrency = 64, log = () => {} }: RedriveOptions = {},
): Promise<Redrive> {
  const apiKey = `bench-${randomBytes(8).toString('hex')}`;
  const token = `bench-${randomBytes(12).toString('hex')}`;
  let delivered = 0;
  let lastArrival = 0;
  const sandbox = await startSandbox({
    apiKey,
    balance: 0,
    rate: 20,
    senderIds: [SENDER_ID],
    onDelivered: () => {
      delivered += 1;
      lastArrival = performance.now();
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-bench-redrive-'));
  let relay: Relay | undefined;
  try {
    relay = await startBenchRelay(repoRoot, dir, { providerBaseUrl: sandbox.baseUrl, apiKey, token });
    const { url } = relay;

    log(`redrive: parking ${records} messages (balance 0)…`);
    await pool(records, concurrency, async (index) => {
      const response = await fetch(`${url}/hooks/bench`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `redrive ${index}` }),
      });
      if (response.status !== 202) throw new Error(`webhook answered ${response.status}: ${await response.text()}`);
    });
    const parkedBy = Date.now() + DEADLINE_MS;
    while ((await countParked(url)) < records) {
      if (Date.now() > parkedBy) throw new Error(`fewer than ${records} records PARKED within ${DEADLINE_MS} ms`);
      await sleep(500);
    }
    if (delivered > 0) throw new Error(`${delivered} SMS went out with a balance of 0`);

    log(`redrive: top-up, then sms-relay redrive of ${records}…`);
    sandbox.setBalance(1_000_000_000);
    const started = performance.now();
    await runCommand(repoRoot, ['redrive', '--data-dir', join(dir, 'data')]);
    const sentBy = Date.now() + DEADLINE_MS;
    while (delivered < records) {
      if (Date.now() > sentBy) throw new Error(`${delivered} of ${records} redriven SMS within ${DEADLINE_MS} ms`);
      await sleep(20);
    }
    const seconds = (lastArrival - started) / 1000;
    return { records, seconds: round(seconds, 2), smsPerSecond: round(records / seconds) };
  } finally {
    await relay?.stop();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function countParked(url: string): Promise<number> {
  const response = await fetch(`${url}/_relay/records?route=bench&state=PARKED`, {
    headers: await operatorHeaders(url),
  });
  return ((await response.json()) as { records: unknown[] }).records.length;
}

/** `node bin/sms-relay.mjs <args>`, as a user runs it; throws unless it exits 0. */
async function runCommand(repoRoot: string, args: readonly string[]): Promise<void> {
  const child = spawn(process.execPath, ['bin/sms-relay.mjs', ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-10_000)));
  child.stderr.on('data', (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-10_000)));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`sms-relay ${args.join(' ')} exited with ${code}:\n${output}`);
}
