import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { test } from '../../helpers/fixtures';
import { loadConfigFile } from '../../../functions/core/config/load';
import { CIRCUIT } from '../../../functions/core/defaults';
import { startRuntime, type RunningRuntime } from '../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../local/runtime/secrets';
import { signWebhook } from '../../../local/runtime/signers';
import { readAnnouncement } from '../../../local/shared/discovery';
import { resolveRuntimeSettings, type RuntimeSettings } from '../../../local/shared/settings';

/**
 * The local runtime's send queue (8 sends at once) against a service whose balance endpoint
 * answers while every send fails 503: each probe that closes the circuit lets one at-most-once
 * send through, not a queue's worth.
 */
const CONFIG = new URL('../../../config/local.yaml', import.meta.url).pathname;

let dir: string;
let settings: RuntimeSettings;
let runtime: RunningRuntime;
let token: string;

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  settings = resolveRuntimeSettings(
    { config: CONFIG, secrets: join(dir, 'secrets.json'), dataDir: join(dir, 'data'), port: '0' },
    {},
  );
  token = ensureSecretsFile(settings.secretsPath, loadConfigFile(CONFIG)).values['generic-token']!;
  runtime = await startRuntime(settings);
}, 60_000);

afterAll(async () => {
  await runtime?.stop();
});

async function notify(index: number): Promise<void> {
  const body = Buffer.from(JSON.stringify({ title: `Order ${index}`, message: `Order ${index} shipped` }));
  const response = await fetch(`${runtime.url}/hooks/notify`, {
    method: 'POST',
    headers: signWebhook('generic', { body, secret: token }),
    body,
  });
  expect(response.status).toBe(202);
}

async function count(state: string): Promise<number> {
  const response = await fetch(`${runtime.url}/_relay/records?route=notify&state=${state}`, {
    headers: { authorization: `Bearer ${readAnnouncement(settings.dataDir)!.consoleSecret}` },
  });
  return ((await response.json()) as { records: unknown[] }).records.length;
}

describe('the circuit in the local runtime', () => {
  it('lets one send through after each probe that closes it, not the send queue’s 8', { timeout: 60_000 }, async () => {
    const sandbox = runtime.sandbox!;
    sandbox.injectFault({ kind: 'status', status: 503, count: 10_000 });
    for (let index = 0; index < 20; index += 1) await notify(index);
    // Three sends fail and open it; then two probes find the balance endpoint answering.
    const balanceReads = () => sandbox.requests().filter((request) => request.path === '/v1/account/balance');
    const before = balanceReads().length;
    await vi.waitFor(() => expect(balanceReads().length).toBeGreaterThanOrEqual(before + 2), {
      timeout: 4 * (CIRCUIT.firstProbeMs + CIRCUIT.maxProbeMs),
      interval: 100,
    });
    // The second probe's trial has settled once the circuit is open again.
    await vi.waitFor(async () => expect(await count('UNKNOWN')).toBeGreaterThanOrEqual(CIRCUIT.failuresToOpen + 2), {
      timeout: 10_000,
      interval: 100,
    });
    sandbox.clearFaults();

    // Probes are the balance reads after the first failed send (the balance watch reads it at the
    // start). Between two probes, at most one send reached the service.
    const log = sandbox.requests();
    const opening = log.findIndex((request) => request.path === '/v1/sms/send' && request.status === 503);
    let sendsSinceProbe = 0;
    let probes = 0;
    let beforeProbes = 0;
    for (const request of log.slice(opening)) {
      if (request.path === '/v1/account/balance') {
        probes += 1;
        sendsSinceProbe = 0;
      } else if (probes === 0) beforeProbes += 1;
      else {
        sendsSinceProbe += 1;
        expect(sendsSinceProbe).toBeLessThanOrEqual(1);
      }
    }
    expect(probes).toBeGreaterThanOrEqual(2);
    // Every maybe-sent message is one under way when it opened or one probe's trial; the rest go out now.
    await vi.waitFor(async () => expect(await count('SENT')).toBe(20 - (await count('UNKNOWN'))), {
      timeout: 4 * (CIRCUIT.firstProbeMs + CIRCUIT.maxProbeMs),
      interval: 200,
    });
    expect(await count('UNKNOWN')).toBeLessThanOrEqual(beforeProbes + probes);
  });
});
