import type { Context, ScheduledEvent } from 'aws-lambda';
import { sweep, type SweepReport } from '../relay/sweeper';
import { prepareOnLambda } from './wiring/context';
import { CIRCUIT, SEND_MARGIN_MS, SWEEP_RUN } from '../core/defaults';
import { flushMetrics } from './wiring/metrics';
import { invoke, remainingMs } from './wiring/invoke';
import { withInvocationSmsClients } from './wiring/invoke';
import { compileLater } from './wiring/config';
import type { RelayConfigView } from '../core/config/view';

await prepareOnLambda();

/** Whether any route has steps that fall due (`escalate`, `renotify`). */
const pages = (config: RelayConfigView): boolean =>
  [...config.routes.values()].some(
    (route) => route.config.escalate !== undefined || route.config.renotify !== undefined,
  );

/**
 * The sweeper, every minute: runs `sweep` (functions/relay/sweeper.ts), whose list `SWEEP_STEPS`
 * is what it does. It stops starting sends when fewer than the provider's time-out plus a margin
 * remain before `SWEEP_RUN.stepsMs`, so Lambda never cuts a send off and the next run's sends never
 * overlap this one's; the next run picks up the rest. While an incident is open with a step to
 * come, it then stays until `SWEEP_RUN.pagingWatchMs` after it started, recording each escalation
 * and renotify at its due time, so a page waits for no run whatever the schedule's phase; the next
 * run's stay overlaps this one's by the schedule's slack, and the steps' conditional writes record
 * each step once.
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
      const budgetMs = context.config.settings.provider.timeoutMs + SEND_MARGIN_MS;
      const started = Date.now();
      // The steps' time: until SWEEP_RUN.stepsMs (the next run starts a minute after this one), within the time-out.
      const stepsLeftMs = (): number => Math.min(remainingMs(lambdaContext), started + SWEEP_RUN.stepsMs - Date.now());
      const report = await sweep(context, {
        pendingGraceMs: env.sweepPendingGraceMs,
        // Due records go back to the stream-fed sender, at its rate and in their lanes.
        wake: true,
        canContinue: () => stepsLeftMs() >= budgetMs,
        // While the SMS service is unreachable: stay to probe it at its backoff, if a probe and a send still fit.
        canWait: (ms) => stepsLeftMs() - ms >= budgetMs + CIRCUIT.probeTimeoutMs,
        digests: { compile: async () => await compileLater(context.config, env.configPath) },
        // Staying for paging steps (a relay without escalate or renotify has none), with time left
        // to record one due at the end of the stay.
        ...(pages(context.config)
          ? {
              pagingUntil: new Date(
                Math.min(started + SWEEP_RUN.pagingWatchMs, Date.now() + remainingMs(lambdaContext) - SEND_MARGIN_MS),
              ),
            }
          : {}),
        // The Sweeps heartbeat now, not after the stay: SweeperNotRunning reads it by the minute.
        onStepsDone: () => flushMetrics(relay.metrics),
      });
      logger.info('sweep finished', { ...report });
      return report;
    }),
  );
}
