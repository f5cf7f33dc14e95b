import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { test } from '../../helpers/fixtures';

/**
 * The CLI as an operator runs it: `validate` before a deploy, `logs`/`redrive` against a stack.
 * Each test runs the CLI as a child process and shares nothing with the others but the empty
 * `home`, so they run concurrently: the file waits on processes, not on its own work.
 */

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

let home: string;
test.beforeAll(({ fileDir }) => {
  home = fileDir;
});

describe.concurrent("validate prints each route's effective delivery policy", () => {
  it("config/prod.yaml: set by the route, or the source's default", async () => {
    const { code, stdout } = await cli(['validate', '--config', 'config/prod.yaml']);

    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        'config/prod.yaml: valid (3 routes: oncall, orders, ci)',
        '  oncall  alertmanager  at-least-once  set by the route',
        '  orders  shopify       at-most-once   default for shopify',
        '  ci      github        at-most-once   default for github',
        '',
      ].join('\n'),
    );
  });

  it('warns, without failing, when a config pages people and keeps no balance.reserve; prod keeps one', async () => {
    const file = join(home, 'no-reserve.yaml');
    writeFileSync(
      file,
      'provider: { baseUrl: "https://sms.example.co.tz" }\nroutes:\n  pages: { source: alertmanager, secret: t, recipients: ["+255712345678"] }\n',
    );

    const warned = await cli(['validate', '--config', file]);
    const prod = await cli(['validate', '--config', 'config/prod.yaml']);

    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(
      /^warning: balance\.reserve: none, but route pages pages people; set balance\.reserve/,
    );
    expect(prod.stderr).toBe('');
  });

  it('an alerting source set to at-most-once keeps it', async () => {
    const file = join(home, 'explicit.yaml');
    writeFileSync(
      file,
      'provider: { baseUrl: "https://sms.example.co.tz" }\nroutes:\n  pages: { source: grafana, secret: t, recipients: ["+255712345678"], delivery: at-most-once }\n  kuma: { source: uptime-kuma, secret: t, recipients: ["+255712345678"] }\n',
    );

    const { code, stdout } = await cli(['validate', '--config', file]);

    expect(code).toBe(0);
    expect(stdout.split('\n').slice(1)).toEqual([
      '  pages  grafana      at-most-once   set by the route',
      '  kuma   uptime-kuma  at-least-once  default for uptime-kuma',
      '',
    ]);
  });
});

