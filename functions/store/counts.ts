import { type AttributeValue, ScanCommand } from '@aws-sdk/client-dynamodb';
import { str } from './attributes';
import { lastEvaluatedKey, pages } from './cursor';
import { ItemKind } from './keys';
import { queryIndexed } from './record-reads';
import type { StoreTable } from './store-table';
import { MessageState, TABLE } from './table';

/**
 * A stuck-record count stops here: the gauges' alarms fire at 1, so "1,000 or more" says all an
 * operator needs, and a count reads at most this many index entries per state whether the table
 * holds a thousand records or ten million.
 */
export const STUCK_COUNT_CAP = 1_000;

/**
 * How many records wait in each state that needs someone (or a late digest) now, each at most
 * {@link STUCK_COUNT_CAP}: a count at the cap means that many or more.
 */
export interface StuckCounts {
  readonly unknown: number;
  readonly parked: number;
  readonly failed: number;
  readonly held: number;
  /** DEFERRED records whose window (`nextAttemptAt`) ended before `overdueBefore`: their digest is late. */
  readonly deferredOverdue: number;
}

/** Options of {@link countStuck}. */
export interface CountStuckOptions {
  /** A DEFERRED record whose window ended before this is overdue. */
  readonly overdueBefore: Date;
}

const COUNTED = {
  unknown: MessageState.Unknown,
  parked: MessageState.Parked,
  failed: MessageState.Failed,
  held: MessageState.Held,
} as const;

/**
 * Counts the records that are UNKNOWN, PARKED, FAILED and HELD now, and the DEFERRED ones whose
 * window has ended before `overdueBefore`, each up to {@link STUCK_COUNT_CAP}: the sweeper's gauges.
 * With indexes (AWS), one `Select: COUNT` query of the state index per state, paged until it has
 * read the cap's worth of index entries (a few hundred bytes each), so a count costs the same at
 * any volume; the DEFERRED count looks at the cap's oldest DEFERRED records (by last change), the
 * ones whose window ends first. Locally (`readIndexes: false`) one paged scan of the table
 * returning only each record's state and window end, its counts cut to the cap alike.
 *
 * @example
 * ```typescript
 * const { unknown } = await countStuck(table, { overdueBefore: new Date(Date.now() - 120_000) });
 * ```
 */
export const countStuck = async (table: StoreTable, { overdueBefore }: CountStuckOptions): Promise<StuckCounts> => {
  const cutoff = str(overdueBefore.toISOString());
  if (!table.readIndexes) return await scanCounts(table, cutoff);
  const count = async (state: MessageState, overdue = false): Promise<number> => {
    let total = 0;
    let read = 0;
    const counted = pages(
      async (start: Record<string, AttributeValue> | undefined) =>
        await queryIndexed(table, {
          TableName: table.tableName,
          IndexName: TABLE.indexes.byState.name,
          Select: 'COUNT',
          // Limit bounds the entries a page reads (before the filter), so the pages stop at the cap.
          Limit: STUCK_COUNT_CAP - read,
          KeyConditionExpression: '#state = :state',
          ...(overdue ? { FilterExpression: '#nextAttemptAt < :cutoff' } : {}),
          ExpressionAttributeNames: { '#state': 'state', ...(overdue ? { '#nextAttemptAt': 'nextAttemptAt' } : {}) },
          ExpressionAttributeValues: { ':state': str(state), ...(overdue ? { ':cutoff': cutoff } : {}) },
          ExclusiveStartKey: start,
        }),
      lastEvaluatedKey,
    );
    for await (const page of counted) {
      total += page.Count ?? 0;
      read += page.ScannedCount ?? 0;
      if (read >= STUCK_COUNT_CAP) break;
    }
    return Math.min(total, STUCK_COUNT_CAP);
  };
  const [unknown, parked, failed, held, deferredOverdue] = await Promise.all([
    count(COUNTED.unknown),
    count(COUNTED.parked),
    count(COUNTED.failed),
    count(COUNTED.held),
    count(MessageState.Deferred, true),
  ]);
  return { unknown, parked, failed, held, deferredOverdue };
};

const scanCounts = async (table: StoreTable, cutoff: AttributeValue): Promise<StuckCounts> => {
  const counts = { unknown: 0, parked: 0, failed: 0, held: 0, deferredOverdue: 0 };
  const byState = new Map<string, keyof typeof COUNTED>(
    Object.entries(COUNTED).map(([name, state]) => [state, name as keyof typeof COUNTED]),
  );
  const scanned = pages(
    async (start: Record<string, AttributeValue> | undefined) =>
      await table.client.send(
        new ScanCommand({
          TableName: table.tableName,
          FilterExpression:
            '#kind = :kind AND (#state IN (:unknown, :parked, :failed, :held) OR (#state = :deferred AND #nextAttemptAt < :cutoff))',
          ProjectionExpression: '#state',
          ExpressionAttributeNames: { '#kind': 'kind', '#state': 'state', '#nextAttemptAt': 'nextAttemptAt' },
          ExpressionAttributeValues: {
            ':kind': str(ItemKind.Message),
            ':unknown': str(MessageState.Unknown),
            ':parked': str(MessageState.Parked),
            ':failed': str(MessageState.Failed),
            ':held': str(MessageState.Held),
            ':deferred': str(MessageState.Deferred),
            ':cutoff': cutoff,
          },
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      ),
    lastEvaluatedKey,
  );
  for await (const page of scanned) {
    for (const item of page.Items ?? []) {
      const state = item['state']?.S ?? '';
      const name = byState.get(state);
      if (name !== undefined) counts[name] += 1;
      else if (state === MessageState.Deferred) counts.deferredOverdue += 1;
    }
  }
  const capped = (value: number): number => Math.min(value, STUCK_COUNT_CAP);
  return {
    unknown: capped(counts.unknown),
    parked: capped(counts.parked),
    failed: capped(counts.failed),
    held: capped(counts.held),
    deferredOverdue: capped(counts.deferredOverdue),
  };
};

/**
 * Counting stuck messages: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const countOperations = (table: StoreTable) => ({
  /** How many records are UNKNOWN, PARKED, FAILED, HELD now, and DEFERRED past their window. See {@link countStuck}. */
  countStuck: async (options: CountStuckOptions): Promise<StuckCounts> => await countStuck(table, options),
});
