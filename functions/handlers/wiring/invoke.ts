import type { Context } from 'aws-lambda';
import { observability, lambdaRelay, type LambdaRelay } from './context';
import { flushMetrics } from './metrics';
import type { RelayConfigView } from '../../core/config/view';
import type { RelayContext } from '../../relay/ports';
import { createProviderSource } from '../../adapters/providers';
import { createSmsClientSource } from '../../adapters/sms';

/**
 * Runs one invocation: tags the logger with the Lambda context, builds (or reuses) the wiring,
 * runs `work`, and always writes the spend its sends counted (the day's counter, written per
 * window: `flushSpend`) and the invocation's metrics. Wiring that cannot be built is logged
 * and rethrown.
 *
 * @example
 * ```ts
 * export const handler = (event: ScheduledEvent, lambdaContext?: Context) => invoke(lambdaContext, ({ context }) => checkBalance(context));
 * ```
 */
export async function invoke<T>(
  lambdaContext: Context | undefined,
  work: (relay: LambdaRelay) => Promise<T>,
): Promise<T> {
  const { logger, metrics } = observability();
  if (lambdaContext !== undefined) logger.addContext(lambdaContext);
  let relay: LambdaRelay | undefined;
  try {
    try {
      relay = await lambdaRelay();
    } catch (error) {
      logger.error('the relay cannot start', { error });
      throw error;
    }
    return await work(relay);
  } finally {
    // The spend counted by this invocation's sends, written before Lambda may freeze the process
    // (see `recordSpend`). A failed write was logged by each send it counted.
    await relay?.context.store.flushSpend().catch(() => undefined);
    flushMetrics(metrics);
  }
}

export { SEND_MARGIN_MS } from '../../core/defaults';

/**
 * Milliseconds left before Lambda stops the invocation, or `Infinity` without a Lambda context
 * (the local runtime, tests).
 */
export function remainingMs(lambdaContext: Context | undefined): number {
  return lambdaContext === undefined ? Number.POSITIVE_INFINITY : lambdaContext.getRemainingTimeInMillis();
}

/**
 * Runs one invocation's `work` with SMS clients of its own, closed when it returns: for the
 * scheduled handlers (the sweeper each minute, the balance watch each hour), whose connection would
 * be idle past the client's keep-alive limit (`PROVIDER_KEEP_ALIVE_MS`) by their next run anyway.
 * The sender keeps the container's clients instead, so warm invocations reuse one connection.
 * Invocations that overlap in one process each get their own clients, so one ending never cuts
 * another's send.
 *
 * @example
 * ```ts
 * export const handler = (event: ScheduledEvent, lambdaContext?: Context) =>
 *   invoke(lambdaContext, (relay) => withInvocationSmsClients(relay, (context) => checkBalance(context)));
 * ```
 */
export async function withInvocationSmsClients<T>(
  { context, env, providerSecrets }: Pick<LambdaRelay, 'context' | 'env' | 'providerSecrets'>,
  work: (context: RelayContext<RelayConfigView>) => Promise<T>,
): Promise<T> {
  const sms = createSmsClientSource({
    secrets: providerSecrets,
    baseUrl: context.config.settings.provider.baseUrl,
    timeoutMs: context.config.settings.provider.timeoutMs,
    ...(env.providerApiKey === undefined ? {} : { apiKey: env.providerApiKey }),
  });
  const providers = createProviderSource({
    secrets: providerSecrets,
    settings: context.config.settings,
    ...(env.providerApiKey === undefined ? {} : { apiKey: env.providerApiKey }),
  });
  try {
    return await work({ ...context, sms, providers });
  } finally {
    sms.close();
    providers.close();
  }
}
