/**
 * `cli`: how long `sms-relay --help` and `sms-relay validate --config config/prod.yaml` take, as a
 * user runs them (`node bin/sms-relay.mjs …`, from spawning the process to its exit), against the
 * baseline `node -e 0` measured in the same rounds: Node's own start, which no CLI can go under.
 * Then the store commands (`logs`, `incidents`, `circuit`, `mutes`, `oncall`, `redrive --dry-run`)
 * against a running relay (`sms-relay start` on a temporary data directory, one webhook recorded),
 * which answers them through its `/_relay` API, each against the same baseline.
 *
 * The CLI is built first (`buildCli`, what `npm ci` runs as `prepare`), so the figures are those of
 * a fresh checkout after `npm ci`. The same commands from the sources through tsx (what runs when a
 * source changed since the build) are timed too, in fewer rounds: what a stale build costs.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli } from '../local/cli/build';
import { findBuild, sourcesCommand } from '../local/cli/launch.mjs';
import { median, ratio, round } from './stats';
import { startRelay } from './time-to-sms';

export interface CliTimes {
  readonly helpMs: number;
  readonly validateMs: number;
}

export interface CliStartup extends CliTimes {
  /** `node -e 0`. */
  readonly baselineMs: number;
  readonly helpRatio: number;
  readonly validateRatio: number;
  /** The same commands from the TypeScript sources through tsx. */
  readonly sources: CliTimes;
  /** The store commands against a running relay, in {@link STORE_COMMANDS}' order; absent in results from before they were measured. */
  readonly store?: readonly StoreCommandTime[];
}

/** One store command against a running relay. */
export interface StoreCommandTime {
  /** As typed after `sms-relay`, e.g. `redrive --dry-run`. */
  readonly command: string;
  readonly ms: number;
  /** `node -e 0` in the same rounds. */
  readonly baselineMs: number;
  readonly ratio: number;
}

/** The store commands timed against a running relay: each reads what the relay holds and changes nothing. */
export const STORE_COMMANDS = [
  ['logs'],
  ['incidents'],
  ['circuit'],
  ['mutes'],
  ['oncall'],
  ['redrive', '--dry-run'],
] as const satisfies readonly (readonly string[])[];

const HELP = ['--help'];
const VALIDATE = ['validate', '--config', 'config/prod.yaml'];

/** Wall time of `node <args>` in `cwd`, from spawn to exit, in ms; fails unless it exits 0. */
function timeNode(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...args], {
      cwd,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 120_000,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`node ${args.join(' ')} exited ${code}: ${stderr.slice(0, 2000)}`));
    });
  });
}

export async function runCli(
  repoRoot: string,
  { runs = 15, sourceRuns = 5, log = (_line: string): void => {} } = {},
): Promise<CliStartup> {
  const built = await buildCli({ root: repoRoot });
  if (!('entry' in findBuild(repoRoot))) throw new Error('the CLI build is not current right after building it');
  log(`cli: built ${built.manifest.inputs.length} files`);

  const cli = (args: readonly string[]): Promise<number> => timeNode(['bin/sms-relay.mjs', ...args], repoRoot);
  // One unmeasured run of each warms the OS file cache.
  await timeNode(['-e', '0'], repoRoot);
  await cli(HELP);
  await cli(VALIDATE);

  const samples = { baseline: [] as number[], help: [] as number[], validate: [] as number[] };
  for (let run = 0; run < runs; run += 1) {
    // The order turns each round, so no command always runs right after another.
    const order = [
      async () => samples.baseline.push(await timeNode(['-e', '0'], repoRoot)),
      async () => samples.help.push(await cli(HELP)),
      async () => samples.validate.push(await cli(VALIDATE)),
    ];
    for (let step = 0; step < order.length; step += 1) await order[(run + step) % order.length]!();
  }
  log(`cli: built, ${runs} rounds`);

  const fromSources = { help: [] as number[], validate: [] as number[] };
  for (let run = 0; run < sourceRuns; run += 1) {
    fromSources.help.push(await timeNode(sourcesCommand(repoRoot, HELP), repoRoot));
    fromSources.validate.push(await timeNode(sourcesCommand(repoRoot, VALIDATE), repoRoot));
  }
  log(`cli: sources, ${sourceRuns} rounds`);

  const store = await timeStoreCommands(repoRoot, runs);
  log(`cli: store commands against a running relay, ${runs} rounds`);

  const baseline = median(samples.baseline);
  return {
    store,
    helpMs: round(median(samples.help)),
    validateMs: round(median(samples.validate)),
    baselineMs: round(baseline),
    helpRatio: ratio(median(samples.help), baseline),
    validateRatio: ratio(median(samples.validate), baseline),
    sources: { helpMs: round(median(fromSources.help)), validateMs: round(median(fromSources.validate)) },
  };
}

/**
 * Each of {@link STORE_COMMANDS} against a relay started for it (`sms-relay start`, its own data
 * directory and sandbox), with one webhook recorded, alternating with `node -e 0` in each round.
 */
async function timeStoreCommands(repoRoot: string, runs: number): Promise<StoreCommandTime[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-bench-cli-'));
  const settings = {
    RELAY_CONFIG: join(repoRoot, 'config/local.yaml'),
    RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    RELAY_DATA_DIR: join(dir, 'data'),
  };
  const relay = await startRelay(repoRoot, { PORT: '0', ...settings });
  try {
    const secrets = JSON.parse(readFileSync(settings.RELAY_SECRETS_FILE, 'utf8')) as Record<string, string>;
    const posted = await fetch(`${relay.url}/hooks/notify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secrets['generic-token']}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Bench: a record for the store commands to list' }),
    });
    if (posted.status !== 202) throw new Error(`the bench's webhook was answered ${posted.status}`);
    const env = { ...process.env, ...settings };
    const run = (args: readonly string[]): Promise<number> => timeNode(['bin/sms-relay.mjs', ...args], repoRoot, env);
    // One unmeasured run of each warms the OS file cache.
    for (const args of STORE_COMMANDS) await run(args);
    const baseline: number[] = [];
    const samples = STORE_COMMANDS.map((): number[] => []);
    for (let pass = 0; pass < runs; pass += 1) {
      baseline.push(await timeNode(['-e', '0'], repoRoot));
      for (const [index, args] of STORE_COMMANDS.entries()) samples[index]!.push(await run(args));
    }
    const baselineMs = median(baseline);
    return STORE_COMMANDS.map((args, index) => ({
      command: args.join(' '),
      ms: round(median(samples[index]!)),
      baselineMs: round(baselineMs),
      ratio: ratio(median(samples[index]!), baselineMs),
    }));
  } finally {
    await relay.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
