import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { loadConfigFile, type LoadedConfig } from '../../functions/core/config/load';
import type { RecordView } from '../../local/records';
import { signWebhook } from '../../local/runtime/signers';
import { operatorHeaders } from '../helpers/relay-operator';
import { signSnsMessage, snsDocuments, type SnsMessage } from '../helpers/sns';
import { openConsoleLink } from '../helpers/console-session';
export { eventually } from '../helpers/wait';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('../../examples/', import.meta.url));

/** Start-up compiles TypeScript on the fly and loads the whole relay: generous, on a loaded machine. */
export const STARTUP_TIMEOUT_MS = 90_000;

/** Variables a developer's shell may set that would change what these runs do. */
const INHERITED_SETTINGS = [
  'PORT',
  'RELAY_CONFIG',
  'RELAY_SECRETS_FILE',
  'RELAY_DATA_DIR',
  'RELAY_LOG_FORMAT',
  'RELAY_CRASH_AT',
  'RELAY_LOCAL_CLOCK',
  'PROVIDER_BASE_URL',
  'PROVIDER_API_KEY',
  'MAX_BODY_BYTES',
  'RETRY_MAX_ATTEMPTS',
  'RETRY_BASE_DELAY_MS',
  'STALE_SENDING_MS',
  'SWEEP_PENDING_GRACE_MS',
  'TABLE_NAME',
  'DYNAMODB_ENDPOINT',
  'SECRET_ID',
  'SANDBOX_API_KEY',
  'POWERTOOLS_LOG_LEVEL',
  'POWERTOOLS_DEV',
] as const;

/** The test process's environment without relay settings, plus `extra`. */
export function cleanEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of INHERITED_SETTINGS) delete env[name];
  return { ...env, ...extra };
}

/** A port nobody listens on right now (the OS's choice for a moment). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match in stdout; rejects when the process exits first or on time-out. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `node bin/sms-relay.mjs <args>` from the repository root.
 *
 * @example
 * ```ts
 * const relay = spawnCli(['start'], cleanEnv({ PORT: '0' }));
 * await relay.waitFor(/Health\s+(\S+)\/health/);
 * ```
 */
