import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvider, type ProviderConfig } from '../../../functions/core/provider';
import {
  callApi,
  describeSmsServiceConformance,
  httpControl,
  VALID_NUMBERS,
  type ConformanceTarget,
} from './conformance';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const API_KEY = 'cli-sandbox-key-8d27a1';
const STARTUP_TIMEOUT_MS = 20_000;

/** The environment without SANDBOX_API_KEY, so a developer's own setting cannot leak into these runs. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  if (!('SANDBOX_API_KEY' in extra)) delete env['SANDBOX_API_KEY'];
  return env;
}

interface CliRun {
  readonly child: ChildProcessWithoutNullStreams;
  readonly stdoutLines: () => readonly string[];
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first stdout line matching, or rejects on exit/timeout. */
  readonly waitForLine: (matches: (line: string) => boolean) => Promise<string>;
}

function runCli(args: readonly string[], env: NodeJS.ProcessEnv = cleanEnv()): CliRun {
  const child = spawn(process.execPath, ['bin/sms-relay.mjs', ...args], { cwd: REPO_ROOT, env });
  let stdout = '';
  let stderr = '';
  const lines = (): string[] => stdout.split('\n').filter((line) => line.length > 0);
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitForLine = (matches: (line: string) => boolean): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = lines().find(matches);
        if (found === undefined) return false;
        cleanup();
        resolve(found);
        return true;
      };
      const onExit = (): void => {
        if (check()) return;
        cleanup();
        reject(new Error(`CLI exited before the expected line.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`No expected line within ${STARTUP_TIMEOUT_MS} ms.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      }, STARTUP_TIMEOUT_MS);
      const onData = (): void => void check();
      const cleanup = (): void => {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.off('exit', onExit);
      };
      child.stdout.on('data', onData);
      child.once('exit', onExit);
      check();
    });
  return { child, stdoutLines: lines, stderr: () => stderr, exited, waitForLine };
}

async function baseUrlOf(run: CliRun): Promise<string> {
  const line = await run.waitForLine((candidate) => candidate.startsWith('Sandbox SMS service listening on '));
  expect(run.stdoutLines()[0]).toBe(line);
  return line.slice('Sandbox SMS service listening on '.length);
}

async function stop(
  run: CliRun,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill(signal);
  return run.exited;
}

