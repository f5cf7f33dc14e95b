import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { test } from '../../helpers/fixtures';
import { loadConfigFile } from '../../../functions/core/config/load';
import { MessageState, type MessageRecord } from '../../../functions/store';
import { startRuntime, type RunningRuntime } from '../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../local/runtime/secrets';
import { readAnnouncement } from '../../../local/shared/discovery';
import { openLocalStore } from '../../../local/shared/local-store';
import { resolveRuntimeSettings, type RuntimeSettings } from '../../../local/shared/settings';
import { signWebhook } from '../../../local/runtime/signers';
import { waitUntil } from '../../helpers/wait';

const CONFIG = new URL('../../../config/local.yaml', import.meta.url).pathname;
const BASE_DELAY_MS = 2_000;
/** The tolerance around a retry's backoff. */
const TOLERANCE_MS = 2_000;

let dir: string;
let settings: RuntimeSettings;
let runtime: RunningRuntime;
let token: string;

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  settings = resolveRuntimeSettings(
    { config: CONFIG, secrets: join(dir, 'secrets.json'), dataDir: join(dir, 'data'), port: '0' },
    { RETRY_BASE_DELAY_MS: String(BASE_DELAY_MS) },
  );
  token = ensureSecretsFile(settings.secretsPath, loadConfigFile(CONFIG)).values['generic-token']!;
  // A sweep that does not come for ten minutes, as behind a long scan of a large table: the retry
  // below can only be sent on time by the runtime's own timer.
  runtime = await startRuntime({ ...settings, sweepIntervalMs: 600_000 });
}, 60_000);

afterAll(async () => {
  await runtime?.stop();
});

async function notify(body: string): Promise<string> {
  const bytes = Buffer.from(body);
  const response = await fetch(`${runtime.url}/hooks/notify`, {
    method: 'POST',
    headers: signWebhook('generic', { body: bytes, secret: token }),
    body: bytes,
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { ids: string[] }).ids[0]!;
}

async function untilSent(id: string): Promise<void> {
  await waitUntil(
    `${id} SENT`,
    async () => {
      // With the secret of runtime.json, as `sms-relay logs` sends it.
      const response = await fetch(`${runtime.url}/_relay/records?route=notify&state=SENT`, {
        headers: { authorization: `Bearer ${readAnnouncement(settings.dataDir)!.consoleSecret}` },
      });
      return ((await response.json()) as { records: { id: string }[] }).records.some((record) => record.id === id);
    },
    { timeoutMs: 60_000 },
  );
}

/** The whole record, history included, read from the store once the runtime has let go of it. */
async function storedRecord(id: string): Promise<MessageRecord> {
  await runtime.stop();
  const local = await openLocalStore({ dataDir: settings.dataDir, tableName: settings.tableName });
  try {
    return (await local.store.getMessage(id))!;
  } finally {
    await local.close();
  }
}

describe('retries on time in the local runtime', () => {
  it('a send that certainly did not go out is sent again at its backoff, not at the next sweep', {
    timeout: 60_000,
  }, async () => {
    // A 401 sends nothing; the key cannot change (it is fixed), so the send is retried later.
    runtime.sandbox!.injectFault({ kind: 'status', status: 401, count: 2 });
    const id = await notify(JSON.stringify({ title: 'Backup failed', message: 'Nightly backup of nas-01 failed' }));

    await untilSent(id);
    const sent = await storedRecord(id);

    expect(sent.attempts).toBe(3);
    const states = sent.history.map((entry) => entry.state);
    expect(states).toEqual([
      MessageState.Pending,
      MessageState.Sending,
      MessageState.Pending,
      MessageState.Sending,
      MessageState.Pending,
      MessageState.Sending,
      MessageState.Sent,
    ]);
    // Each retry's claim, against the time its failure was settled plus its backoff (5 s, 10 s, … by
    // default; 2 s, 4 s here), from the record's own timestamps.
    const at = sent.history.map((entry) => Date.parse(entry.at));
    const lateness = [at[3]! - (at[2]! + BASE_DELAY_MS), at[5]! - (at[4]! + 2 * BASE_DELAY_MS)];
    for (const late of lateness) {
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThanOrEqual(TOLERANCE_MS);
    }
  });
});
