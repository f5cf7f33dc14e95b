import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../../local/cli/build';
import { findBuild, sourcesCommand } from '../../../local/cli/launch.mjs';
import { COMMAND_NAMES } from '../../../local/cli/main';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function node(args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...args], { cwd, encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

/** `sms-relay <args>` as a user runs it: the launcher picks the build or the sources. */
const cli = (root: string, args: readonly string[]): Promise<Run> =>
  node([join(root, 'bin/sms-relay.mjs'), ...args], root);

/** `sms-relay <args>` from the TypeScript sources through tsx, whatever is built. */
const sources = (root: string, args: readonly string[]): Promise<Run> => node(sourcesCommand(root, args), root);

/**
 * A copy of the repository's sources with its node_modules linked: the tests build it and edit it
 * without touching the checkout that other tests run.
 */
let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'sms-relay-cli-build-'));
  for (const dir of ['bin', 'local', 'functions', 'infra'])
    cpSync(join(REPO_ROOT, dir), join(root, dir), { recursive: true });
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json'])
    cpSync(join(REPO_ROOT, file), join(root, file));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('the CLI build (npm run build)', () => {
  it('prints the same as the sources: help, every command help, a usage error', async () => {
    expect(findBuild(root)).toEqual({ reason: 'missing' });
    const { manifest } = await buildCli({ root });
    expect(findBuild(root)).toMatchObject({ listings: manifest.commands });
    expect(manifest.inputs).toContain('local/cli/commands/validate.ts');

    const commands = manifest.commands.map(({ name }) => name);
    // Every command of the CLI's registry, each under the name it is registered by.
    expect(commands).toEqual(COMMAND_NAMES);
    const invocations = [
      ['--help'],
      [],
      ['help', 'validate'],
      ['nosuch'],
      ['valdate'],
      ['validate'],
      ...commands.map((name) => [name, '--help']),
    ];
    for (const args of invocations) {
      const [built, fromSources] = await Promise.all([cli(root, args), sources(root, args)]);
      expect({ args, ...built }).toEqual({ args, ...fromSources });
    }
  }, 600_000);

  it('is not run once a file it was made from changes, and runs again when rebuilt', async () => {
    await buildCli({ root });
    const validate = join(root, 'local/cli/commands/validate.ts');

    // A newer time alone is no change: the stamp is of the contents.
    const later = new Date(Date.now() + 60_000);
    utimesSync(validate, later, later);
    expect(findBuild(root)).toHaveProperty('entry');

    writeFileSync(
      validate,
      readFileSync(validate, 'utf8').replace("'Check a config file:", "'Check a relay config file:"),
    );
    expect(findBuild(root)).toEqual({ reason: 'changed' });
    // The launcher runs the sources, so the change shows at once.
    expect((await cli(root, ['--help'])).stdout).toContain('Check a relay config file:');

    // Two builds at once (two installs, say) leave one usable build.
    const [first] = await Promise.all([buildCli({ root }), buildCli({ root })]);
    expect(findBuild(root)).toEqual({ entry: first.entry, listings: first.manifest.commands });
    expect((await cli(root, ['--help'])).stdout).toContain('Check a relay config file:');

    rmSync(join(root, 'functions/core/config/errors.ts'));
    expect(findBuild(root)).toEqual({ reason: 'changed' });
    rmSync(dirname(first.entry), { recursive: true });
    expect(findBuild(root)).toEqual({ reason: 'missing' });
  }, 600_000);
});
