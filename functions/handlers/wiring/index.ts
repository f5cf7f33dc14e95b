/**
 * The Lambda handlers' composition root, built once per container: the environment contract
 * (`ENV`, `readEnvironment`), the wiring (`lambdaRelay`, `resetLambdaRelay`, `createRelayContext`),
 * and the adapters behind the relay's ports (they live in `functions/adapters/`, which the local
 * runtime uses too, and are re-exported here).
 *
 * @example
 * ```ts
 * import { readEnvironment, createRelayContext, createLogger, createMetrics } from './wiring';
 *
 * const context = await createRelayContext(readEnvironment(), { logger: createLogger(), metrics: createMetrics() });
 * ```
 */
export { compiledConfig, ingestContext } from './compiled';
export { loadRelayConfig } from './config';
export {
  createRelayContext,
  type Observability,
  observability,
  prepareOnLambda,
  lambdaRelay,
  type LambdaRelay,
  resetLambdaRelay,
} from './context';
export { createDynamoClient } from './dynamo';
export { ENV, ENV_DEFAULTS, readEnvironment, type RelayEnvironment, type SecretLocation } from './env';
export { EnvironmentError } from './errors';
export { MissingSecretValueError, SecretUnavailableError } from '../../adapters/errors';
export { invoke, remainingMs, SEND_MARGIN_MS, withInvocationSmsClients } from './invoke';
export { createLogger, type LoggerOptions, maskingReplacer, REDACTED, relayLogger } from '../../adapters/logger';
export { createMetrics, flushMetrics, type MetricsOptions, relayMetrics } from './metrics';
export {
  createFileSecretSource,
  createSecretsManagerSource,
  PROVIDER_API_KEY,
  SECRET_MAX_AGE_SECONDS,
  type SecretsManagerSourceOptions,
} from '../../adapters/secrets';
export { type ClosableSmsClientSource, createSmsClientSource, type SmsClientSourceOptions } from '../../adapters/sms';
