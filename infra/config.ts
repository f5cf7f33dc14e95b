import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../functions/core/config/errors';
import { parseConfig } from '../functions/core/config/parse';
import { SECRET_NAME_PREFIX } from '../functions/core/defaults';
import { deployProblems, LOCAL_ENVIRONMENT, secretName } from './deployable';
import type { RelayConfig } from '../functions/core/config/schema';

/** An environment's validated config together with the exact text it came from. */
export interface EnvironmentConfig {
  readonly config: RelayConfig;
  /** Where the text was read, as given (relative paths stay relative). */
  readonly path: string;
  /** The file's text, byte for byte: this is what the functions are deployed with. */
  readonly text: string;
}

export interface ReadEnvironmentConfigOptions {
  /**
   * The directory holding `<env>.yaml`.
   * @default 'config'
   */
  readonly configDir?: string;
}

// Environment names become stack names and file names: keep them to what both accept, and keep
// `../` out of the path.
const ENVIRONMENT_NAME = /^[a-z][a-z0-9-]{0,30}$/;

/**
 * Reads and validates `<configDir>/<env>.yaml` for deployment. Every problem surfaces as a
 * `ConfigError` whose message lists them all, so a broken config fails `cdk synth` before anything
 * is built. Beyond the schema, refused: `local` (the local runtime's config), a provider URL a
 * Lambda cannot call, a provider time-out the functions have no room for, `capture` without
 * `deploy.allowCapture` (see `deployProblems`), and a secret name that is another environment's.
 *
 * @example
 * ```ts
 * const { config, text } = readEnvironmentConfig('prod');
 * config.secrets; // 'sms-relay/prod'
 * ```
 */
export function readEnvironmentConfig(env: string, options: ReadEnvironmentConfigOptions = {}): EnvironmentConfig {
  const configDir = options.configDir ?? 'config';
  if (!ENVIRONMENT_NAME.test(env)) {
    throw new ConfigError(env, [
      'environment names are lower-case letters, digits and dashes, starting with a letter (at most 31)',
    ]);
  }
  const path = join(configDir, `${env}.yaml`);
  if (env === LOCAL_ENVIRONMENT) {
    throw new ConfigError(path, [
      `${path} is the local runtime's config (npm start) and is never deployed: its provider is the sandbox on 127.0.0.1, its secrets are the file .relay/secrets.json and every route captures payloads. ` +
        `Deploy an environment of its own instead, e.g. cp ${join(configDir, 'staging.yaml')} ${join(configDir, '<env>.yaml')}`,
    ]);
  }
  if (!existsSync(path)) {
    const known = listEnvironments(configDir);
    throw new ConfigError(path, [
      `no such file; ${known.length > 0 ? `environments in ${configDir}: ${known.join(', ')}` : `${configDir} holds no <env>.yaml files`}`,
    ]);
  }
  const text = readFileSync(path, 'utf8');
  const config = parseConfig(text, path);
  const problems = [...deployProblems(config), ...sharedSecretProblems(env, config, configDir)];
  if (problems.length > 0) throw new ConfigError(path, problems);
  return { config, path, text };
}

/**
 * This environment's secret name when it is another environment's own: `sms-relay/<other>` (the
 * default of `<configDir>/<other>.yaml`, `config/local.yaml` included: a copy of it keeps
 * `secrets: sms-relay/local`). Two stacks cannot both create one secret, and two environments must
 * not share keys. Only the environment being synthesized is judged, and only for taking a name
 * that is plainly another's: a stray `config/prod2.yaml` copied from `prod.yaml` (so naming
 * `sms-relay/prod`) is refused when prod2 is synthesized, never when prod is, and the advice (drop
 * `secrets` from this file) changes the name.
 */
function sharedSecretProblems(env: string, config: RelayConfig, configDir: string): string[] {
  const name = secretName(env, config);
  if (!name.startsWith(SECRET_NAME_PREFIX)) return [];
  const owner = name.slice(SECRET_NAME_PREFIX.length);
  if (owner === env || !existsSync(join(configDir, `${owner}.yaml`))) return [];
  const own = `${SECRET_NAME_PREFIX}${env}`;
  return [
    `secrets: "${name}" is the secret of environment ${owner} (${join(configDir, `${owner}.yaml`)}); each environment needs its own (a second stack cannot create the same secret, and two environments must not share keys). ` +
      `Remove the secrets line from ${join(configDir, `${env}.yaml`)} to use "${own}", or name one no other environment uses`,
  ];
}

/**
 * The deployable environment names with a config file in `configDir`, sorted (`local` is the
 * local runtime's, never deployed).
 *
 * @example
 * ```ts
 * listEnvironments(); // ['dev', 'prod']
 * ```
 */
export function listEnvironments(configDir = 'config'): string[] {
  if (!existsSync(configDir)) return [];
  return readdirSync(configDir)
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => file.slice(0, -'.yaml'.length))
    .filter((name) => ENVIRONMENT_NAME.test(name) && name !== LOCAL_ENVIRONMENT)
    .sort();
}

/**
 * A true/false `cdk -c <key>=…` context value: `undefined` when not given; anything else is refused
 * with a message naming the key (a typo must not silently keep the default).
 *
 * @example
 * ```ts
 * readContextFlag('true', 'keepRetiredIndexes'); // true
 * ```
 */
export function readContextFlag(value: unknown, key: string): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new ConfigError(`-c ${key}`, [`${key}: must be true or false, got "${String(value)}"`]);
}
