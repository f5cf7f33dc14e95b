import type { UndecodableRecord } from '../store';
import { RelayMetric, type RelayLogger, type RelayMetrics } from './ports';

/** A record met again within this long is counted but not logged again (the console polls listings). */
const RELOG_AFTER_MS = 10 * 60_000;
/** Ids remembered for {@link RELOG_AFTER_MS}; past this many the oldest are forgotten (and logged again). */
const REMEMBERED_IDS = 1000;

/**
 * The store's `onUndecodable` for a relay process: each record a listing or a sweep left out
 * because this version cannot read it is counted in `UndecodableRecords` (every time it is met,
 * so the count stays up while such records wait) and logged by id with what could not be read (at
 * most once per record every ten minutes). The record is left as it is: the version that wrote it
 * sends or settles it once deployed again.
 *
 * @example
 * ```ts
 * const store = createStore({ client, tableName, onUndecodable: reportUndecodable(logger, metrics) });
 * ```
 */
export function reportUndecodable(
  logger: RelayLogger,
  metrics: RelayMetrics,
  now: () => number = Date.now,
): (record: UndecodableRecord) => void {
  const loggedAt = new Map<string, number>();
  return ({ id, error }) => {
    metrics.add(RelayMetric.UndecodableRecords, 1);
    const last = loggedAt.get(id);
    if (last !== undefined && now() - last < RELOG_AFTER_MS) return;
    loggedAt.delete(id);
    loggedAt.set(id, now());
    if (loggedAt.size > REMEMBERED_IDS) loggedAt.delete(loggedAt.keys().next().value!);
    logger.warn('record left out: this version cannot read it (written by a newer version?); left as it is', {
      id,
      reason: error.message,
    });
  };
}
