import { join } from 'node:path';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { test } from '../../helpers/fixtures';
import { loadConfigFile } from '../../../functions/core/config/load';
import { MessageState } from '../../../functions/store';
import { startRuntime, type RunningRuntime } from '../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../local/runtime/secrets';
import { openLocalStore } from '../../../local/shared/local-store';
import { resolveRuntimeSettings, type RuntimeSettings } from '../../../local/shared/settings';
import { signWebhook } from '../../../local/runtime/signers';

const CONFIG = new URL('../../../config/local.yaml', import.meta.url).pathname;

let settings: RuntimeSettings;
let runtime: RunningRuntime;
let token: string;

test.beforeAll(async ({ fileDir }) => {
  settings = resolveRuntimeSettings({
    config: CONFIG,
    secrets: join(fileDir, 'secrets.json'),
    dataDir: join(fileDir, 'data'),
    port: '0',
  });
  token = ensureSecretsFile(settings.secretsPath, loadConfigFile(CONFIG)).values['generic-token']!;
  runtime = await startRuntime(settings);
}, 60_000);

afterAll(async () => {
  await runtime?.stop();
});

describe("the local runtime's stop", () => {
  it("writes the day's spend counter its last sends counted before it closes the store", async () => {
    const bytes = Buffer.from(JSON.stringify({ message: 'Disk 91% on nas-01' }));
    const response = await fetch(`${runtime.url}/hooks/notify`, {
      method: 'POST',
      headers: signWebhook('generic', { body: bytes, secret: token }),
      body: bytes,
    });
    expect(response.status).toBe(202);
    const [id] = ((await response.json()) as { ids: string[] }).ids;

    // Stopped as soon as the SMS is out: its spend is counted in an open window (written each second).
    await vi.waitFor(() => expect(runtime.sandbox!.messages()).toHaveLength(1), { timeout: 60_000, interval: 20 });
    await runtime.stop();

    const after = await openLocalStore({ dataDir: settings.dataDir, tableName: settings.tableName });
    try {
      const sent = await after.store.getMessage(id!);
      expect(sent?.state).toBe(MessageState.Sent);
      // Read as it is in the table: a read through the store would write this process's open window first.
      const day = new Date().toISOString().slice(0, 10);
      const counter = await after.client.send(
        new GetItemCommand({ TableName: settings.tableName, Key: { pk: { S: 'SPEND' }, sk: { S: `D#${day}` } } }),
      );
      expect(counter.Item).toMatchObject({
        sends: { N: '1' },
        'credits:notify': { N: String(sent?.result?.deducted) },
      });
    } finally {
      await after.close();
    }
  });
});
