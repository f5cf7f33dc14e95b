import { loadConfigFile, type LoadedConfig } from '../../core/config/load';
import type { RelayEnvironment } from './env';

/**
 * Loads the relay config named by `RELAY_CONFIG` and applies the environment's overrides:
 * `PROVIDER_BASE_URL` replaces `provider.baseUrl` (the sandbox locally), `BALANCE_THRESHOLD`
 * replaces `balance.threshold`. Read once per process: templates and recipients are compiled here,
 * which is most of a cold start's own work.
 *
 * @throws {ConfigError} the file is missing or invalid
 *
 * @example
 * ```ts
 * const loaded = loadRelayConfig(readEnvironment());
 * loaded.routes.get('alerts')?.pack.name; // 'alertmanager'
 * ```
 */
export function loadRelayConfig(env: Pick<RelayEnvironment, 'configPath' | 'providerBaseUrl' | 'balanceThreshold'>): LoadedConfig {
  const loaded = loadConfigFile(env.configPath);
  const { config } = loaded;
  if (env.providerBaseUrl === undefined && env.balanceThreshold === undefined) return loaded;
  return {
    ...loaded,
    config: {
      ...config,
      provider: { ...config.provider, ...(env.providerBaseUrl === undefined ? {} : { baseUrl: env.providerBaseUrl }) },
      ...(env.balanceThreshold === undefined
        ? {}
        : {
            balance: {
              // Without a `balance` block there is nobody to notify: the watch only logs and publishes.
              notify: [],
              schedule: 'rate(1 hour)',
              ...config.balance,
              threshold: env.balanceThreshold,
            },
          }),
    },
  };
}
