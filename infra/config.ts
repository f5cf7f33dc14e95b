import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../functions/core/config/errors';
import { parseConfig, readYaml } from '../functions/core/config/parse';
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
 * Lambda cannot call, `capture` without `deploy.allowCapture`, and a secret name another
 * `<configDir>/*.yaml` uses (see `deployProblems`).
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
 * A secret name this environment shares with another `<configDir>/*.yaml` (`config/local.yaml`
 * included: a copy of it keeps `sms-relay/local`). Two stacks cannot both create one secret, and
 * two environments must not share keys. Another file that does not parse is that file's problem,
 * reported when it is synthesized, and is skipped here.
 */
function sharedSecretProblems(env: string, config: RelayConfig, configDir: string): string[] {
  const name = secretName(env, config);
  const sharing: string[] = [];
  for (const file of readdirSync(configDir).filter((each) => each.endsWith('.yaml')).sort()) {
    const other = file.slice(0, -'.yaml'.length);
    if (other === env) continue;
    let raw: unknown;
    try {
      raw = readYaml(readFileSync(join(configDir, file), 'utf8'), file);
    } catch {
      continue;
    }
    const secrets = (raw as { secrets?: unknown } | null)?.secrets;
    if ((typeof secrets === 'string' && secrets !== '' ? secrets : `${SECRET_NAME_PREFIX}${other}`) === name) sharing.push(join(configDir, file));
  }
  if (sharing.length === 0) return [];
  return [
    `secrets: "${name}" is also the secret of ${sharing.join(', ')}; each environment needs its own (a second stack cannot create the same secret, and two environments must not share keys). ` +
      `Remove secrets to use "${SECRET_NAME_PREFIX}${env}", or name one no other environment uses`,
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
