import { ItemReader, num, str } from './attributes';
import { stateChange } from './codec';
import type { StoreTable } from './store-table';
import { writeIf } from './write';
import { StoreError } from './errors';
import { digestWindowKey, ItemKind, MONTHLY_RETENTION_SECONDS, epochSeconds, messageKey } from './keys';
import { nextCursor, pages } from './cursor';
import { queryIndex } from './record-reads';
import { TABLE, MessageState } from './table';
import { transition } from './transitions';
import type { MessageRecord } from './types';

/** What `openDigestWindow` needs: the route, its window's length and the time of the message. */
export interface DigestWindowInput {
  readonly route: string;
  readonly windowSeconds: number;
  readonly now?: Date;
}

/** Attempts to open or join a window when the one in the way closes while we look at it. */
const WINDOW_ATTEMPTS = 3;

/**
 * The end of the route's digest window a message accepted at `now` belongs to: the open window's,
 * or, when none is open, a new window's that this message opens (`now + windowSeconds`). One
 * conditional put on the route's window item, so of two accepts racing to open a window exactly one
 * does and the other joins it: a window is one digest, on AWS as locally.
 *
 * @example
 * ```typescript
 * const closesAt = await store.openDigestWindow({ route: 'orders', windowSeconds: 600 });
 * ```
 */
export const openDigestWindow = async (
  context: StoreTable,
  { route, windowSeconds, now = context.clock() }: DigestWindowInput,
): Promise<Date> => {
  if (!Number.isInteger(windowSeconds) || windowSeconds <= 0)
    throw new StoreError(`a digest window is a whole number of seconds above 0, got ${windowSeconds}`);
  for (let attempt = 1; attempt <= WINDOW_ATTEMPTS; attempt += 1) {
    const closesAt = new Date(now.getTime() + windowSeconds * 1000);
    const outcome = await writeIf(
      context,
      {
        Item: {
          ...digestWindowKey(route),
          kind: str(ItemKind.DigestWindow),
          route: str(route),
          opensAt: str(now.toISOString()),
          closesAt: str(closesAt.toISOString()),
          closesAtMs: num(closesAt.getTime()),
          [TABLE.timeToLive]: num(epochSeconds(closesAt) + MONTHLY_RETENTION_SECONDS),
        },
        ConditionExpression: 'attribute_not_exists(#pk) OR closesAtMs <= :now',
        ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
        ExpressionAttributeValues: { ':now': num(now.getTime()) },
      },
      { current: true },
    );
    if (outcome.applied) return closesAt;
    if (outcome.current === undefined) continue;
    const open = new Date(new ItemReader(outcome.current, `WINDOW#${route}`).num('closesAtMs'));
    // Read after the refusal, the window may have closed meanwhile: then open the next one.
    if (open.getTime() > now.getTime()) return open;
  }
  throw new StoreError(`digest window of ${route} kept changing; gave up after ${WINDOW_ATTEMPTS} attempts`);
};

/** Which deferred records `findDueDeferred` lists. */
export interface DueDeferredOptions {
  /** Only this route's; absent: every route's, in one query. */
  readonly route?: string;
  readonly now?: Date;
  /** At most this many, oldest first. */
  readonly limit: number;
}

/**
 * The DEFERRED records (of `route`, or of every route) whose window has ended (`nextAttemptAt` at or before `now`), oldest
 * first, read from the table (current state) after the `byState` index found them.
 */
export const findDueDeferred = async (
  context: StoreTable,
  { route, now = context.clock(), limit }: DueDeferredOptions,
): Promise<MessageRecord[]> => {
  const due: MessageRecord[] = [];
  const listed = pages(
    async (cursor: string | undefined) =>
      await queryIndex(context, {
        index: TABLE.indexes.byState,
        partition: MessageState.Deferred,
        limit: Math.min(limit, 1000),
        ...(cursor === undefined ? {} : { cursor }),
        filter: route === undefined ? '#nextAttemptAt <= :now' : '#route = :route AND #nextAttemptAt <= :now',
        filterValues: { ':now': str(now.toISOString()), ...(route === undefined ? {} : { ':route': str(route) }) },
      }),
    nextCursor,
  );
  for await (const page of listed) {
    // The index may still list a record that has just moved on.
    due.push(
      ...page.items.filter(
        (record) =>
          record.state === MessageState.Deferred &&
          (route === undefined || record.route === route) &&
          record.nextAttemptAt !== undefined &&
          record.nextAttemptAt <= now.toISOString(),
      ),
    );
    if (due.length >= limit) break;
  }
  return (
    due
      // One webhook's records share a time: then its fan-out order, then its parts.
      .sort(
        (a, b) =>
          a.createdAt.localeCompare(b.createdAt) ||
          a.dedupeKey.localeCompare(b.dedupeKey) ||
          a.index - b.index ||
          a.part - b.part ||
          a.id.localeCompare(b.id),
      )
      .slice(0, limit)
  );
};

