import { type MessageRecord, MessageState, type MessageStore } from '../../functions/store';

/** Records per page of the first run's listing of the SENDING records a kill left. */
const LEFTOVER_PAGE = 1_000;

/** The store each local sweep runs on, one per run. */
export interface SweepStores {
  /** The store for the next sweep: the first one scans the table, the later ones read the indexes. */
  next(): Promise<MessageStore>;
}

/**
 * The stores the local runtime's sweeps run on, so that a sweep costs what waits (due, stale and
 * overdue records), not what the table holds: a sweep that scanned the table three times every
 * second kept the local store's one thread from the webhooks that arrived meanwhile.
 *
 * The local store lists from the table (`scanning`) because dynalite writes an item's index
 * entries before the item: a kill between the two leaves entries that disagree with the item. Only
 * the records being written at a kill can disagree, and each agrees again once it is written again.
 * So the first sweep after the store opens runs on `scanning`, as every sweep did: whatever is due
 * then (and so every leftover PENDING or DEFERRED record, which was due when it was being written) is
 * found and sent, which rewrites it and its entries. The leftovers that fall due later are the SENDING
 * ones (stale only `staleSendingMs` after their claim): the first sweep notes every SENDING record,
 * and later sweeps read those again by key until they leave SENDING. Every later sweep lists from
 * `indexed` (a store on the same table reading its indexes): each candidate is read from the table,
 * and kept only if the record itself is still due, so an entry the table disagrees with lists nothing.
 *
 * @example
 * ```ts
 * const stores = sweepStores(local.store, createStore({ client: local.client, tableName, readIndexes: true }));
 * await sweep({ ...context, store: await stores.next() }, options);
 * ```
 */
export function sweepStores(scanning: MessageStore, indexed: MessageStore): SweepStores {
  let leftovers: Set<string> | undefined;
  return {
    next: async () => {
      if (leftovers !== undefined) return bounded(scanning, indexed, leftovers);
      leftovers = await sendingNow(scanning);
      return scanning;
    },
  };
}

/** The ids of every SENDING record, from the table: at the first sweep, the claims a kill may have left. */
async function sendingNow(scanning: MessageStore): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await scanning.listByState(MessageState.Sending, {
      limit: LEFTOVER_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const record of page.items) ids.add(record.id);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return ids;
}

/** `scanning` with the sweep's listings read from the indexes, each record kept only if it is due as it is now. */
function bounded(scanning: MessageStore, indexed: MessageStore, leftovers: Set<string>): MessageStore {
  return {
    ...scanning,
    findStaleSending: async (options) => {
      const olderThan = options.olderThan.toISOString();
      const stale = (record: MessageRecord): boolean =>
        record.state === MessageState.Sending && record.updatedAt < olderThan;
      const page = await indexed.findStaleSending(options);
      const items = page.items.filter(stale);
      if (options.cursor !== undefined) return { ...page, items };
      const listed = new Set(items.map((record) => record.id));
      for (const id of [...leftovers]) {
        const record = await scanning.getMessage(id);
        if (record?.state !== MessageState.Sending) leftovers.delete(id);
        else if (stale(record) && !listed.has(id)) items.push(record);
      }
      return { ...page, items };
    },
    findDuePending: async (options = {}) => {
      const now = (options.now ?? new Date()).toISOString();
      const changedBefore = options.updatedBefore?.toISOString();
      const page = await indexed.findDuePending(options);
      const items = page.items.filter(
        (record) =>
          record.state === MessageState.Pending &&
          (record.nextAttemptAt === undefined || record.nextAttemptAt <= now) &&
          (changedBefore === undefined || record.updatedAt < changedBefore),
      );
      return { ...page, items };
    },
    // Each record read from the table and kept only if it is still DEFERRED and due (see findDueDeferred).
    findDueDeferred: indexed.findDueDeferred,
    // The gauges' counts, capped, from the state index; locally they go nowhere but the sweep's own check.
    countStuck: indexed.countStuck,
  };
}
