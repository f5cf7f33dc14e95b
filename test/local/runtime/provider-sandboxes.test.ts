import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, vi } from 'vitest';
import { test } from '../../helpers/fixtures';
import { loadConfigFile } from '../../../functions/core/config/load';
import { pointProvidersAt, providerEndpoints } from '../../../local/runtime/provider-sandboxes';
import { type RunningRuntime, startRuntime } from '../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../local/runtime/secrets';
import { signWebhook } from '../../../local/runtime/signers';
import { resolveRuntimeSettings } from '../../../local/shared/settings';

/** The example config with three providers: main (sms-service), at (africastalking), gateway (http). */
const CONFIG = new URL('../../../examples/providers.yaml', import.meta.url).pathname;

function settingsIn(dir: string, providerUrl?: string) {
  return resolveRuntimeSettings(
    {
      config: CONFIG,
      secrets: join(dir, 'secrets.json'),
      dataDir: join(dir, 'data'),
      port: '0',
      ...(providerUrl === undefined ? {} : { providerUrl }),
    },
    {},
  );
}

/** What the file's runtime on its own sandboxes runs on: its settings and its secrets file's values. */
interface SandboxedRuntime {
  readonly runtime: RunningRuntime;
  readonly settings: ReturnType<typeof settingsIn>;
  readonly secrets: Readonly<Record<string, string>>;
  /** Each sandbox's balance when it started, in the order of `runtime.sandboxes`. */
  readonly balances: readonly number[];
}

/**
 * One runtime on a sandbox per provider for the file's tests that use its sandboxes (a runtime
 * starts three sandboxes and dynalite, the file's slowest step), and `sandboxed`, which hands it
 * to a test with every sandbox as it started: no outage, an empty inbox, its first balance.
 */
const withSandboxes = test
  .extend('sharedRuntime', { scope: 'file' }, async ({ fileDir }, { onCleanup }): Promise<SandboxedRuntime> => {
    const settings = settingsIn(fileDir);
    const secrets = ensureSecretsFile(settings.secretsPath, loadConfigFile(CONFIG)).values;
    const runtime = await startRuntime(settings);
    onCleanup(async () => await runtime.stop());
    return { runtime, settings, secrets, balances: runtime.sandboxes.map(({ sandbox }) => sandbox.balance()) };
  })
  .extend('sandboxed', async ({ sharedRuntime }): Promise<SandboxedRuntime> => {
    for (const [index, { sandbox }] of sharedRuntime.runtime.sandboxes.entries()) {
      const ended = await fetch(`${sandbox.baseUrl}/_sandbox/outage`, { method: 'DELETE' });
      if (ended.status !== 200) throw new Error(`ending ${sandbox.baseUrl}'s outage answered ${ended.status}`);
      sandbox.clearMessages();
      sandbox.setBalance(sharedRuntime.balances[index]!);
    }
    return sharedRuntime;
  });