describe.concurrent('mute refuses what it cannot do, and changes nothing', () => {
  it.each([
    [
      ['mute', 'nosuch', '--for', '2h', '--config', 'config/prod.yaml', '--data-dir', 'DATA'],
      'error: unknown route "nosuch"; the config\'s routes: oncall, orders, ci\n',
    ],
    [
      ['mute', 'oncall', '--for', 'soon', '--config', 'config/prod.yaml', '--data-dir', 'DATA'],
      'error: --for "soon" is not a duration of up to 30d; use e.g. 30m, 2h, 1d\n',
    ],
    [
      ['mute', 'oncall', '--for', '31d', '--config', 'config/prod.yaml', '--data-dir', 'DATA'],
      'error: --for "31d" is not a duration of up to 30d; use e.g. 30m, 2h, 1d\n',
    ],
    [
      ['mute', 'oncall', '--config', 'config/prod.yaml', '--data-dir', 'DATA'],
      "error: required option '--for <duration>' not specified\n",
    ],
    [
      ['mutes', '--config', 'nowhere.yaml', '--data-dir', 'DATA'],
      'error: no config at nowhere.yaml: pass --config <file>, the config the relay runs with\n',
    ],
  ])('%j', async (args, message) => {
    const dataDir = join(home, 'untouched');
    const { code, stderr } = await cli(args.map((arg) => (arg === 'DATA' ? dataDir : arg)));
    expect(stderr).toBe(message);
    expect(code).not.toBe(0);
    // Nothing was created: the local store was never opened.
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe.concurrent('oncall override refuses what it cannot do, and changes nothing', () => {
  const local = ['--config', 'config/local.yaml', '--data-dir', 'DATA'];
  it.each([
    [
      ['oncall', 'override', 'nosuch', '--person', 'asha', '--for', '8h', ...local],
      'error: unknown schedule "nosuch"; the config\'s schedules: ops\n',
    ],
    [
      ['oncall', 'override', 'ops', '--person', 'carol', '--for', '8h', ...local],
      'error: unknown person "carol"; the config\'s people: asha, baraka\n',
    ],
    [
      ['oncall', 'override', 'ops', '--person', 'baraka', '--for', 'soon', ...local],
      'error: --for "soon" is not a duration of up to 30d; use e.g. 30m, 8h, 2d\n',
    ],
    [
      ['oncall', 'override', 'ops', '--person', 'baraka', '--for', '31d', ...local],
      'error: --for "31d" is not a duration of up to 30d; use e.g. 30m, 8h, 2d\n',
    ],
    [
      ['oncall', 'override', 'ops', '--for', '8h', ...local],
      "error: required option '--person <name>' not specified\n",
    ],
    [
      ['oncall', '--config', 'nowhere.yaml', '--data-dir', 'DATA'],
      'error: no config at nowhere.yaml: pass --config <file>, the config the relay runs with\n',
    ],
  ])('%j', async (args, message) => {
    const dataDir = join(home, 'untouched');
    const { code, stderr } = await cli(args.map((arg) => (arg === 'DATA' ? dataDir : arg)));
    expect(stderr).toBe(message);
    expect(code).not.toBe(0);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('says so when the config has no schedules', async () => {
    const { code, stdout } = await cli([
      'oncall',
      '--config',
      'config/prod.yaml',
      '--data-dir',
      join(home, 'untouched'),
    ]);
    expect({ code, stdout }).toEqual({
      code: 0,
      stdout: 'No schedules in the config: add schedules (and people) to page whoever is on call.\n',
    });
    expect(
      (await cli(['oncall', '--json', '--config', 'config/prod.yaml', '--data-dir', join(home, 'untouched')])).stdout,
    ).toBe('[]\n');
  });
});

describe.concurrent('commands that reach AWS without a region', () => {
  // No AWS_REGION and no profile: HOME is an empty directory, so there is no ~/.aws/config either.
  const noRegion = (): NodeJS.ProcessEnv => ({ PATH: process.env['PATH'], HOME: home });

  it.each([
    ['logs', ['logs', '--env', 'prod']],
    ['redrive', ['redrive', '--env', 'prod', '--state', 'PARKED']],
    ['dismiss', ['dismiss', '--env', 'prod', '--state', 'FAILED', '--reason', 'invalid number']],
    ['mute', ['mute', 'oncall', '--for', '2h', '--env', 'prod']],
    ['unmute', ['unmute', 'oncall', '--env', 'prod']],
    ['mutes', ['mutes', '--env', 'prod']],
    ['oncall', ['oncall', '--env', 'prod']],
    ['circuit', ['circuit', '--env', 'prod']],
    ['circuit close', ['circuit', 'close', '--env', 'prod']],
  ])('%s says to set AWS_REGION or pass --region, not the SDK\'s "Region is missing"', async (_name, args) => {
    const { code, stdout, stderr } = await cli(args, noRegion());

    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'error: no AWS region for SmsRelay-prod: set AWS_REGION or pass --region (the region the stack is deployed in)\n',
    );
  });

  it('lists --region in the help of logs, redrive, dismiss and the mute commands', async () => {
    const commands = ['logs', 'redrive', 'dismiss', 'mute', 'unmute', 'mutes', 'oncall'];
    const helps = await Promise.all(commands.map(async (command) => (await cli([command, '--help'])).stdout));
    for (const [index, help] of helps.entries()) expect(help, commands[index]).toContain('--region <region>');
  });
});
