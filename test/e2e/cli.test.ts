import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { test } from '../helpers/fixtures';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import { cleanEnv, freePort, REPO_ROOT, runCli } from './support';

let dir: string;

test.beforeAll(({ fileDir }) => {
  dir = fileDir;
});

const HELP: Readonly<Record<string, readonly string[]>> = {
  start: [
    '--port <port>',
    '--config <file>',
    '--secrets <file>',
    '--data-dir <dir>',
    '--provider-url <url>',
    'PROVIDER_API_KEY',
  ],
  'send-test': [
    '--route <id>',
    '--payload <file>',
    '--url <base>',
    '--config <file>',
    '--secrets <file>',
    '--header <header>',
  ],
  balance: ['--config <file>', '--secrets <file>', '--url <base>'],
  logs: ['--route <id>', '--state <state>', '--since <when>', '--limit <n>', '--json', '--env <name>'],
  redrive: ['--state <state>', '--since <when>', '--route <id>', '--dry-run', '--accept-duplicates'],
  console: ['--port <port>', '--env <name>', '--table <name>', '--data-dir <dir>'],
};

// Each test runs its own CLI processes on files of its own: they run at once (the worker waits on the processes).
describe.concurrent('sms-relay CLI', () => {
  it.each(Object.entries(HELP))(
    '%s --help describes its options',
    async (command, options) => {
      const result = await runCli([command, '--help'], cleanEnv());
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: sms-relay ${command} [options]`);
      for (const option of options) expect(result.stdout).toContain(option);
    },
    60_000,
  );

  it('start exits non-zero and lists the problems of a bad config', async () => {
    const config = join(dir, 'bad.yaml');
    const text = readFileSync(join(REPO_ROOT, 'config/local.yaml'), 'utf8')
      .replace('source: github', 'source: bitbucket')
      .replace('{{ customer.phone }}', '{{ customer.phone | nosuchfilter }}');
    writeFileSync(config, text);
    const result = await runCli(
      ['start'],
      cleanEnv({
        PORT: '0',
        RELAY_CONFIG: config,
        RELAY_DATA_DIR: join(dir, 'bad-config-data'),
        RELAY_SECRETS_FILE: join(dir, 'bad-config-secrets.json'),
      }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${config}: invalid config`);
    expect(result.stderr).toMatch(/- routes\.github\.source: unknown source/);
    expect(result.stdout).not.toContain('sms-relay is running');
  }, 120_000);

  it('start exits non-zero when the port is taken', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const result = await runCli(
        ['start'],
        cleanEnv({
          PORT: String(port),
          RELAY_DATA_DIR: join(dir, 'busy-data'),
          RELAY_SECRETS_FILE: join(dir, 'busy-secrets.json'),
        }),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`port ${port} is in use; set PORT`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  }, 120_000);

  it('start exits non-zero on a secrets file it cannot use, without quoting it', async () => {
    const secrets = join(dir, 'broken-secrets.json');
    writeFileSync(secrets, '{"providerApiKey": "sbx_do-not-print-me", ');
    const result = await runCli(
      ['start'],
      cleanEnv({ PORT: '0', RELAY_DATA_DIR: join(dir, 'broken-data'), RELAY_SECRETS_FILE: secrets }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`secrets file ${secrets} is not valid JSON`);
    expect(`${result.stdout}${result.stderr}`).not.toContain('do-not-print-me');
  }, 120_000);

  it('start rejects an unusable PORT', async () => {
    const result = await runCli(
      ['start'],
      cleanEnv({
        PORT: 'eighty',
        RELAY_DATA_DIR: join(dir, 'port-data'),
        RELAY_SECRETS_FILE: join(dir, 'port-secrets.json'),
      }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('PORT: expected a port from 0 to 65535');
  }, 120_000);

  it('start refuses a STALE_SENDING_MS not above the SMS service time-out', async () => {
    const result = await runCli(
      ['start'],
      cleanEnv({
        PORT: '0',
        STALE_SENDING_MS: '1000',
        RELAY_DATA_DIR: join(dir, 'stale-data'),
        RELAY_SECRETS_FILE: join(dir, 'stale-secrets.json'),
      }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('STALE_SENDING_MS: 1000 must be above provider.timeoutMs (10000)');
  }, 120_000);

  describe('balance against another SMS service', () => {
    let sandbox: RunningSandbox;
    const key = 'cli-balance-key-71c2';

    beforeAll(async () => {
      sandbox = await startSandbox({ apiKey: key, balance: 1234.5, rate: 25, currency: 'KES' });
    });
    afterAll(async () => {
      await sandbox.close();
    });

    it('prints balance, currency and rate with PROVIDER_BASE_URL and PROVIDER_API_KEY', async () => {
      const result = await runCli(['balance'], cleanEnv({ PROVIDER_BASE_URL: sandbox.baseUrl, PROVIDER_API_KEY: key }));
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(
        `SMS service  ${sandbox.baseUrl} (PROVIDER_BASE_URL)\nBalance      1,234.5 KES\nRate         25 KES per SMS, about 49 SMS left\n`,
      );
      expect(result.stdout).not.toContain(key);
    }, 60_000);

    it('says so when the key is refused, and when the service is unreachable', async () => {
      const secrets = join(dir, 'balance-secrets.json');
      writeFileSync(secrets, JSON.stringify({ providerApiKey: 'wrong-key-0042' }));
      const closed = `http://127.0.0.1:${await freePort()}`;
      const [refused, unreachable] = await Promise.all([
        runCli(['balance', '--url', sandbox.baseUrl, '--secrets', secrets], cleanEnv()),
        runCli(['balance', '--url', closed, '--secrets', secrets], cleanEnv()),
      ]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(`error: the SMS service at ${sandbox.baseUrl} refused the API key (401)\n`);
      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toContain(`error: cannot reach the SMS service at ${closed}`);
      expect(`${refused.stderr}${unreachable.stderr}`).not.toContain('wrong-key-0042');
    }, 60_000);
  });

  it('send-test says when the relay cannot be reached', async () => {
    const secrets = join(dir, 'send-test-secrets.json');
    writeFileSync(secrets, JSON.stringify({ providerApiKey: 'k', 'generic-token': 'send-test-token-5521' }));
    const closed = `http://127.0.0.1:${await freePort()}`;
    const result = await runCli(
      [
        'send-test',
        '--route',
        'notify',
        '--payload',
        'examples/generic/backup-failed.json',
        '--url',
        closed,
        '--secrets',
        secrets,
      ],
      cleanEnv(),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot reach the relay at ${closed}/hooks/notify`);
    expect(`${result.stdout}${result.stderr}`).not.toContain('send-test-token-5521');
  }, 60_000);
});