describe('npm start with several providers', () => {
  withSandboxes(
    'starts a sandbox per provider, each on the key the relay reads for it, with its own inbox and outage',
    async ({ sandboxed: { runtime, secrets } }) => {
      expect(runtime.sandboxes.map(({ name, type }) => `${name} ${type}`)).toEqual([
        'main sms-service',
        'at africastalking',
        'gateway http',
      ]);
      const [main, at, gateway] = runtime.sandboxes;
      expect(runtime.providerBaseUrl).toBe(main!.sandbox.baseUrl);
      expect(gateway!.endpoint).toBe(`${gateway!.sandbox.baseUrl}/api/v1/sms/send`);

      // Each provider's API answers the key the secrets file holds under its documented name.
      const balance = await fetch(`${at!.sandbox.baseUrl}/version1/user?username=sandbox`, {
        headers: { apiKey: secrets['at-key']!, accept: 'application/json' },
      });
      expect(balance.status).toBe(200);
      const gatewaySend = await fetch(gateway!.endpoint, {
        method: 'POST',
        headers: { 'x-api-key': secrets['gateway-key']!, 'content-type': 'application/json' },
        body: JSON.stringify({ to: '+254712345678', message: 'through the gateway' }),
      });
      expect(gatewaySend.status).toBe(200);
      expect(gateway!.sandbox.messages().map((message) => message.message)).toEqual(['through the gateway']);
      expect(main!.sandbox.messages()).toEqual([]);

      // An outage of main leaves at answering.
      const down = await fetch(`${main!.sandbox.baseUrl}/_sandbox/outage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'status', status: 503 }),
      });
      expect(down.status).toBe(200);
      const mainBalance = await fetch(`${main!.sandbox.baseUrl}/v1/account/balance`, {
        headers: { 'x-api-key': secrets['providerApiKey']! },
      });
      expect(mainBalance.status).toBe(503);
      const atAgain = await fetch(`${at!.sandbox.baseUrl}/version1/user?username=sandbox`, {
        headers: { apiKey: secrets['at-key']!, accept: 'application/json' },
      });
      expect(atAgain.status).toBe(200);

      const health = (await (await fetch(`${runtime.url}/health`)).json()) as {
        sandboxes: { provider: string; inbox: string }[];
      };
      expect(health.sandboxes.map(({ provider, inbox }) => [provider, inbox])).toEqual(
        runtime.sandboxes.map(({ name, sandbox }) => [name, `${sandbox.baseUrl}/_sandbox/messages`]),
      );
    },
    60_000,
  );

  withSandboxes(
    'sends a webhook to the first provider through its own sandbox',
    async ({ sandboxed: { runtime, secrets } }) => {
      const token = secrets['generic-token']!;
      const body = Buffer.from(JSON.stringify({ message: 'disk full on db-1' }));
      const response = await fetch(`${runtime.url}/hooks/notify`, {
        method: 'POST',
        headers: signWebhook('generic', { body, secret: token }),
        body,
      });
      expect(response.status).toBe(202);
      const [main, at, gateway] = runtime.sandboxes;
      await vi.waitFor(
        () => expect(main!.sandbox.messages().map((message) => message.message)).toEqual(['disk full on db-1']),
        {
          timeout: 20_000,
        },
      );
      expect(at!.sandbox.messages()).toEqual([]);
      expect(gateway!.sandbox.messages()).toEqual([]);
    },
    60_000,
  );

  withSandboxes(
    'sms-relay providers asks each provider where the running relay sends it: its sandbox',
    async ({ sandboxed: { settings } }) => {
      const args = ['providers', '--json', '--config', CONFIG, '--data-dir', settings.dataDir];
      const stdout = await new Promise<string>((resolve, reject) => {
        const env = { ...process.env, PROVIDER_BASE_URL: '', RELAY_SECRETS_FILE: settings.secretsPath };
        execFile(process.execPath, ['bin/sms-relay.mjs', ...args], { encoding: 'utf8', env }, (error, out, err) =>
          error === null ? resolve(out) : reject(new Error(`${error.message}\n${err}`)),
        );
      });
      const shown = (JSON.parse(stdout) as { name: string; reachable: boolean | null; balance: number | null }[]).map(
        ({ name, reachable, balance }) => ({ name, reachable, balance }),
      );
      expect(shown).toEqual([
        { name: 'main', reachable: true, balance: 10_000 },
        { name: 'at', reachable: true, balance: 10_000 },
        { name: 'gateway', reachable: null, balance: null },
      ]);
    },
    60_000,
  );

  test('starts no sandbox with PROVIDER_BASE_URL, which only the first provider uses', async ({ tempDir }) => {
    const settings = settingsIn(tempDir, 'http://127.0.0.1:9/elsewhere');
    ensureSecretsFile(settings.secretsPath, loadConfigFile(CONFIG));
    const runtime = await startRuntime(settings);
    try {
      expect(runtime.sandboxes).toEqual([]);
      expect(runtime.sandbox).toBeUndefined();
      expect(runtime.providerBaseUrl).toBe('http://127.0.0.1:9/elsewhere');
      const health = (await (await fetch(`${runtime.url}/health`)).json()) as Record<string, unknown>;
      expect(health).toMatchObject({
        provider: { baseUrl: 'http://127.0.0.1:9/elsewhere', sandbox: false },
        sandbox: null,
        sandboxes: [],
      });
    } finally {
      await runtime.stop();
    }
  }, 60_000);
});

describe('where each provider sends', () => {
  const loaded = loadConfigFile(CONFIG);

  test('with PROVIDER_BASE_URL: the first provider there, the others at their configured URLs', () => {
    const pointed = pointProvidersAt(loaded, providerEndpoints(loaded, [], 'http://127.0.0.1:4010'));
    expect(pointed.settings.providers.main).toMatchObject({ baseUrl: 'http://127.0.0.1:4010' });
    expect(pointed.settings.providers.at).toMatchObject({ baseUrl: 'https://api.africastalking.com' });
    expect(pointed.settings.providers.gateway).toMatchObject({ url: 'https://gw.example.com/api/v1/sms/send' });
    expect(pointed.settings.provider.baseUrl).toBe('http://127.0.0.1:4010');
  });

  test('with sandboxes: each provider at its own, the http type at its send path', () => {
    const pointed = pointProvidersAt(loaded, {
      main: 'http://127.0.0.1:1',
      at: 'http://127.0.0.1:2',
      gateway: 'http://127.0.0.1:3/api/v1/sms/send',
    });
    expect(pointed.settings.providers.main).toMatchObject({ baseUrl: 'http://127.0.0.1:1' });
    expect(pointed.settings.providers.at).toMatchObject({ baseUrl: 'http://127.0.0.1:2', username: 'sandbox' });
    expect(pointed.settings.providers.gateway).toMatchObject({ url: 'http://127.0.0.1:3/api/v1/sms/send' });
  });
});
