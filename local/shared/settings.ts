import { isAbsolute, relative, resolve } from 'node:path';
import { MAX_BODY_BYTES } from '../../functions/core/defaults';
import { retryPolicyOf, type RetryPolicy } from '../../functions/relay/ports';
import { ENV, httpUrlProblem, readNumericEnv } from '../../functions/core/environment';
import { CrashPoint, isCrashPoint } from './crash-points';
import { invalidSetting } from './errors';

/** Defaults of the local runtime; each can be changed by the environment variable or option named. */
export const RUNTIME_DEFAULTS = {
  /** `PORT` / `--port`; `0` picks a free port and the banner shows it. */
  port: 3000,
  /** Loopback only: the runtime holds local secrets and answers local-only `/_relay` requests. */
  host: '127.0.0.1',
  /** `RELAY_CONFIG` / `--config` */
  configPath: 'config/local.yaml',
  /** `RELAY_SECRETS_FILE` / `--secrets` */
  secretsPath: '.relay/secrets.json',
  /** `RELAY_DATA_DIR` / `--data-dir` */
  dataDir: '.relay/data',
  /** The table's name inside the local store (the deployed one gets a generated name). */
  tableName: 'sms-relay',
  /** How often the sweeper runs: it is what sends retries, redrives and records left by a restart. */
  sweepIntervalMs: 1_000,
  /** How long Ctrl-C waits for sends in flight before closing the store anyway. */
  shutdownTimeoutMs: 15_000,
  /** {@link MAX_BODY_BYTES}, `MAX_BODY_BYTES` */
  maxBodyBytes: MAX_BODY_BYTES,
} as const;

export interface RuntimeSettings {
  readonly port: number;
  readonly host: string;
  /** Absolute paths. */
  readonly configPath: string;
  readonly secretsPath: string;
  readonly dataDir: string;
  readonly tableName: string;
  /** Set: use this SMS service instead of starting the sandbox. */
  readonly providerBaseUrl: string | undefined;
  /** Set: overrides `providerApiKey` from the secrets file. Never printed. */
  readonly providerApiKey: string | undefined;
  readonly maxBodyBytes: number;
  /** The sender's retries: `RETRY_MAX_ATTEMPTS`, `RETRY_BASE_DELAY_MS`, `STALE_SENDING_MS`, as on Lambda. */
  readonly policy: RetryPolicy;
  readonly sweepIntervalMs: number;
  readonly shutdownTimeoutMs: number;
  /** Print the handlers' JSON log lines as they are instead of one human line per event. */
  readonly jsonLogs: boolean;
  /** Tests only: `RELAY_LOCAL_DOCUMENTS`, a file of URLs the source packs' fetches get from it (see `local-documents.ts`). */
  readonly localDocumentsPath?: string;
  /** Tests only: `RELAY_CRASH_AT`, the moment the runtime kills itself at (see `crash-points.ts`). */
  readonly crashAt?: CrashPoint;
  /** Tests only: `RELAY_LOCAL_CLOCK`, a file saying how far the runtime's clock runs ahead (see `local-clock.ts`). */
  readonly localClockPath?: string;
}

/** What the command line and the environment supply; anything missing takes its default. */
export interface RuntimeSettingsInput {
  readonly port?: string | number;
  readonly config?: string;
  readonly secrets?: string;
  readonly dataDir?: string;
  readonly providerUrl?: string;
  readonly jsonLogs?: boolean;
}

/**
 * Turns options and environment variables into checked settings: `PORT`, `RELAY_CONFIG`,
 * `RELAY_SECRETS_FILE`, `RELAY_DATA_DIR`, `PROVIDER_BASE_URL`, `PROVIDER_API_KEY`, `MAX_BODY_BYTES`,
 * `RELAY_LOG_FORMAT=json`. Options win over the environment.
 *
 * @throws {RuntimeError} a value that cannot be used, named with its variable
 *
 * @example
 * ```ts
 * const settings = resolveRuntimeSettings({ port: '0' }, process.env);
 * settings.dataDir; // '/home/me/sms-relay/.relay/data'
 * ```
 */
