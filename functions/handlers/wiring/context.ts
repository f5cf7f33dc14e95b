import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { RelayConfigView } from '../../core/config/view';
import { createStore } from '../../store/store';
import { staleSendingProblem, type RelayContext, type SecretSource } from '../../relay/ports';
import { reportUndecodable } from '../../relay/undecodable';
import { loadRelayConfig } from './config';
import { createDynamoClient } from './dynamo';
import { ENV, readEnvironment, type RelayEnvironment, type SecretLocation } from './env';
import { SecretUnavailableError } from '../../adapters/errors';
import { EnvironmentError } from './errors';
import { createLogger, relayLogger } from '../../adapters/logger';
import { createMetrics, relayMetrics } from './metrics';
import { createFileSecretSource, createSecretsManagerSource } from '../../adapters/secrets';
import { createSmsClientSource } from '../../adapters/sms';
import { createProviderSource } from '../../adapters/providers';

/** The process's Powertools logger and metrics; they exist even when the context cannot be built. */
export interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/**
 * Everything a handler needs, built once per process. The context's config is the view the
 * sender, the sweeper and the balance watch use; ingest gets the compiled one from `ingestContext`.
 */
export interface LambdaRelay extends Observability {
  readonly env: RelayEnvironment;
  /** Where the provider key is read (the context's `secrets` are the route secrets). */
  readonly providerSecrets: SecretSource;
  readonly context: RelayContext<RelayConfigView>;
}

let observed: Observability | undefined;
let building: Promise<LambdaRelay> | undefined;

/**
 * The process's logger and metrics, created on first use (so importing a handler reads no
 * environment).
 *
 * @example
 * ```ts
 * const { logger } = observability();
 * ```
 */
export function observability(): Observability {
  observed ??= { logger: createLogger(), metrics: createMetrics() };
  return observed;
}

/**
 * The process's {@link LambdaRelay}: environment, config, DynamoDB client, secret source, SMS
 * client source, logger and metrics. Built on first call and reused by every later invocation of
 * the container; nothing in it touches the network until used (the secret is read on first need,
 * the SMS client connects on first send). A failed build is not remembered, so the next invocation
 * tries again (a config fixed by a deploy, a secret created late). Asynchronous because a YAML
 * config's loader is imported only when one is used (see `loadRelayConfig`); concurrent callers
 * share one build.
 *
 * @throws {EnvironmentError} the environment is incomplete (as a rejection)
 * @throws {ConfigError} the config file is missing or invalid (as a rejection)
 *
 * @example
 * ```ts
 * export const handler = async (event: ScheduledEvent) => sweep((await lambdaRelay()).context);
 * ```
 */
export function lambdaRelay(): Promise<LambdaRelay> {
  if (building !== undefined) return building;
  const attempt = buildLambdaRelay();
  building = attempt;
  attempt.catch(() => {
    if (building === attempt) building = undefined;
  });
  return attempt;
}

async function buildLambdaRelay(): Promise<LambdaRelay> {
  const env = readEnvironment();
  const { logger, metrics } = observability();
  const sources = secretSources(env.secrets);
  return {
    env,
    logger,
    metrics,
    providerSecrets: sources.provider,
    context: await createRelayContext(env, { logger, metrics }, sources),
  };
}

/**
 * Forgets the wiring, so the next invocation builds it from the environment again: for tests, and
 * for a process that reloads its config.
 *
 * @example
 * ```ts
 * afterEach(() => resetLambdaRelay());
 * ```
 */
export function resetLambdaRelay(): void {
  building = undefined;
  observed = undefined;
}

/**
 * Builds a {@link RelayContext} from a read environment.
 *
 * @example
 * ```ts
 * const context = await createRelayContext(readEnvironment(), { logger: createLogger(), metrics: createMetrics() });
 * ```
 */
export async function createRelayContext(
  env: RelayEnvironment,
  { logger, metrics }: Observability,
  sources: SecretSources = secretSources(env.secrets),
): Promise<RelayContext<RelayConfigView>> {
  const config = await loadRelayConfig(env);
  const stale = staleSendingProblem(env.policy.staleSendingMs, config.settings.provider.timeoutMs);
  if (stale !== undefined) throw new EnvironmentError([stale]);
  const relayLog = relayLogger(logger);
  const relayMetric = relayMetrics(metrics);
  const store = createStore({
    client: createDynamoClient(env),
    tableName: env.tableName,
    onUndecodable: reportUndecodable(relayLog, relayMetric),
  });
  const { routes: secrets, provider } = sources;
  const sms = createSmsClientSource({
    secrets: provider,
    baseUrl: config.settings.provider.baseUrl,
    timeoutMs: config.settings.provider.timeoutMs,
    ...(env.providerApiKey === undefined ? {} : { apiKey: env.providerApiKey }),
  });
  const providers = createProviderSource({
    secrets: provider,
    settings: config.settings,
    ...(env.providerApiKey === undefined ? {} : { apiKey: env.providerApiKey }),
  });
  return {
    config,
    store,
    secrets,
    sms,
    providers,
    logger: relayLog,
    metrics: relayMetric,
    clock: () => new Date(),
    policy: env.policy,
  };
}

/**
 * The route secrets (ingest's) and the provider key (the senders'): one file locally, two Secrets
 * Manager secrets on AWS, where each function is given only its own and the other reads as absent
 * with a message saying so (the function was not granted it).
 */
export interface SecretSources {
  readonly routes: SecretSource;
  readonly provider: SecretSource;
}

function secretSources(location: SecretLocation): SecretSources {
  if (location.kind === 'file') {
    const file = createFileSecretSource(location.path);
    return { routes: file, provider: file };
  }
  const source = (id: string | undefined, what: string, variable: string): SecretSource =>
    id === undefined
      ? unavailableSecretSource(
          `this function has no ${what} (${variable} is unset): the stack grants each function only the secret it needs`,
        )
      : createSecretsManagerSource(id);
  const routes = source(location.routes, 'route secrets', ENV.secretId);
  // One secret for both (SECRET_ID alone) is read through one source.
  const provider =
    location.provider === location.routes ? routes : source(location.provider, 'provider key', ENV.providerSecretId);
  return { routes, provider };
}

function unavailableSecretSource(message: string): SecretSource {
  const fail = (): Promise<never> => Promise.reject(new SecretUnavailableError(message));
  return { get: fail, refresh: fail };
}

/**
 * On AWS, builds the wiring during the init phase (config read, clients created, and whatever
 * `warm` adds: ingest compiles its templates), so the first event does not wait for it; elsewhere
 * (tests, the local runtime importing the handlers) nothing happens at import. Awaited at the top
 * level of the handler module, so Lambda's init phase includes all of it. A failure here is left
 * for the first invocation to report, with the logger.
 *
 * @example
 * ```ts
 * await prepareOnLambda(); // at module scope of a handler
 * ```
 */
export async function prepareOnLambda(warm?: (relay: LambdaRelay) => unknown): Promise<void> {
  if (!process.env['AWS_EXECUTION_ENV']?.startsWith('AWS_Lambda_')) return;
  try {
    const relay = await lambdaRelay();
    warm?.(relay);
  } catch {
    // Reported, with the logger, by the first invocation's own attempt.
  }
}
