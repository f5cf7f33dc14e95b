import type { RelayConfigView } from '../core/config/view';
import { DIGEST } from '../core/defaults';
import type { MessageStore, StuckCounts } from '../store';
import { RelayMetric, type RelayContext } from './ports';

/** What `publishStuckCounts` uses of the store. */
export type StuckGaugesStore = Pick<MessageStore, 'countStuck'>;

/**
 * The stuck records are counted at most this often per process (and store); the sweeps in between
 * publish the last counts again. Under the minute of `SWEEP_SCHEDULE`, so each scheduled run on AWS
 * counts afresh even in a warm container whose runs come a little early; the local runtime sweeps
 * every second or so and counts about once a minute.
 */
export const STUCK_COUNT_INTERVAL_MS = 50_000;

/**
 * A DEFERRED record is overdue once its window ended longer ago than this: the digest's grace plus
 * one sweep (`SWEEP_SCHEDULE`, a minute), by when its digest should have been recorded.
 */
export const DEFERRED_OVERDUE_AFTER_MS = DIGEST.graceMs + 60_000;

const counted = new WeakMap<StuckGaugesStore, { readonly at: number; readonly counts: StuckCounts }>();

/**
 * Publishes how many records are stuck now, for the alarms that watch states rather than events:
 * `UnknownNow`, `ParkedNow`, `FailedNow`, `HeldNow` and `DeferredOverdue`, service-wide (no route
 * dimension), zeros included, on every sweep. A count that fails is logged and counted in
 * `SweepErrors`; nothing is published then, and the sweep goes on.
 *
 * @example
 * ```ts
 * await publishStuckCounts(context, context.clock());
 * ```
 */
export async function publishStuckCounts(
  context: RelayContext<RelayConfigView, StuckGaugesStore>,
  now: Date,
): Promise<void> {
  const { store, metrics, logger } = context;
  let last = counted.get(store);
  if (last === undefined || now.getTime() - last.at >= STUCK_COUNT_INTERVAL_MS || now.getTime() < last.at) {
    try {
      last = {
        at: now.getTime(),
        counts: await store.countStuck({ overdueBefore: new Date(now.getTime() - DEFERRED_OVERDUE_AFTER_MS) }),
      };
      counted.set(store, last);
    } catch (error) {
      logger.error('stuck records not counted; the next sweep tries again', { error });
      metrics.add(RelayMetric.SweepErrors, 1);
      return;
    }
  }
  const { counts } = last;
  metrics.add(RelayMetric.UnknownNow, counts.unknown);
  metrics.add(RelayMetric.ParkedNow, counts.parked);
  metrics.add(RelayMetric.FailedNow, counts.failed);
  metrics.add(RelayMetric.HeldNow, counts.held);
  metrics.add(RelayMetric.DeferredOverdue, counts.deferredOverdue);
}
