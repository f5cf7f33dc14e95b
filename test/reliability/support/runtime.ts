import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { call } from './http';
import { appendLog, registerSecrets } from './logs';
import { snsDocuments } from '../../helpers/sns';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = 'bin/sms-relay.mjs';

/** How long a start may take (tsx compiles the handlers on first load) before it is a failure. */
const START_DEADLINE_MS = 60_000;
/** A graceful stop waits up to the runtime's own 15 s shutdown time-out, plus margin. */
const STOP_DEADLINE_MS = 30_000;

let sequence = 0;

/** A fresh temporary directory for one scenario: config, secrets and the data dir go under it. */
export function scratchDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `sms-relay-rel-${label}-`));
}

/** A port nobody listens on right now (bound then released by the OS). */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The environment of a child: only what a person's shell would pass, never the test runner's own
 * variables (VITEST, NODE_OPTIONS loaders), plus the given ones.
 */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ']) {
    const value = process.env[name];
    if (value !== undefined) base[name] = value;
  }
  return { ...base, NO_COLOR: '1', ...extra };
}

export interface ChildRun {
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Everything the child wrote so far, stdout and stderr interleaved as received. */
  output(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `node bin/sms-relay.mjs <args>` in the repository, capturing all output into the run's log directory. */
export function spawnCli(label: string, args: readonly string[], env: Record<string, string>): ChildRun {
  sequence += 1;
  const logFile = `${label}-${process.pid}-${sequence}.log`;
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const capture = (chunk: Buffer): void => {
    const piece = chunk.toString('utf8');
    text += piece;
    appendLog(logFile, piece);
  };
  child.stdout!.on('data', capture);
  child.stderr!.on('data', capture);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  return { child, logFile, output: () => text, exited };
}

/** Runs a CLI command to its end (bounded) and returns its exit code and output. */
export async function runCli(
  label: string,
  args: readonly string[],
  env: Record<string, string>,
  deadlineMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  const run = spawnCli(label, args, env);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), deadlineMs);
  const { code, signal } = await run.exited;
  clearTimeout(timer);
  if (signal === 'SIGKILL')
    throw new Error(`sms-relay ${args.join(' ')} did not finish within ${deadlineMs} ms:\n${run.output()}`);
  return { code, output: run.output() };
}

export interface RuntimeFiles {
  readonly dir: string;
  readonly configPath: string;
  readonly secretsPath: string;
  readonly dataDir: string;
}

/**
 * Writes a config and a secrets file into `dir` and registers the secret values for the leak check.
 * The data dir is `dir/data`: keep `dir` to restart a runtime on the same store.
 */
export function writeRuntimeFiles(dir: string, configYaml: string, secrets: Record<string, string>): RuntimeFiles {
  const configPath = join(dir, 'relay.yaml');
  const secretsPath = join(dir, 'secrets.json');
  writeFileSync(configPath, configYaml);
  writeFileSync(secretsPath, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  registerSecrets(Object.values(secrets));
  return { dir, configPath, secretsPath, dataDir: join(dir, 'data') };
}

export interface RuntimeOptions {
  readonly files: RuntimeFiles;
  readonly providerBaseUrl: string;
  readonly providerApiKey: string;
  /** Handler tuning: RETRY_MAX_ATTEMPTS, RETRY_BASE_DELAY_MS, STALE_SENDING_MS, … */
  readonly env?: Record<string, string>;
  readonly label: string;
}

export interface Runtime {
  readonly baseUrl: string;
  readonly port: number;
  readonly files: RuntimeFiles;
  readonly run: ChildRun;
  /** The CLI environment pointing at this runtime's files (for `redrive`, `logs`). */
  readonly cliEnv: Record<string, string>;
  /** SIGTERM and wait for a clean exit (bounded); returns the exit status. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL: the crash. */
  kill(): Promise<void>;
  alive(): boolean;
}

/**
 * Starts `sms-relay start` as a child process on a free loopback port, pointed at the given SMS
 * service, and waits until `GET /health` answers 200.
 *
 * @example
 * ```ts
 * const runtime = await startRuntime({ files, providerBaseUrl: sandbox.baseUrl, providerApiKey, label: 'load' });
 * await runtime.stop();
 * ```
 */
export async function startRuntime({
  files,
  providerBaseUrl,
  providerApiKey,
  env = {},
  label,
}: RuntimeOptions): Promise<Runtime> {
  registerSecrets([providerApiKey]);
  const port = await freePort();
  const cliEnv = {
    RELAY_CONFIG: files.configPath,
    RELAY_SECRETS_FILE: files.secretsPath,
    RELAY_DATA_DIR: files.dataDir,
    PROVIDER_BASE_URL: providerBaseUrl,
    PROVIDER_API_KEY: providerApiKey,
  };
  // Local runtime only: the test SNS certificate, served under its SNS URL to the `sns` route.
  const snsDocumentsPath = join(files.dir, 'sns-documents.json');
  writeFileSync(snsDocumentsPath, JSON.stringify(snsDocuments()));
  const run = spawnCli(`runtime-${label}`, ['start'], {
    ...cliEnv,
    PORT: String(port),
    RELAY_LOCAL_DOCUMENTS: snsDocumentsPath,
    ...env,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  let exitedEarly = false;
  void run.exited.then(() => {
    exitedEarly = true;
  });

  const deadline = Date.now() + START_DEADLINE_MS;
  for (;;) {
    if (exitedEarly) throw new Error(`sms-relay start (${label}) exited before it was healthy:\n${run.output()}`);
    try {
      const answer = await call(baseUrl, { path: '/health', timeoutMs: 2_000 });
      if (answer.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      run.child.kill('SIGKILL');
      throw new Error(`sms-relay start (${label}) not healthy within ${START_DEADLINE_MS} ms:\n${run.output()}`);
    }
    await sleep(200);
  }

  const alive = (): boolean => run.child.exitCode === null && run.child.signalCode === null;
  return {
    baseUrl,
    port,
    files,
    run,
    cliEnv,
    alive,
    stop: async () => {
      if (alive()) run.child.kill('SIGTERM');
      const timer = setTimeout(() => run.child.kill('SIGKILL'), STOP_DEADLINE_MS);
      const status = await run.exited;
      clearTimeout(timer);
      if (status.signal === 'SIGKILL')
        throw new Error(
          `sms-relay start (${label}) did not stop within ${STOP_DEADLINE_MS} ms of SIGTERM:\n${run.output().slice(-4000)}`,
        );
      return status;
    },
    kill: async () => {
      if (alive()) run.child.kill('SIGKILL');
      await run.exited;
    },
  };
}