describe('sms-relay sandbox (CLI)', () => {
  describe('a running sandbox', () => {
    let run: CliRun;
    let baseUrl: string;

    beforeAll(async () => {
      run = runCli([
        'sandbox',
        '--port',
        '0',
        '--api-key',
        API_KEY,
        '--balance',
        '100',
        '--rate',
        '0.1',
        '--currency',
        'TZS',
        '--sender-ids',
        'ACME,ALERTS',
      ]);
      baseUrl = await baseUrlOf(run);
    });
    afterAll(async () => {
      await stop(run, 'SIGKILL');
    });

    it('prints the real port of --port 0 in the base URL on the first line', () => {
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(baseUrl).not.toMatch(/:0$/);
    });

    describeSmsServiceConformance(
      'CLI sandbox',
      (): ConformanceTarget => ({
        baseUrl,
        apiKey: API_KEY,
        control: httpControl(baseUrl),
        account: { currency: 'TZS', rate: 0.1, approvedSenderIds: ['ACME', 'ALERTS'], defaultSenderId: 'ACME' },
      }),
    );

    it('prints one line per accepted send with masked numbers, never a full number or the key', async () => {
      const [first, second] = VALID_NUMBERS;
      await httpControl(baseUrl).setBalance(100);
      const response = await callApi({ baseUrl, apiKey: API_KEY }, '/v1/sms/send', {
        method: 'POST',
        body: { phoneNumbers: [first, second], message: 'Masking check' },
      });
      expect(response.status).toBe(200);
      const line = await run.waitForLine(
        (candidate) => candidate.includes('2557****678') && candidate.includes('2557****111'),
      );
      expect(line).toContain('ACME');
      const everything = run.stdoutLines().join('\n') + run.stderr();
      expect(everything).not.toContain(API_KEY);
      for (const phoneNumber of VALID_NUMBERS) expect(everything).not.toContain(phoneNumber);
    });

    it('stops cleanly on SIGTERM', async () => {
      expect(await stop(run, 'SIGTERM')).toEqual({ code: 0, signal: null });
      expect(run.stdoutLines().at(-1)).toBe('Sandbox stopped');
      await expect(fetch(`${baseUrl}/v1/account/balance`)).rejects.toThrow();
    });
  });

  describe('API key sources', () => {
    it('generates a key when none is given, prints it once, and stops cleanly on SIGINT', async () => {
      const run = runCli(['sandbox', '--port', '0']);
      try {
        const baseUrl = await baseUrlOf(run);
        const keyLine = await run.waitForLine((line) => line.startsWith('API key (generated'));
        const generatedKey = keyLine.slice(keyLine.lastIndexOf(' ') + 1);
        expect(generatedKey.length).toBeGreaterThanOrEqual(20);
        expect((await callApi({ baseUrl, apiKey: generatedKey }, '/v1/account/balance')).status).toBe(200);
        expect((await callApi({ baseUrl, apiKey: 'guess' }, '/v1/account/balance')).status).toBe(401);
        await callApi({ baseUrl, apiKey: generatedKey }, '/v1/sms/send', {
          method: 'POST',
          body: { phoneNumbers: VALID_NUMBERS[0], message: 'Hi' },
        });
        await run.waitForLine((line) => line.includes('2557****678'));
        expect(run.stdoutLines().filter((line) => line.includes(generatedKey))).toEqual([keyLine]);
        expect(await stop(run, 'SIGINT')).toEqual({ code: 0, signal: null });
      } finally {
        await stop(run, 'SIGKILL');
      }
    });

    it('takes the key from SANDBOX_API_KEY and does not print it', async () => {
      const run = runCli(['sandbox', '--port', '0'], cleanEnv({ SANDBOX_API_KEY: API_KEY }));
      try {
        const baseUrl = await baseUrlOf(run);
        expect((await callApi({ baseUrl, apiKey: API_KEY }, '/v1/account/balance')).status).toBe(200);
        expect(run.stdoutLines().join('\n')).not.toContain(API_KEY);
        expect(await stop(run)).toEqual({ code: 0, signal: null });
      } finally {
        await stop(run, 'SIGKILL');
      }
    });
  });

  describe('usage errors', () => {
    it.for([
      [['--port', 'abc'], /--port.*'abc' is invalid/],
      [['--port', '70000'], /--port.*'70000' is invalid.*0 to 65535/],
      [['--balance', '1e3'], /--balance.*'1e3' is invalid.*at most 4 decimals/],
      [['--rate', '-1'], /--rate.*'-1' is invalid/],
      [['--rate', '0.00001'], /--rate.*is invalid.*at most 4 decimals/],
      [['--currency', 'tzs'], /--currency.*'tzs' is invalid.*three-letter/],
      [['--sender-ids', 'ACME,,ALERTS'], /--sender-ids.*is invalid/],
      [['--api-key', ''], /--api-key.*is invalid.*non-empty/],
      [['--no-such-option'], /unknown option '--no-such-option'/],
    ] as const)('exits 2 with a clear message for %j', async ([args, message], { expect }) => {
      const run = runCli(['sandbox', '--api-key', API_KEY, ...args]);
      const { code } = await run.exited;
      expect(code).toBe(2);
      expect(run.stderr()).toMatch(message);
      expect(run.stderr()).toContain('sms-relay sandbox --help');
      expect(run.stdoutLines()).toEqual([]);
    });

    it('exits 1 with the reason when the port is taken', async () => {
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = blocker.address() as AddressInfo;
        const run = runCli(['sandbox', '--port', String(port), '--api-key', API_KEY]);
        expect((await run.exited).code).toBe(1);
        expect(run.stderr()).toMatch(new RegExp(`could not listen on 127\\.0\\.0\\.1:${port}.*EADDRINUSE`));
      } finally {
        await new Promise((resolve) => blocker.close(resolve));
      }
    });

    it('documents every option in --help and exits 0', async () => {
      const run = runCli(['sandbox', '--help']);
      expect((await run.exited).code).toBe(0);
      const help = run.stdoutLines().join('\n');
      for (const option of [
        '--port',
        '--host',
        '--api-key',
        '--balance',
        '--rate',
        '--currency',
        '--sender-ids',
        '--default-sender-id',
        '--type',
        '--username',
        'SANDBOX_API_KEY',
        '/_sandbox',
      ]) {
        expect(help).toContain(option);
      }
    });
  });

  describe.each([
    {
      type: 'africastalking',
      extra: ['--username', 'acme', '--currency', 'KES'],
      provider: (baseUrl: string): ProviderConfig => ({ type: 'africastalking', username: 'acme', baseUrl }),
    },
    {
      type: 'http',
      extra: [],
      provider: (baseUrl: string): ProviderConfig => ({
        type: 'http',
        url: `${baseUrl}/api/v1/sms/send`,
        headers: { 'X-API-Key': '{{ secret.p-key }}' },
        body: '{"to": {{ to | json }}, "message": {{ text | json }}}',
      }),
    },
  ])('--type $type', ({ type, extra, provider: configFor }) => {
    it('stands in for that provider type: a send through it is sent and printed, masked', async () => {
      const run = runCli(['sandbox', '--type', type, '--port', '0', '--api-key', API_KEY, ...extra]);
      try {
        const baseUrl = await baseUrlOf(run);
        const provider = createProvider('p', configFor(baseUrl), {
          secret: (name) => (name === 'p-key' ? API_KEY : undefined),
        });
        try {
          await expect(provider.send({ to: '+254712345678', text: 'Disk full' })).resolves.toMatchObject({
            status: 'sent',
          });
        } finally {
          provider.close();
        }
        const sent = await run.waitForLine((line) => line.includes(' sent 9-char SMS '));
        expect(sent).toContain('to 2547****678');
        expect(run.stdoutLines().join('\n')).not.toContain('712345678');
      } finally {
        await stop(run);
      }
    });
  });

  it('refuses an unknown --type with a usage error', async () => {
    const run = runCli(['sandbox', '--type', 'twilio', '--port', '0', '--api-key', API_KEY]);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toContain('twilio');
  });
});
