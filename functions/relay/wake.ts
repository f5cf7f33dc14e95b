import { WAKE } from '../core/defaults';
import { Lane } from '../core/lanes';
import type { RelayConfigView } from '../core/config/view';
import type { DueOptions, MessageRecord, MessageStore } from '../store';
import { forEachConcurrently } from './concurrency';
import type { RelayContext } from './ports';

/** What waking uses of the store: the due listing and the wake itself. */
export type WakeStore = Pick<MessageStore, 'findDuePending' | 'wake'>;

/** What {@link wakeWaiting} is told. */
export interface WakeInput extends Omit<DueOptions, 'cursor'> {
  readonly now: Date;
  /** Whether the run may go on (its time left); checked before each page. */
  readonly canContinue: () => boolean;
  /** Told of every page of due records read (the sweep's backlog figures). */
  readonly onPage?: (records: readonly MessageRecord[]) => void;
}

/** What {@link wakeWaiting} did. */
export interface WakeReport {
  /** Records woken: handed to the stream-fed sender of their lane. */
  readonly woken: number;
  /** Records woken {@link WAKE}`.sendHereAfterMs` ago or more and still not taken (at most `limit`): the sweep sends them itself. */
  readonly unclaimed: readonly MessageRecord[];
}

/**
 * Wakes the due PENDING records (see the store's `wake`): the critical lane's as each page is read,
 * the bulk lane's once the listing is done (their ids kept meanwhile), so every waiting alert is
 * woken before any order: each becomes a stream event its lane's mapping passes to the sender, so the waiting
 * records of an outage go out at the sender's full rate (the critical lane's at once, beside the
 * bulk backlog) rather than a sweep's page a minute. A record woken recently is left alone (it is
 * in the stream, or being sent); one woken long ago and still due is returned for the sweep to send
 * (the stream did not deliver it). Bounded: at most `WAKE.maxPerRun` a run, while `canContinue`.
 *
 * @example
 * ```ts
 * const { woken, unclaimed } = await wakeWaiting(context, { now, limit: 200, canContinue: () => true });
 * ```
 */
export async function wakeWaiting(
  context: RelayContext<RelayConfigView, WakeStore>,
  { now, canContinue, onPage, ...due }: WakeInput,
): Promise<WakeReport> {
  const { store, logger } = context;
  const limit = due.limit ?? 200;
  const unclaimed: MessageRecord[] = [];
  // The bulk lane's records, woken once the listing is done: every critical one goes first.
  const bulk: MessageRecord[] = [];
  let woken = 0;
  const wakeAll = async (records: readonly MessageRecord[]): Promise<void> =>
    await forEachConcurrently(records, WAKE.concurrency, async (record) => {
      if (!canContinue()) return;
      try {
        if (await store.wake(record.id, { now })) woken += 1;
      } catch (error) {
        // Still due: the next sweep wakes it.
        logger.error('record not woken; the next sweep tries again', {
          id: record.id,
          route: record.route,
          error: error instanceof Error ? error.name : typeof error,
        });
      }
    });
  let cursor: string | undefined;
  do {
    if (!canContinue() || woken + bulk.length >= WAKE.maxPerRun) break;
    const page = await store.findDuePending({ ...due, now, ...(cursor === undefined ? {} : { cursor }) });
    cursor = page.cursor;
    onPage?.(page.items);
    const critical: MessageRecord[] = [];
    for (const record of page.items) {
      if (record.wokenAt === undefined) (record.lane === Lane.Critical ? critical : bulk).push(record);
      else if (now.getTime() - Date.parse(record.wokenAt) >= WAKE.sendHereAfterMs && unclaimed.length < limit)
        unclaimed.push(record);
    }
    await wakeAll(critical.slice(0, Math.max(0, WAKE.maxPerRun - woken)));
  } while (cursor !== undefined);
  await wakeAll(bulk.slice(0, Math.max(0, WAKE.maxPerRun - woken)));
  return { woken, unclaimed };
}
