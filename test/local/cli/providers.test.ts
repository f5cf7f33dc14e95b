import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAfricasTalkingSandbox } from '../../../local/sandbox/africastalking';
import { startSandbox } from '../../../local/sandbox/server';
import type { RunningSandbox } from '../../../local/sandbox/types';

/** `sms-relay providers [--json]` as an operator runs it, against the providers' sandboxes. */

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/sms-relay.mjs', ...args], { encoding: 'utf8', env }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

let dir: string;
let main: RunningSandbox;
let at: RunningSandbox;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'providers-cli-'));
  [main, at] = await Promise.all([
    startSandbox({ apiKey: 'main-key-7f3a', balance: 900, rate: 20, currency: 'TZS', senderIds: ['OPS'] }),
    startAfricasTalkingSandbox({ apiKey: 'at-key-91c2', username: 'acme', balance: 120, rate: 0.8, currency: 'KES' }),
  ]);
  writeFileSync(
    join(dir, 'relay.yaml'),
    `providers:
  main: { type: sms-service, baseUrl: "https://sms.example.co.tz", defaultSenderId: OPS }
  at: { type: africastalking, username: acme, baseUrl: "${at.baseUrl}" }
  gateway: { type: http, url: "http://127.0.0.1:9/api/v1/sms/send", body: '{"to": {{ to | json }}}' }
secrets: sms-relay/test
routes:
  ops: { source: generic, secret: generic-token, recipients: ["0754111222"] }
`,
  );
  writeFileSync(
    join(dir, 'secrets.json'),
    JSON.stringify({ providerApiKey: 'main-key-7f3a', 'at-key': 'at-key-91c2', 'generic-token': 'g' }),
  );
});
afterAll(async () => {
  await Promise.all([main.close(), at.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('sms-relay providers', () => {
  it('prints each provider: type, reachable, circuit, balance and currency, price per SMS', {
    timeout: 120_000,
  }, async () => {
    const args = [
      '--config',
      join(dir, 'relay.yaml'),
      '--secrets',
      join(dir, 'secrets.json'),
      '--data-dir',
      join(dir, 'data'),
    ];
    const env = { ...process.env, PROVIDER_BASE_URL: main.baseUrl };
    const run = await cli(['providers', '--json', ...args], env);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([
      {
        name: 'main',
        type: 'sms-service',
        reachable: true,
        circuit: 'closed',
        balance: 900,
        currency: 'TZS',
        pricePerSms: 20,
      },
      {
        name: 'at',
        type: 'africastalking',
        reachable: true,
        circuit: 'closed',
        balance: 120,
        currency: 'KES',
        pricePerSms: null,
      },
      {
        name: 'gateway',
        type: 'http',
        reachable: null,
        circuit: 'closed',
        balance: null,
        currency: null,
        pricePerSms: null,
      },
    ]);
    expect(run.stdout).not.toContain('at-key-91c2');

    await fetch(`${at.baseUrl}/_sandbox/outage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 503 }),
    });
    const text = await cli(['providers', ...args], env);
    expect(text.stderr).toBe('');
    expect(text.stdout.split('\n')[1]).toMatch(/^at\s+africastalking\s+UNREACHABLE\s+circuit closed\s+balance -/);
  });
});
