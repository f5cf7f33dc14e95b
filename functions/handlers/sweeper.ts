import type { Context, ScheduledEvent } from 'aws-lambda';
import { sweep, type SweepReport } from '../relay/sweeper';
import { prepareOnLambda } from './wiring/context';
import { CIRCUIT, SEND_MARGIN_MS } from '../core/defaults';
import { invoke, remainingMs } from './wiring/invoke';
import { withInvocationSmsClients } from './wiring/invoke';
import { compileLater } from './wiring/config';

await prepareOnLambda();

/**
 * The sweeper, every minute: sends due PENDING records (retries, redriven records, anything the
 * stream missed), settles SENDING records whose sender died, and records the limit summaries. It
 * stops starting sends when fewer than the provider's time-out plus a margin remain, so Lambda
 * never cuts a send off; the next run picks up the rest.
 *
 * @example
 * ```ts
 * const report = await handler(scheduledEvent, lambdaContext); // { sent: { sent: 2 }, recovered: 0, summaries: 0, … }
 * ```
 */
export async function handler(_event: ScheduledEvent, lambdaContext?: Context): Promise<SweepReport> {
  return await invoke(lambdaContext, (relay) =>
    withInvocationSmsClients(relay, async (context) => {
      const { env, logger } = relay;
      const budgetMs = context.config.config.provider.timeoutMs + SEND_MARGIN_MS;
      const report = await sweep(context, {
        pendingGraceMs: env.sweepPendingGraceMs,
        canContinue: () => remainingMs(lambdaContext) >= budgetMs,
        // While the SMS service is unreachable: stay to probe it at its backoff, if a probe and a send still fit.
        canWait: (ms) => remainingMs(lambdaContext) - ms >= budgetMs + CIRCUIT.probeTimeoutMs,
        digests: { compile: async () => await compileLater(context.config, env.configPath) },
      });
      logger.info('sweep finished', { ...report });
      return report;
    }),
  );
}