export function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv): CliProcess {
  const child = spawn(process.execPath, ['bin/sms-relay.mjs', ...args], { cwd: REPO_ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (pattern: RegExp, timeoutMs = STARTUP_TIMEOUT_MS): Promise<RegExpMatchArray> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = pattern.exec(stdout);
        if (match === null) return false;
        cleanup();
        resolve(match);
        return true;
      };
      const onData = (): void => void check();
      const onExit = (): void => {
        // Output may still be buffered when 'exit' fires.
        setImmediate(() => {
          if (check()) return;
          cleanup();
          reject(new Error(`exited before ${String(pattern)}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        });
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no ${String(pattern)} within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.off('exit', onExit);
      };
      if (!check()) {
        child.stdout.on('data', onData);
        child.once('exit', onExit);
      }
    });
  return { child, stdout: () => stdout, stderr: () => stderr, waitFor, exited };
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a CLI command to its end. */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const run = spawnCli(args, env);
  run.child.stdin.end();
  const { code } = await run.exited;
  // 'exit' can come before the pipes are drained.
  await new Promise<void>((resolve) =>
    run.child.stdout.readableEnded ? resolve() : run.child.stdout.once('end', () => resolve()),
  );
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

export interface RelayProcess extends CliProcess {
  /** `http://127.0.0.1:<port>` from the banner. */
  readonly url: string;
  /** The in-process sandbox's base URL from the banner, when there is one. */
  readonly sandboxUrl: string | undefined;
  readonly banner: string;
}

/**
 * Starts the runtime as a child process and waits for its banner.
 *
 * @example
 * ```ts
 * const relay = await startRelay(cleanEnv({ PORT: '0', RELAY_DATA_DIR: dir }));
 * await fetch(`${relay.url}/health`);
 * ```
 */
export async function startRelay(env: NodeJS.ProcessEnv): Promise<RelayProcess> {
  const run = spawnCli(['start'], env);
  const [, url] = await run.waitFor(/Health\s+(http:\/\/127\.0\.0\.1:\d+)\/health/);
  // The banner is one write; everything up to the stop hint is there once the health line is.
  const banner = (await run.waitFor(/^[\s\S]*Stop: Ctrl-C/))[0];
  const sandbox = /Inbox\s+(http:\/\/127\.0\.0\.1:\d+)\/_sandbox\/messages/.exec(banner);
  return { ...run, url: url!, sandboxUrl: sandbox?.[1], banner };
}

/** A runtime started by {@link startRelayOn}: its environment (for CLI commands) and its secrets file's values. */
export interface RelayOnSandbox {
  readonly relay: RelayProcess;
  readonly env: NodeJS.ProcessEnv;
  readonly secrets: Record<string, string>;
  /** With `movableClock`: the `RELAY_LOCAL_CLOCK` file that {@link moveClockAhead} writes. */
  readonly clockFile?: string;
}

/**
 * Starts the runtime on `dir/relay.yaml` (written by the caller) with its data and secrets in
 * `dir`, and the test's own SMS service at `providerUrl` instead of the in-process sandbox.
 *
 * @example
 * ```ts
 * const { relay, env, secrets } = await startRelayOn(dir, { providerUrl: sandbox.baseUrl, apiKey: API_KEY });
 * ```
 */
export async function startRelayOn(
  dir: string,
  {
    providerUrl,
    apiKey,
    movableClock = false,
  }: { readonly providerUrl: string; readonly apiKey: string; readonly movableClock?: boolean },
): Promise<RelayOnSandbox> {
  const clockFile = join(dir, 'clock');
  if (movableClock) writeFileSync(clockFile, '0');
  const env = cleanEnv({
    PORT: '0',
    RELAY_CONFIG: join(dir, 'relay.yaml'),
    RELAY_DATA_DIR: join(dir, 'data'),
    RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    PROVIDER_BASE_URL: providerUrl,
    PROVIDER_API_KEY: apiKey,
  });
  const relay = await startRelay(movableClock ? { ...env, RELAY_LOCAL_CLOCK: clockFile } : env);
  return {
    relay,
    env,
    secrets: readJsonFile<Record<string, string>>(join(dir, 'secrets.json')),
    ...(movableClock ? { clockFile } : {}),
  };
}

/**
 * Moves the clock of a runtime started with `movableClock` to `ms` ahead of the system clock: the
 * minutes a test would otherwise wait for (quiet hours ending, a heartbeat's silence) pass at once,
 * and the runtime's sweeper acts on them as it would in real time. Written whole, then renamed over
 * the file the runtime reads, so it never reads half a number.
 */
export function moveClockAhead({ clockFile }: RelayOnSandbox, ms: number): void {
  if (clockFile === undefined) throw new Error('the runtime was not started with movableClock');
  writeFileSync(`${clockFile}.next`, String(ms));
  renameSync(`${clockFile}.next`, clockFile);
}

/** Stops a runtime with a signal and returns how it exited. */
export async function stopRelay(
  relay: CliProcess,
  signal: NodeJS.Signals = 'SIGINT',
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (relay.child.exitCode === null && relay.child.signalCode === null) relay.child.kill(signal);
  return await relay.exited;
}

/** A fixture's exact bytes. */
export function fixture(path: string): Buffer {
  return readFileSync(`${FIXTURES}${path}`);
}

export interface SignedRequest {
  readonly route: string;
  readonly body: Buffer;
  readonly headers: Record<string, string>;
}

let localConfig: LoadedConfig | undefined;

/**
 * A fixture signed as `source` would sign it, ready to post (and to post again, identically), for
 * `route` of config/local.yaml (whose settings describe an `hmac` route's scheme). An SNS fixture is
 * first signed now with the test key, as SNS would have signed it: the runtime trusts the test
 * certificate through {@link writeSnsDocuments} only.
 */
export function signedRequest(
  route: string,
  source: string,
  path: string,
  secret: string,
  headers: Record<string, string> = {},
): SignedRequest {
  const body =
    source === 'sns'
      ? Buffer.from(
          JSON.stringify(signSnsMessage(JSON.parse(fixture(path).toString('utf8')) as SnsMessage, { at: new Date() })),
        )
      : fixture(path);
  localConfig ??= loadConfigFile(`${REPO_ROOT}config/local.yaml`);
  return {
    route,
    body,
    headers: signWebhook(source, { body, secret, headers, route: localConfig.routes.get(route)?.config }),
  };
}

export async function post(
  url: string,
  request: SignedRequest,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/hooks/${request.route}`, {
    method: 'POST',
    headers: request.headers,
    body: request.body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

export function readJsonFile<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** Tanzanian mobile numbers in full, in the forms the relay reads: `255…`, `+255 …`, national `07…`. */
export const FULL_NUMBER = /(?<!\d)(?:\+?255[ -]?\d{3}[ -]?\d{3}[ -]?\d{3}|0[67]\d{2}[ -]?\d{3}[ -]?\d{3})(?!\d)/g;

/** The SMS the sandbox delivered, as its control endpoint lists them. */
export interface InboxMessage {
  readonly id: string;
  readonly phoneNumbers: readonly string[];
  readonly message: string;
  readonly senderId: string;
  readonly deducted: number;
  readonly remainingBalance: number;
}

export async function inbox(sandboxUrl: string): Promise<InboxMessage[]> {
  return (await getJson<{ messages: InboxMessage[] }>(`${sandboxUrl}/_sandbox/messages`)).messages;
}

/** A record as `logs --json` and `/_relay/records` show it: the runtime's own view. */
export type RecordJson = RecordView;

export async function records(relayUrl: string, query = ''): Promise<RecordJson[]> {
  const response = await fetch(`${relayUrl}/_relay/records${query === '' ? '' : `?${query}`}`, {
    headers: await operatorHeaders(relayUrl),
  });
  if (!response.ok) throw new Error(`GET /_relay/records answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { records: RecordJson[] }).records;
}

/**
 * Writes the file `RELAY_LOCAL_DOCUMENTS` names for the runtime under test: the test SNS
 * certificate under its SNS URL, plus `extra` (a confirmation URL's answer). Returns its path.
 */
export function writeSnsDocuments(path: string, extra: Record<string, string> = {}): string {
  writeFileSync(path, JSON.stringify(snsDocuments(extra)));
  return path;
}

/**
 * Signs in to a running relay's console as a browser would: opens the banner's one-time link and
 * returns the headers of a console POST (the session cookie, the page token, JSON).
 */
export async function consoleSession(relay: Pick<RelayProcess, 'banner'>): Promise<Record<string, string>> {
  const link = /Console\s+(http:\/\/127\.0\.0\.1:\d+\/console\/\?token=[\w-]+)/.exec(relay.banner)?.[1];
  if (link === undefined) throw new Error('the banner carries no console link');
  return { ...(await openConsoleLink(link)).headers, 'content-type': 'application/json' };
}