export function resolveRuntimeSettings(
  input: RuntimeSettingsInput,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): RuntimeSettings {
  const text = (value: string | undefined): string | undefined =>
    value === undefined || value.trim() === '' ? undefined : value.trim();
  const providerBaseUrl = text(input.providerUrl) ?? text(env[ENV.providerBaseUrl]);
  if (providerBaseUrl !== undefined) checkUrl(ENV.providerBaseUrl, providerBaseUrl);
  const { values, problems } = readNumericEnv(env, [
    'maxBodyBytes',
    'retryMaxAttempts',
    'retryBaseDelayMs',
    'staleSendingMs',
  ]);
  const [problem] = problems;
  if (problem !== undefined) {
    throw invalidSetting(
      problem.name,
      `expected a whole number${problem.min === 0 ? '' : ` above ${problem.min - 1}`}, got "${problem.raw}"`,
    );
  }
  const crashAt = text(env['RELAY_CRASH_AT']);
  if (crashAt !== undefined && !isCrashPoint(crashAt))
    throw invalidSetting('RELAY_CRASH_AT', `expected one of ${Object.values(CrashPoint).join(', ')}, got "${crashAt}"`);
  return {
    port: parsePort(String(input.port ?? text(env['PORT']) ?? RUNTIME_DEFAULTS.port)),
    host: RUNTIME_DEFAULTS.host,
    configPath: resolve(cwd, text(input.config) ?? text(env[ENV.relayConfig]) ?? RUNTIME_DEFAULTS.configPath),
    secretsPath: resolve(cwd, text(input.secrets) ?? text(env[ENV.secretsFile]) ?? RUNTIME_DEFAULTS.secretsPath),
    dataDir: resolve(cwd, text(input.dataDir) ?? text(env['RELAY_DATA_DIR']) ?? RUNTIME_DEFAULTS.dataDir),
    tableName: RUNTIME_DEFAULTS.tableName,
    providerBaseUrl,
    // Not trimmed: a key is whatever the service issued.
    providerApiKey: env[ENV.providerApiKey] === '' ? undefined : env[ENV.providerApiKey],
    maxBodyBytes: values.maxBodyBytes,
    policy: retryPolicyOf(values),
    sweepIntervalMs: RUNTIME_DEFAULTS.sweepIntervalMs,
    shutdownTimeoutMs: RUNTIME_DEFAULTS.shutdownTimeoutMs,
    jsonLogs: input.jsonLogs === true || text(env['RELAY_LOG_FORMAT'])?.toLowerCase() === 'json',
    ...(text(env['RELAY_LOCAL_DOCUMENTS']) === undefined
      ? {}
      : { localDocumentsPath: resolve(cwd, text(env['RELAY_LOCAL_DOCUMENTS'])!) }),
    ...(crashAt === undefined ? {} : { crashAt }),
    ...(text(env['RELAY_LOCAL_CLOCK']) === undefined
      ? {}
      : { localClockPath: resolve(cwd, text(env['RELAY_LOCAL_CLOCK'])!) }),
  };
}

/**
 * A port number from text: an integer from 0 to 65535.
 *
 * @example
 * ```ts
 * parsePort('0'); // 0, a free port
 * ```
 */
export function parsePort(value: string, setting = 'PORT'): number {
  const port = Number(value);
  if (!/^\d{1,5}$/.test(value.trim()) || port > 65_535) {
    throw invalidSetting(setting, `expected a port from 0 to 65535 (0 picks a free one), got "${value}"`);
  }
  return port;
}

function checkUrl(setting: string, value: string): void {
  const problem = httpUrlProblem(value);
  if (problem === 'not-a-url') throw invalidSetting(setting, `"${value}" is not a URL`);
  if (problem === 'not-http') throw invalidSetting(setting, 'expected an http(s) URL');
  if (problem === 'credentials')
    throw invalidSetting(setting, `must not contain credentials; use ${ENV.providerApiKey}`);
}

/**
 * A path as a person would type it from here: relative when inside the working directory.
 *
 * @example
 * ```ts
 * displayPath('/work/main/.relay/secrets.json', '/work/main'); // '.relay/secrets.json'
 * ```
 */
export function displayPath(path: string, cwd: string = process.cwd()): string {
  const shown = relative(cwd, path);
  return shown === '' ? '.' : shown.startsWith('..') || isAbsolute(shown) ? path : shown;
}

/** A file or directory setting of the CLI commands: the option, else its environment variable, else the default. */
export const LOCAL_PATHS = {
  config: { env: ENV.relayConfig, fallback: RUNTIME_DEFAULTS.configPath },
  secrets: { env: ENV.secretsFile, fallback: RUNTIME_DEFAULTS.secretsPath },
  dataDir: { env: 'RELAY_DATA_DIR', fallback: RUNTIME_DEFAULTS.dataDir },
} as const;

/**
 * The absolute path a command uses for `kind`, the same way `start` finds it.
 *
 * @example
 * ```ts
 * localPath('dataDir', options.dataDir); // $RELAY_DATA_DIR or ./.relay/data, absolute
 * ```
 */
export function localPath(
  kind: keyof typeof LOCAL_PATHS,
  option: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): string {
  const { env: name, fallback } = LOCAL_PATHS[kind];
  const chosen = [option, env[name]].find((value) => value !== undefined && value.trim() !== '');
  return resolve(cwd, chosen?.trim() ?? fallback);
}
