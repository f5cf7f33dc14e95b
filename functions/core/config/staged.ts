import type { LoadedConfig } from './compile';
import { ConfigError } from './errors';
import type { RelayConfig } from './schema';
import type { RelayConfigView, RouteView } from './view';

/** The `format` of a staged config; a JSON file without it is read as a config to validate. */
export const STAGED_CONFIG_FORMAT = 'sms-relay/staged-config@1';

/**
 * The config as the stack deploys it next to every handler (`relay-config.json`): validated and
 * compiled at synth, so a Lambda cold start neither parses YAML nor loads zod, and the handlers
 * that render nothing need neither LiquidJS nor libphonenumber for the numbers they use.
 */
export interface StagedConfig {
  readonly format: typeof STAGED_CONFIG_FORMAT;
  /** The validated config, every default applied and durations in seconds. */
  readonly config: RelayConfig;
  /** `balance.notify`, normalised, without repeats. */
  readonly balanceNotify: readonly string[];
  /** Per route, its `recipientNumbers`: per recipient entry, a literal's numbers normalised, `null` for a template. */
  readonly recipients: Readonly<Record<string, ReadonlyArray<readonly string[] | null>>>;
}

/**
 * The staged form of a loaded (validated and compiled) config.
 *
 * @example
 * ```ts
 * writeFileSync('relay-config.json', JSON.stringify(stageConfig(loadConfig(text, 'config/prod.yaml'))));
 * ```
 */
export function stageConfig(loaded: LoadedConfig): StagedConfig {
  return {
    format: STAGED_CONFIG_FORMAT,
    config: loaded.settings,
    balanceNotify: loaded.balanceNotify,
    recipients: Object.fromEntries([...loaded.routes.values()].map((route) => [route.id, route.recipientNumbers])),
  };
}

/**
 * Reads the text of a JSON config file: the staged config, or `undefined` when the JSON is not
 * one (a config written as JSON by hand, which must then be validated like a YAML one).
 *
 * @throws {ConfigError} the text is not JSON, or a staged config of another format or shape
 */
export function readStagedConfig(text: string, source = 'config'): StagedConfig | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(source, [`JSON: ${(error as Error).message}`], { cause: error });
  }
  if (value === null || typeof value !== 'object' || !('format' in value)) return undefined;
  const staged = value as Partial<StagedConfig>;
  if (staged.format !== STAGED_CONFIG_FORMAT) {
    throw new ConfigError(source, [
      `format: "${String(staged.format)}" is not ${STAGED_CONFIG_FORMAT}; stage the config again with this version`,
    ]);
  }
  const problems: string[] = [];
  const config = staged.config;
  if (
    config === null ||
    typeof config !== 'object' ||
    typeof config.provider !== 'object' ||
    config.routes === null ||
    typeof config.routes !== 'object'
  ) {
    problems.push('config: missing or not a validated relay config');
  }
  if (!Array.isArray(staged.balanceNotify)) problems.push('balanceNotify: missing');
  if (staged.recipients === null || typeof staged.recipients !== 'object') problems.push('recipients: missing');
  else if (problems.length === 0) {
    for (const [id, route] of Object.entries(config!.routes)) {
      const numbers = staged.recipients[id];
      if (!Array.isArray(numbers) || numbers.length !== route.recipients.length)
        problems.push(`recipients.${id}: missing or not one per recipient`);
    }
  }
  if (problems.length > 0) throw new ConfigError(source, problems);
  return staged as StagedConfig;
}

/**
 * The view of a staged config that the sender, the sweeper and the balance watch use: nothing to
 * compile, nothing to normalise.
 *
 * @example
 * ```ts
 * const view = configView(readStagedConfig(readFileSync(path, 'utf8'), path)!);
 * view.routes.get('orders')?.config.limits;
 * ```
 */
export function configView(staged: StagedConfig): RelayConfigView {
  const { config } = staged;
  const routes = new Map<string, RouteView>(
    Object.entries(config.routes).map(([id, route]) => [
      id,
      {
        id,
        config: route,
        senderId: route.senderId ?? config.provider.defaultSenderId,
        recipientNumbers: staged.recipients[id] ?? [],
      },
    ]),
  );
  return { settings: config, routes, balanceNotify: staged.balanceNotify };
}
