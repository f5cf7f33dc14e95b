import { BALANCE_SCHEDULE } from '../../core/defaults';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../core/config/errors';
import { configView, readStagedConfig } from '../../core/config/staged';
import type { RelayConfigView } from '../../core/config/view';
import type { LoadedConfig } from '../../core/config/compile';
import type { RelayEnvironment } from './env';

/**
 * Loads the relay config named by `RELAY_CONFIG` and applies the environment's overrides:
 * `PROVIDER_BASE_URL` replaces `provider.baseUrl` (the sandbox locally), `BALANCE_THRESHOLD`
 * replaces `balance.threshold`. Read once per process.
 *
 * - A `.json` file staged by the stack (`relay-config.json`, see `core/config/staged.ts`) was
 *   validated and compiled at synth: it is read as it is, without yaml, zod, LiquidJS or
 *   libphonenumber. Ingest compiles its templates from it (`compiledConfig`).
 * - Any other file (`config/<env>.yaml` in the local runtime, a config written as plain JSON) is
 *   parsed, validated and compiled by `core/config/load.ts`, imported only then, so the Lambda
 *   bundles never evaluate it; the result is a compiled `LoadedConfig`.
 *
 * @throws {ConfigError} the file is missing or invalid
 *
 * @example
 * ```ts
 * const config = await loadRelayConfig(readEnvironment());
 * config.routes.get('alerts')?.config.limits;
 * ```
 */
export async function loadRelayConfig(
  env: Pick<RelayEnvironment, 'configPath' | 'providerBaseUrl' | 'balanceThreshold'>,
): Promise<RelayConfigView> {
  return withOverrides(await readConfigFile(env.configPath), env);
}

async function readConfigFile(path: string): Promise<RelayConfigView> {
  if (path.toLowerCase().endsWith('.json')) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ConfigError(path, [`cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`], {
        cause: error,
      });
    }
    const staged = readStagedConfig(text, path);
    if (staged !== undefined) return configView(staged);
  }
  const { loadConfigFile } = await importConfigLoader();
  return loadConfigFile(path);
}

/**
 * In a bundle, `infra/bundle.ts` defines this as the path of `config-loader.mjs` beside `index.mjs`,
 * so the loader (with yaml and zod) is not bundled into the handler; running the sources (the local
 * runtime through tsx, the tests), it is not defined and the module is imported directly.
 */
declare const SMS_RELAY_CONFIG_LOADER: string | undefined;

type ConfigLoader = typeof import('../../core/config/load');

const compiledLater = new WeakMap<RelayConfigView, Promise<LoadedConfig>>();

/**
 * The config with its templates compiled, for a handler other than ingest that needs one rarely
 * (the sweeper's digest templates): the compiler comes from the config loader beside the bundle,
 * imported on the first call only, so the handler's own bundle holds no LiquidJS. Once per process.
 *
 * @example
 * ```ts
 * const { routes } = await compileLater(relay.context.config, relay.env.configPath);
 * ```
 */
export function compileLater(config: RelayConfigView, source: string): Promise<LoadedConfig> {
  let compiled = compiledLater.get(config);
  if (compiled === undefined) {
    compiled = importConfigLoader().then(({ compileConfig }) =>
      // Staged at synth from the same config: its numbers are normalised and its options checked.
      compileConfig(config.settings, source, {
        recipientNumbers: (routeId) => config.routes.get(routeId)?.recipientNumbers,
        balanceNotify: config.balanceNotify,
      }),
    );
    compiledLater.set(config, compiled);
  }
  return compiled;
}

async function importConfigLoader(): Promise<ConfigLoader> {
  return typeof SMS_RELAY_CONFIG_LOADER === 'string'
    ? ((await import(new URL(SMS_RELAY_CONFIG_LOADER, import.meta.url).href)) as ConfigLoader)
    : await import('../../core/config/load');
}

function withOverrides<Config extends RelayConfigView>(
  loaded: Config,
  env: Pick<RelayEnvironment, 'providerBaseUrl' | 'balanceThreshold'>,
): Config {
  const { settings: config } = loaded;
  if (env.providerBaseUrl === undefined && env.balanceThreshold === undefined) return loaded;
  return {
    ...loaded,
    settings: {
      ...config,
      provider: { ...config.provider, ...(env.providerBaseUrl === undefined ? {} : { baseUrl: env.providerBaseUrl }) },
      ...(env.balanceThreshold === undefined
        ? {}
        : {
            balance: {
              // Without a `balance` block there is nobody to notify: the watch only logs and publishes.
              notify: [],
              schedule: BALANCE_SCHEDULE,
              ...config.balance,
              threshold: env.balanceThreshold,
            },
          }),
    },
  };
}
