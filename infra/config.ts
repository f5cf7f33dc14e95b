import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../functions/core/config/errors';
import { parseConfig } from '../functions/core/config/parse';
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
 * Reads and validates `<configDir>/<env>.yaml`. Every problem surfaces as a `ConfigError` whose
 * message lists them all, so a broken config fails `cdk synth` before anything is built.
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
    throw new ConfigError(env, ['environment names are lower-case letters, digits and dashes, starting with a letter (at most 31)']);
  }
  const path = join(configDir, `${env}.yaml`);
  if (!existsSync(path)) {
    const known = listEnvironments(configDir);
    throw new ConfigError(path, [
      `no such file; ${known.length > 0 ? `environments in ${configDir}: ${known.join(', ')}` : `${configDir} holds no <env>.yaml files`}`,
    ]);
  }
  const text = readFileSync(path, 'utf8');
  return { config: parseConfig(text, path), path, text };
}

/**
 * The environment names with a config file in `configDir`, sorted.
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
    .filter((name) => ENVIRONMENT_NAME.test(name))
    .sort();
}
