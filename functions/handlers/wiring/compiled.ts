import { compileConfig, type LoadedConfig } from '../../core/config/compile';
import type { RelayConfigView } from '../../core/config/view';
import type { RelayContext } from '../../relay/ports';
import type { LambdaRelay } from './context';

const compiled = new WeakMap<RelayConfigView, LoadedConfig>();
const contexts = new WeakMap<LambdaRelay, RelayContext<LoadedConfig>>();

/**
 * The relay's config with its templates, conditions and recipients compiled: what ingest needs.
 * A config loaded from YAML is compiled already; a staged one (`relay-config.json`) is compiled
 * here, once per process. Only ingest imports this module, so only its bundle holds LiquidJS and
 * libphonenumber.
 *
 * @throws {ConfigError} a template does not compile (cannot happen for a config staged by the stack)
 *
 * @example
 * ```ts
 * const { routes } = compiledConfig(relay.context.config, relay.env.configPath);
 * ```
 */
export function compiledConfig(config: RelayConfigView, source: string): LoadedConfig {
  if (isCompiled(config)) return config;
  let result = compiled.get(config);
  if (result === undefined) {
    // Staged at synth from the same config: its numbers are normalised and its options checked.
    result = compileConfig(config.settings, source, {
      recipientNumbers: (routeId) => config.routes.get(routeId)?.recipientNumbers,
      balanceNotify: config.balanceNotify,
    });
    compiled.set(config, result);
  }
  return result;
}

/**
 * The relay's relay context with the compiled config, for ingest; built once per relay.
 *
 * @example
 * ```ts
 * await ingestWebhook(ingestContext(relay), request);
 * ```
 */
export function ingestContext(relay: LambdaRelay): RelayContext<LoadedConfig> {
  let context = contexts.get(relay);
  if (context === undefined) {
    context = { ...relay.context, config: compiledConfig(relay.context.config, relay.env.configPath) };
    contexts.set(relay, context);
  }
  return context;
}

function isCompiled(config: RelayConfigView): config is LoadedConfig {
  for (const route of config.routes.values()) if (!('template' in route)) return false;
  return true;
}
