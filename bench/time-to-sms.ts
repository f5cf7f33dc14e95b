/**
 * `timeToSms`: what a person posting webhooks to `npm start` waits for, end to end. The real
 * runtime (`node bin/sms-relay.mjs start`) runs as a child process on dynalite, pointed
 * (`PROVIDER_BASE_URL`) at a sandbox SMS service in this process, whose `onDelivered` hook stamps
 * the moment each send arrives.
 *
 * - trickle: webhooks posted one at a time, each timed from its 202 answer to its send's arrival;
 *   its floor is what the runtime cannot skip between a 202 and the SMS, alone: a record claimed in a
 *   local store opened as the runtime opens it, then sent straight to the sandbox (see {@link trickleFloor});
 * - burst: webhooks posted at a fixed concurrency, timing each 202 and the drain from the first post
 *   to the last send received; its floor is the same number of sends made straight to the sandbox
 *   with the relay's SMS client at the same concurrency.
 *
 * Webhooks are posted over kept-alive connections, one per concurrent poster, as the relay's SMS
 * client sends (see {@link createPoster}).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSmsClient } from '../functions/core/provider';
import { MessageState } from '../functions/store';
import { openLocalStore } from '../local/shared/local-store';
import { message } from '../test/functions/store/fixtures';
import { startSandbox } from '../local/sandbox/server';
import { benchConfigYaml, benchSecrets, SENDER_ID } from './relay-config';
import { percentile, round } from './stats';

export interface TimeToSms {
  readonly trickle: {
    readonly p50Ms: number;
    readonly p99Ms: number;
    /** The same percentiles of {@link trickleFloor}'s claim and send. */
    readonly floorP50Ms: number;
    readonly floorP99Ms: number;
  };
  readonly burst: {
    readonly acceptP99Ms: number;
    readonly drainSeconds: number;
    readonly smsPerSecond: number;
    readonly floorSmsPerSecond: number;
  };
}

export interface TimeToSmsOptions {
  readonly trickle?: number;
  readonly burst?: number;
  readonly concurrency?: number;
  readonly log?: (line: string) => void;
}

const STARTUP_TIMEOUT_MS = 90_000;
/** Bounds a lost SMS: the bench fails instead of waiting for ever. */
const DELIVERY_TIMEOUT_MS = 120_000;

/** Relay settings a developer's shell may hold, which would change what the child does. */
const RELAY_VARIABLES =
  /^(PORT|RELAY_\w+|PROVIDER_\w+|MAX_BODY_BYTES|RETRY_\w+|STALE_SENDING_MS|SWEEP_\w+|TABLE_NAME|DYNAMODB_ENDPOINT|SECRET_ID|SANDBOX_API_KEY|POWERTOOLS_\w+)$/;

/** Waits for sends by message text; `at` is the `performance.now()` of their arrival. */
class Inbox {
  private readonly waiting = new Map<string, (at: number) => void>();

  public readonly onDelivered = ({ message }: { readonly message: string }): void => {
    const at = performance.now();
    this.waiting.get(message)?.(at);
    this.waiting.delete(message);
  };

  /** Call before the send can happen. */
  public expect(text: string): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(text);
        reject(new Error(`no SMS "${text}" within ${DELIVERY_TIMEOUT_MS} ms`));
      }, DELIVERY_TIMEOUT_MS);
      this.waiting.set(text, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }
}

/** Posts JSON bodies; `close` ends its connections. */
interface Poster {
  post(
    url: string,
    headers: Readonly<Record<string, string>>,
    body: string,
  ): Promise<{ readonly status: number; readonly body: string }>;
  close(): void;
}

/**
 * A poster with at most `connections` kept-alive connections, one per concurrent poster: a webhook
 * sender posting 64 at a time. Not `fetch`: under the burst its pool opened 102–108 connections for
 * 64 posters, and the new connections' handshakes (both processes busy) and its own CPU (twice
 * this one's per webhook) showed in the 202 times, which are meant to be the relay's.
 */
function createPoster(connections: number): Poster {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  return {
    post: (url, headers, body) =>
      new Promise((resolve, reject) => {
        const posting = request(
          url,
          { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
            );
            response.on('error', reject);
          },
        );
        posting.on('error', reject);
        posting.end(body);
      }),
    close: () => agent.destroy(),
  };
}

/** Runs `count` tasks, at most `concurrency` at a time. */
export async function pool(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, worker));
}