/** What `markDigested` records. */
export interface DigestedInput {
  /** The digest record whose SMS carries it. */
  readonly digestId: string;
  /** The window end the record was deferred to: a record moved on meanwhile is left alone. */
  readonly until: string;
  readonly now?: Date;
}

/**
 * Moves a DEFERRED record to DIGESTED, naming the digest that carries it; `undefined` when it is no
 * longer DEFERRED to that window (another sweeper did it first).
 */
export const markDigested = async (
  context: StoreTable,
  id: string,
  { digestId, until, now = context.clock() }: DigestedInput,
): Promise<MessageRecord | undefined> => {
  const at = now.toISOString();
  const reason = `sent in digest ${digestId}`;
  return await transition(context, id, {
    set: { state: str(MessageState.Digested), digestId: str(digestId), reason: str(reason), updatedAt: str(at) },
    remove: ['nextAttemptAt'],
    entry: stateChange({ at, state: MessageState.Digested, reason }),
    condition: '#kind = :message AND #state = :deferred AND #nextAttemptAt = :until',
    values: { ':message': str(ItemKind.Message), ':deferred': str(MessageState.Deferred), ':until': str(until) },
  });
};

/** What `dropDeferred` records. */
export interface DroppedDeferredInput {
  /** The window end the record was deferred to: a record moved on meanwhile is left alone. */
  readonly until: string;
  /** Why it is never sent: the mute's `muted until 14:30: db upgrade`. */
  readonly reason: string;
  readonly now?: Date;
}

/**
 * Moves a DEFERRED record to DROPPED with `reason` (its route was muted when its window's digest
 * fell due); `undefined` when it is no longer DEFERRED to that window (another sweeper did it first).
 */
export const dropDeferred = async (
  context: StoreTable,
  id: string,
  { until, reason, now = context.clock() }: DroppedDeferredInput,
): Promise<MessageRecord | undefined> => {
  const at = now.toISOString();
  return await transition(context, id, {
    set: { state: str(MessageState.Dropped), reason: str(reason), updatedAt: str(at) },
    remove: ['nextAttemptAt'],
    entry: stateChange({ at, state: MessageState.Dropped, reason }),
    condition: '#kind = :message AND #state = :deferred AND #nextAttemptAt = :until',
    values: { ':message': str(ItemKind.Message), ':deferred': str(MessageState.Deferred), ':until': str(until) },
  });
};

/**
 * Moves a DEFERRED record whose window's digest is already recorded without it (it was written
 * after that digest was rendered) to the next window, `to`: the same for every sweeper, so racing
 * sweepers agree on it, and that window's digest carries it.
 */
export const moveToWindow = async (
  context: StoreTable,
  id: string,
  { from, to, now = context.clock() }: { from: string; to: string; now?: Date },
): Promise<boolean> =>
  (
    await writeIf(context, {
      Key: messageKey(id),
      UpdateExpression: 'SET #nextAttemptAt = :to, #updatedAt = :at',
      ConditionExpression: '#kind = :message AND #state = :deferred AND #nextAttemptAt = :from',
      ExpressionAttributeNames: {
        '#nextAttemptAt': 'nextAttemptAt',
        '#updatedAt': 'updatedAt',
        '#kind': 'kind',
        '#state': 'state',
      },
      ExpressionAttributeValues: {
        ':to': str(to),
        ':from': str(from),
        ':at': str(now.toISOString()),
        ':message': str(ItemKind.Message),
        ':deferred': str(MessageState.Deferred),
      },
    })
  ).applied;

export type { MessageRecord };

/**
 * Digest windows: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const windowOperations = (table: StoreTable) => ({
  /** The end of the route's digest window a message accepted now belongs to, opening one if none is. See {@link openDigestWindow}. */
  openDigestWindow: async (input: DigestWindowInput): Promise<Date> => await openDigestWindow(table, input),
  /** The route's DEFERRED records whose window has ended, oldest first. See {@link findDueDeferred}. */
  findDueDeferred: async (options: DueDeferredOptions): Promise<MessageRecord[]> =>
    await findDueDeferred(table, options),
  /** DEFERRED → DIGESTED, naming the digest; `undefined` when it moved on meanwhile. See {@link markDigested}. */
  markDigested: async (id: string, input: DigestedInput): Promise<MessageRecord | undefined> =>
    await markDigested(table, id, input),
  /** DEFERRED → DROPPED with the reason (its route is muted); `undefined` when it moved on meanwhile. See {@link dropDeferred}. */
  dropDeferred: async (id: string, input: DroppedDeferredInput): Promise<MessageRecord | undefined> =>
    await dropDeferred(table, id, input),
  /** Moves a DEFERRED record left out of its window's digest to the window `to`. See {@link moveToWindow}. */
  moveToWindow: async (id: string, input: { from: string; to: string; now?: Date }): Promise<boolean> =>
    await moveToWindow(table, id, input),
});
