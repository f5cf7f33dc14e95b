import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { test } from '../../helpers/fixtures';
import { loadConfigFile } from '../../../functions/core/config/load';
import { startRuntime, type RunningRuntime } from '../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../local/runtime/secrets';
import { signWebhook } from '../../../local/runtime/signers';
import { readAnnouncement } from '../../../local/shared/discovery';
import { resolveRuntimeSettings, type RuntimeSettings } from '../../../local/shared/settings';

/** `sms-relay circuit`, `circuit open --for` and `circuit close` as an operator runs them. */

const CONFIG = new URL('../../../config/local.yaml', import.meta.url).pathname;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/sms-relay.mjs', ...args], { encoding: 'utf8', env }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

let dir: string;
test.beforeAll(({ fileDir }) => {
  dir = fileDir;
});

describe('sms-relay circuit on the local store (no relay running)', () => {
  it('shows it closed, opens it for a while, shows it open and by whom, and closes it', {
    timeout: 180_000,
  }, async () => {
    const data = ['--data-dir', join(dir, 'idle')];
    const closed = await cli(['circuit', '--json', ...data]);
    expect(closed.stderr).toBe('');
    expect(JSON.parse(closed.stdout)).toMatchObject({ state: 'closed', since: null, failures: 0 });

    const opened = await cli(['circuit', 'open', '--for', '30m', ...data]);
    expect(opened.stderr).toBe('');
    expect(opened.stdout).toMatch(/^Opened the circuit until \S+: no SMS is sent until then/);
    const shown = JSON.parse((await cli(['circuit', '--json', ...data])).stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({ state: 'open', openedBy: 'sms-relay circuit open' });
    const held = Date.parse(String(shown['nextProbeAt'])) - Date.parse(String(shown['since']));
    expect(held).toBeGreaterThanOrEqual(30 * 60_000);
    expect(held).toBeLessThan(31 * 60_000);
    const text = (await cli(['circuit', ...data])).stdout;
    expect(text).toContain(': OPEN\n');
    expect(text).toContain('opened by sms-relay circuit open: no SMS is sent, they wait PENDING');

    expect((await cli(['circuit', 'close', ...data])).stdout).toMatch(/^Closed the circuit \(open since /);
    expect(JSON.parse((await cli(['circuit', '--json', ...data])).stdout)).toMatchObject({ state: 'closed' });
  });

  it('refuses a duration it cannot hold, changing nothing', { timeout: 90_000 }, async () => {
    const data = ['--data-dir', join(dir, 'refused')];
    for (const duration of ['soon', '2d']) {
      const refused = await cli(['circuit', 'open', '--for', duration, ...data]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`--for "${duration}" is not a duration of up to 24h`);
    }
    expect(JSON.parse((await cli(['circuit', '--json', ...data])).stdout)).toMatchObject({ state: 'closed' });
  });
});

describe('sms-relay circuit on the running relay', () => {
  let settings: RuntimeSettings;
  let runtime: RunningRuntime;
  let token: string;

  beforeAll(async () => {
    settings = resolveRuntimeSettings(
      { config: CONFIG, secrets: join(dir, 'secrets.json'), dataDir: join(dir, 'running'), port: '0' },
      {},
    );
    token = ensureSecretsFile(settings.secretsPath, loadConfigFile(CONFIG)).values['generic-token']!;
    runtime = await startRuntime(settings);
  }, 60_000);
  afterAll(async () => {
    await runtime?.stop();
  });

  const notify = async (): Promise<string> => {
    const body = Buffer.from(JSON.stringify({ message: 'Nightly backup of nas-01 failed' }));
    const response = await fetch(`${runtime.url}/hooks/notify`, {
      method: 'POST',
      headers: signWebhook('generic', { body, secret: token }),
      body,
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { ids: string[] }).ids[0]!;
  };
  const stateOf = async (id: string): Promise<string | undefined> => {
    const response = await fetch(`${runtime.url}/_relay/records?route=notify`, {
      headers: { authorization: `Bearer ${readAnnouncement(settings.dataDir)!.consoleSecret}` },
    });
    return ((await response.json()) as { records: { id: string; state: string }[] }).records.find(
      (record) => record.id === id,
    )?.state;
  };

  it('opened by hand, holds every SMS PENDING; closed by hand, they go out', { timeout: 60_000 }, async () => {
    const data = ['--data-dir', settings.dataDir];
    const opened = await cli(['circuit', 'open', '--for', '30m', ...data]);
    expect(opened.stdout).toContain(`(the running relay (pid ${process.pid}`);
    // The runtime reads the circuit it wrote itself at once.
    const held = await notify();
    const delivered = runtime.sandbox!.messages().length;
    // The sweeper hands it to the sender every second; it stays PENDING, and the service sees nothing.
    await vi.waitFor(async () => expect(await stateOf(held)).toBe('PENDING'));
    expect(runtime.sandbox!.messages().length).toBe(delivered);

    const closed = await cli(['circuit', 'close', ...data]);
    expect(closed.stdout).toMatch(/^Closed the circuit \(open since \S+\): sends start at once/);
    await vi.waitFor(async () => expect(await stateOf(held)).toBe('SENT'), { timeout: 15_000, interval: 100 });
  });
});