export interface Relay {
  readonly url: string;
  /** The banner's one-time console link (`…/console/?token=…`), when the console is on. */
  readonly consoleLink?: string;
  stop(): Promise<void>;
}

/** `npm start` as a child process; resolves with its URL once the banner shows it. */
export async function startRelay(repoRoot: string, settings: Readonly<Record<string, string>>): Promise<Relay> {
  // The developer's own relay settings must not leak into a measured run.
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !RELAY_VARIABLES.test(name))),
    ...settings,
  };
  const child: ChildProcess = spawn(process.execPath, ['bin/sms-relay.mjs', 'start'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Kept short: the runtime prints a line per SMS, which only matters when start-up fails.
  const keep = (chunk: Buffer): void => void (output = (output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no banner within ${STARTUP_TIMEOUT_MS} ms:\n${output}`)),
        STARTUP_TIMEOUT_MS,
      );
      const check = (): void => {
        const match = /Health\s+(http:\/\/127\.0\.0\.1:\d+)\/health/.exec(output);
        if (match === null) return;
        clearTimeout(timer);
        resolve(match[1]!);
      };
      child.stdout!.on('data', check);
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`sms-relay start exited before its banner:\n${output}`));
      });
    });
    const consoleLink = /Console\s+(http:\/\/127\.0\.0\.1:\d+\/console\/\?token=[\w-]+)/.exec(output)?.[1];
    return { url, ...(consoleLink === undefined ? {} : { consoleLink }), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The bench's relay config and secrets written into `dir`, and `npm start` on them with its data
 * in `dir/data`, sending to `providerBaseUrl`.
 */
export async function startBenchRelay(
  repoRoot: string,
  dir: string,
  { providerBaseUrl, apiKey, token }: { providerBaseUrl: string; apiKey: string; token: string },
): Promise<Relay> {
  writeFileSync(join(dir, 'secrets.json'), benchSecrets(apiKey, token));
  // The runtime replaces this base URL with PROVIDER_BASE_URL.
  writeFileSync(join(dir, 'relay.yaml'), benchConfigYaml('http://127.0.0.1:9'));
  return await startRelay(repoRoot, {
    PORT: '0',
    RELAY_CONFIG: join(dir, 'relay.yaml'),
    RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    RELAY_DATA_DIR: join(dir, 'data'),
    PROVIDER_BASE_URL: providerBaseUrl,
    PROVIDER_API_KEY: apiKey,
  });
}

export async function runTimeToSms(
  repoRoot: string,
  { trickle = 100, burst = 1000, concurrency = 64, log = () => {} }: TimeToSmsOptions = {},
): Promise<TimeToSms> {
  const apiKey = `bench-${randomBytes(8).toString('hex')}`;
  const token = `bench-${randomBytes(12).toString('hex')}`;
  const run = randomBytes(4).toString('hex');
  const inbox = new Inbox();
  // A balance no run can exhaust: a 402 would park messages.
  const sandbox = await startSandbox({
    apiKey,
    balance: 1_000_000_000,
    rate: 20,
    senderIds: [SENDER_ID],
    onDelivered: inbox.onDelivered,
  });
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-bench-'));
  const poster = createPoster(concurrency);
  let relay: Relay | undefined;
  try {
    // First, while nothing else runs: the relay's store would still be busy after its burst.
    log(`time to SMS: the trickle's floor, ${trickle} claims and sends one at a time…`);
    const floorClient = createSmsClient({ baseUrl: sandbox.baseUrl, apiKey, timeoutMs: 10_000 });
    const floorOfTrickle = await trickleFloor(join(dir, 'floor'), inbox, floorClient, { count: trickle, run }).finally(
      () => floorClient.close(),
    );
    relay = await startBenchRelay(repoRoot, dir, { providerBaseUrl: sandbox.baseUrl, apiKey, token });
    const hook = `${relay.url}/hooks/bench`;

    /** Posts one webhook whose SMS text is `text`; resolves with the 202's `performance.now()` and the arrival. */
    const post = async (text: string): Promise<{ posted: number; accepted: number; delivered: Promise<number> }> => {
      const delivered = inbox.expect(text);
      delivered.catch(() => {}); // awaited by the caller; a rejection before that is not unhandled
      const posted = performance.now();
      const { status, body } = await poster.post(
        hook,
        { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        JSON.stringify({ message: text }),
      );
      const accepted = performance.now();
      if (status !== 202) throw new Error(`webhook answered ${status}: ${body}`);
      return { posted, accepted, delivered };
    };

    // Warm-up, not measured: the first requests compile and load what the runtime loads lazily.
    for (let index = 0; index < 5; index += 1) await (await post(`warm ${run} ${index}`)).delivered;

    log(`time to SMS: trickle of ${trickle}…`);
    const trickleMs: number[] = [];
    for (let index = 0; index < trickle; index += 1) {
      const { accepted, delivered } = await post(`trickle ${run} ${index}`);
      trickleMs.push((await delivered) - accepted);
    }

    log(`time to SMS: burst of ${burst} at concurrency ${concurrency}…`);
    const acceptMs: number[] = [];
    const arrivals: Promise<number>[] = [];
    const burstStart = performance.now();
    await pool(burst, concurrency, async (index) => {
      const { posted, accepted, delivered } = await post(`burst ${run} ${index}`);
      acceptMs.push(accepted - posted);
      arrivals.push(delivered);
    });
    const drainMs = Math.max(...(await Promise.all(arrivals))) - burstStart;

    log(`time to SMS: floor, ${burst} sends straight to the SMS service…`);
    const client = createSmsClient({ baseUrl: sandbox.baseUrl, apiKey, timeoutMs: 10_000 });
    const floorArrivals: Promise<number>[] = [];
    const floorStart = performance.now();
    await pool(burst, concurrency, async (index) => {
      const text = `floor ${run} ${index}`;
      const delivered = inbox.expect(text);
      delivered.catch(() => {});
      floorArrivals.push(delivered);
      await client.send({ phoneNumbers: ['255712345678'], message: text, senderId: SENDER_ID });
    });
    const floorMs = Math.max(...(await Promise.all(floorArrivals))) - floorStart;
    client.close();

    return {
      trickle: {
        p50Ms: round(percentile(trickleMs, 50)),
        p99Ms: round(percentile(trickleMs, 99)),
        floorP50Ms: round(percentile(floorOfTrickle, 50)),
        floorP99Ms: round(percentile(floorOfTrickle, 99)),
      },
      burst: {
        acceptP99Ms: round(percentile(acceptMs, 99)),
        drainSeconds: round(drainMs / 1000, 2),
        smsPerSecond: round(burst / (drainMs / 1000)),
        floorSmsPerSecond: round(burst / (floorMs / 1000)),
      },
    };
  } finally {
    poster.close();
    await relay?.stop();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The trickle's floor, in milliseconds per SMS: for `count` records one at a time (after five not
 * counted), accepted into a local store opened as the runtime opens it (dynalite and LevelDB on
 * disk, in a worker thread), then timed from the start of the claim (the one store request between
 * a 202 and the send: it is what keeps a second sender from sending the record) to the arrival of
 * its SMS, sent straight to the sandbox with the relay's SMS client; each settled `SENT` after, as
 * the sender does. No HTTP server, no relay, nothing else running in that store.
 */
async function trickleFloor(
  dataDir: string,
  inbox: Inbox,
  client: ReturnType<typeof createSmsClient>,
  { count, run }: { readonly count: number; readonly run: string },
): Promise<number[]> {
  const local = await openLocalStore({ dataDir, tableName: 'sms-relay', offThread: true });
  const times: number[] = [];
  try {
    for (let index = -5; index < count; index += 1) {
      const text = `trickle floor ${run} ${index}`;
      const { ids } = await local.store.acceptWebhook({
        route: 'bench',
        dedupeKey: text,
        windowSeconds: 60,
        messages: [message({ text, characters: text.length })],
      });
      const delivered = inbox.expect(text);
      delivered.catch(() => {});
      const started = performance.now();
      const claimed = await local.store.claimMessage(ids[0]!);
      if (claimed === undefined) throw new Error(`the floor's record ${ids[0]} was not claimed`);
      const result = await client.send({ phoneNumbers: [...claimed.to], message: claimed.text, senderId: SENDER_ID });
      const arrived = await delivered;
      if (index >= 0) times.push(arrived - started);
      await local.store.settle(claimed.id, claimed.claimToken!, {
        state: MessageState.Sent,
        result: { deducted: result.deducted, message: result.message, senderId: result.senderId, recipients: [] },
      });
    }
  } finally {
    await local.close();
  }
  return times;
}
