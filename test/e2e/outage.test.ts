import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  eventually,
  STARTUP_TIMEOUT_MS,
  getJson,
  inbox,
  readJsonFile,
  records,
  startRelay,
  stopRelay,
  type RelayProcess,
} from './support';

/**
 * An outage through `npm start` and its own sandbox: the SMS service down (every `/v1` request,
 * balance reads too, answered 503) for 20 s during a trickle of at-most-once and at-least-once
 * webhooks, then back. At most 5 maybe-sent, the rest SENT, nothing PENDING or SENDING, the
 * service saw probes and not a send per message, and the terminal said when it opened and closed.
 * The several-minute version is test/reliability/outage.test.ts.
 */

const OUTAGE_MS = 20_000;
/** One webhook this often: the trickle (load, not a wait for a state). */
const TRICKLE_MS = 500;

let dir: string;
let relay: RelayProcess;
let token: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-outage-'));
  const route = (delivery: string) => ({
    source: 'generic',
    secret: 'generic-token',
    recipients: ['0712345678'],
    template: '{{ tag }}',
    delivery,
  });
  writeFileSync(
    join(dir, 'relay.yaml'),
    JSON.stringify({
      provider: { baseUrl: 'http://127.0.0.1:9/unused', timeoutMs: 2_000 },
      secrets: 'sms-relay/outage',
      routes: { alo: route('at-least-once'), amo: route('at-most-once') },
    }),
  );
  relay = await startRelay(
    cleanEnv({
      PORT: '0',
      RELAY_CONFIG: join(dir, 'relay.yaml'),
      RELAY_DATA_DIR: join(dir, 'data'),
      RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
      RETRY_BASE_DELAY_MS: '1000',
    }),
  );
  token = readJsonFile<Record<string, string>>(join(dir, 'secrets.json'))['generic-token']!;
}, STARTUP_TIMEOUT_MS);

afterAll(async () => {
  if (relay !== undefined) await stopRelay(relay);
  rmSync(dir, { recursive: true, force: true });
});

describe('a provider outage during a trickle', () => {
  it('waits instead of spending attempts, probes the balance endpoint, and sends everything once it is back', async () => {
    const sandbox = relay.sandboxUrl!;
    const ids = new Set<string>();
    let posted = 0;
    const post = async (): Promise<void> => {
      const route = posted % 2 === 0 ? 'amo' : 'alo';
      posted += 1;
      const response = await fetch(`${relay.url}/hooks/${route}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({ tag: `outage ${posted} ${route}` }),
      });
      expect(response.status).toBe(202);
      for (const id of ((await response.json()) as { ids: string[] }).ids) ids.add(id);
    };
    const trickle = async (forMs: number): Promise<void> => {
      const end = Date.now() + forMs;
      while (Date.now() < end) {
        await post();
        await new Promise((resolve) => setTimeout(resolve, TRICKLE_MS));
      }
    };
    const outage = async (method: 'POST' | 'DELETE'): Promise<void> => {
      const response = await fetch(`${sandbox}/_sandbox/outage`, {
        method,
        ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{"status":503}' } : {}),
      });
      expect(response.status).toBe(200);
    };

    await trickle(2_000);
    const downAt = new Date().toISOString();
    await outage('POST');
    await trickle(OUTAGE_MS);
    const duringOutage = posted;
    // An error line: on stderr.
    const opened =
      /service {2}SMS service unreachable since \d\d:\d\d:\d\d \(\d+ sends failed in a row, last server-error 503\): sends paused/;
    await eventually(async () => (opened.test(relay.stderr()) ? true : undefined), {
      what: 'the line saying the service is unreachable',
    });
    await outage('DELETE');
    const backAt = new Date().toISOString();
    await trickle(2_000);

    const final = await eventually(
      async () => {
        const listed = (await records(relay.url)).filter((record) => ids.has(record.id));
        return listed.length === ids.size && listed.every((record) => !['PENDING', 'SENDING'].includes(record.state))
          ? listed
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, what: 'every message final' },
    );
    await relay.waitFor(
      /service {2}SMS service reachable again after \d+ (s|min \d+ s) \(unreachable since \d\d:\d\d:\d\d\): sending the waiting messages, oldest first/,
    );

    const unknown = final.filter((record) => record.state === 'UNKNOWN').length;
    expect(unknown).toBeLessThanOrEqual(5);
    expect(final.filter((record) => record.state === 'SENT')).toHaveLength(ids.size - unknown);
    expect((await inbox(sandbox)).filter((message) => message.message.startsWith('outage '))).toHaveLength(
      ids.size - unknown,
    );
    const requests = (
      await getJson<{ requests: { path: string; at: string }[] }>(`${sandbox}/_sandbox/requests`)
    ).requests.filter((request) => request.at >= downAt && request.at < backAt);
    const sends = requests.filter((request) => request.path === '/v1/sms/send').length;
    expect(requests.filter((request) => request.path === '/v1/account/balance').length).toBeGreaterThan(0);
    expect(sends).toBeLessThan(duringOutage / 4);
  }, 240_000);
});
