import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { MAX_RECORDS_PER_WEBHOOK } from '../core/defaults';
import { type Item, ItemReader, num, str, strList } from './attributes';
import { messageItem, stateChange } from './codec';
import type { StoreTable } from './store-table';
import { type ConditionalPut, type TransactOutcome, writeAllIf, writeIf } from './write';
import { StoreError } from './errors';
import { newId } from './ids';
import { DAY_SECONDS, ItemKind, dedupeKey as dedupeItemKey, epochSeconds, messageKey } from './keys';
import { MessageState, TABLE } from './table';
import { E164_DIGITS_PATTERN } from '../core/defaults';
import { laneOf } from '../core/lanes';
import type { RoutePriority } from '../core/config/policies';
import { DEFAULT_RETENTION_DAYS, type MessageRecord, type NewMessage, type NoticeKind } from './types';

/** What `acceptWebhook` did. */
export const AcceptOutcome = {
  /** New message records were written; the sender is triggered for the `PENDING` ones. */
  Accepted: 'accepted',
  /** The same route and dedupe key were accepted within the window; `ids` are the earlier ones. */
  Duplicate: 'duplicate',
} as const;
export type AcceptOutcome = (typeof AcceptOutcome)[keyof typeof AcceptOutcome];

/** What `acceptWebhook` records. */
export interface AcceptInput {
  readonly route: string;
  /** Identifies the webhook delivery (a delivery id header, a body hash). */
  readonly dedupeKey: string;
  /**
   * A second key that also makes this webhook a repeat (the signed body's hash, for senders whose
   * delivery id is not signed): a webhook is a duplicate when either key was accepted within the
   * window.
   */
  readonly replayKey?: string;
  /** How long a second delivery with the same key counts as a duplicate. 0 turns dedupe off. */
  readonly windowSeconds: number;
  /** 1 to {@link MAX_RECORDS_PER_WEBHOOK} messages, in fan-out order. */
  readonly messages: readonly NewMessage[];
  /**
   * The route's `priority`: with the SMS themselves (a notice, a page), what decides each record's
   * lane (`laneOf`).
   * @default 'normal'
   */
  readonly priority?: RoutePriority;
  readonly now?: Date;
  readonly retentionDays?: number;
}

/** The outcome of `acceptWebhook`, with the ids of the records that stand for the webhook. */
export type AcceptResult =
  | { readonly outcome: typeof AcceptOutcome.Accepted; readonly ids: readonly string[] }
  | {
      readonly outcome: typeof AcceptOutcome.Duplicate;
      readonly ids: readonly string[];
      /**
       * Message records this call wrote for an earlier accept that stopped half-way, or that is
       * still writing them (see {@link acceptWebhook}); 0 for a plain duplicate.
       */
      readonly recovered: number;
    };

/** The dedupe guard of a `(route, dedupeKey)`, as a duplicate reads it. */
interface Guard {
  /** The accept the guard stands for (its first message id); every key of one accept names the same owner. */
  readonly owner: string;
  readonly messageIds: readonly string[];
  readonly windowEndsAt: number;
  /** Epoch seconds from which TTL may delete the guard's records (their `expiresAt`). */
  readonly recordsExpireAt: number;
  /** The dedupe key of the accept the guard stands for; absent on guards written before it was kept. */
  readonly deliveryKey?: string;
}

/** Attempts of the accept, or of placing one guard, when the guard that refused it vanished before it could be read. */
const GUARD_ATTEMPTS = 3;

/**
 * Records one webhook: a dedupe guard for `(route, dedupeKey)` (and one for `replayKey`) and one
 * message record per entry of `messages`, in one transaction (`TransactWriteItems`, written all
 * or none; at most 2 guards + {@link MAX_RECORDS_PER_WEBHOOK} records, under DynamoDB's 100):
 * - each guard is put with `attribute_not_exists(pk) OR windowEndsAt <= :now`, holding the new
 *   message ids and when their records expire: of concurrent accepts of one key exactly one wins;
 * - each record is put with `attribute_not_exists(pk)`: at most one record per id, ever.
 *
 * A guard that refuses the transaction makes the webhook a duplicate; the refusal carries the
 * guard (`ALL_OLD`), so telling which accept it duplicates reads nothing more. The duplicate reads
 * which of the guard's ids have a record (consistent `GetItem`s, concurrently) and writes the
 * missing ones from its own evaluation, under the guard's ids (the same webhook renders the same
 * messages); an id written meanwhile refuses the put, so nothing is recorded twice. On DynamoDB
 * none is ever missing, but the local store's transaction is not atomic on disk (a kill between
 * its puts leaves the first, see local/shared/dynalite.ts) and guards written by the accept
 * before transactions stand for records written after them: the redelivery (the webhook source
 * saw an error) completes such an accept instead of losing it. The duplicate answers only after
 * that, so its answer, too, means every record exists. Once the records' retention has passed it
 * writes nothing, since TTL may have deleted them and a rewritten record would be sent again.
 *
 * With a `replayKey` (the signed body of a sender that does not sign its delivery id) both guards
 * are in the transaction:
 * - a body already accepted makes the request a duplicate of that accept, and the transaction
 *   wrote nothing, so a replay under a fresh delivery id leaves no guard under that id, also
 *   while it races the genuine delivery that carries that id, which is then accepted;
 * - a retry of the same delivery (the body's guard names this delivery id) is a duplicate of the
 *   same accept; should that accept have no guard under its id (one from before transactions, or
 *   a local kill between the two guards), the retry places it;
 * - a new body under an id already accepted (a sender that re-signs its retries) is a duplicate
 *   of that accept, and the body's guard is placed pointing there, so a replay of the new body is
 *   one too.
 * Two copies of one signed body racing each other under different ids cannot be told apart: the
 * first transaction to commit is the accept.
 *
 * @throws {StoreError} no messages, more than {@link MAX_MESSAGES_PER_WEBHOOK}, or one that breaks the data model
 *
 * @example
 * ```typescript
 * const result = await acceptWebhook(table, {
 *   route: 'orders',
 *   dedupeKey: deliveryId,
 *   windowSeconds: 86_400,
 *   messages: [{ index: 0, part: 1, parts: 1, text: 'Order #42 shipped', to: ['255712345678'],
 *     encoding: 'GSM-7', characters: 17, segments: 1, delivery: 'at-most-once' }],
 * });
 * if (result.outcome === 'duplicate') logger.info('duplicate webhook', { ids: result.ids });
 * ```
 */
export const acceptWebhook = async (table: StoreTable, input: AcceptInput): Promise<AcceptResult> => {
  const {
    route,
    dedupeKey,
    replayKey,
    windowSeconds,
    messages,
    priority,
    now = table.clock(),
    retentionDays = DEFAULT_RETENTION_DAYS,
  } = input;
  validate(input, retentionDays);

  const ids = messages.map(() => newId(now));
  const recordsExpireAt = expiresAtOf(now, retentionDays);
  const own: GuardClaim = { owner: ids[0]!, ids, recordsExpireAt, deliveryKey: dedupeKey };
  const build = (guardIds: readonly string[]): MessageRecord[] =>
    buildRecords({ route, dedupeKey, messages, priority, ids: guardIds, now, retentionDays });
  const guardOf = (key: string, claim: GuardClaim): ConditionalPut =>
    guardPut({ route, dedupeKey: key, claim, now, windowSeconds });
  const place = (key: string, claim: GuardClaim) =>
    placeGuard(table, { route, dedupeKey: key, claim, now, windowSeconds });

  const keys = replayKey !== undefined && replayKey !== dedupeKey ? [replayKey, dedupeKey] : [dedupeKey];
  const puts = [
    ...keys.map((key) => ({ put: guardOf(key, own), current: true })),
    ...build(ids).map((record) => ({ put: recordPut(record) })),
  ];
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await writeAllIf(table, puts);
    if (outcome.applied) return { outcome: AcceptOutcome.Accepted, ids };
    const guards = keys.map((_, position) => liveGuard(outcome.puts[position], route, now));
    const [byBody, byId] = keys.length === 2 ? guards : [undefined, guards[0]];
    if (byBody !== undefined) {
      // A replay under another delivery id wrote nothing under it. A retry of the same delivery
      // places the id's guard if its accept lacks one.
      if (byBody.deliveryKey !== dedupeKey) return await completeDuplicate(table, { guard: byBody, now, build });
      const guard = byId ?? (await place(dedupeKey, claimOf(byBody))) ?? byBody;
      return await completeDuplicate(table, { guard, now, build });
    }
    if (byId !== undefined) {
      // A new body under a delivery id already accepted: its guard points at that accept.
      if (keys.length === 2) await place(replayKey!, claimOf(byId));
      return await completeDuplicate(table, { guard: byId, now, build });
    }
    const guardRefused = outcome.puts.slice(0, keys.length).some((put) => put.refused);
    if (!guardRefused) throw new StoreError(`accept for ${route} refused: a new message id already has a record`);
    // The guard that refused it expired or was deleted before it could be read: try again.
    if (attempt >= GUARD_ATTEMPTS)
      throw new StoreError(`dedupe guard for ${route} kept changing; gave up after ${attempt} attempts`);
  }
};

const claimOf = (guard: Guard): GuardClaim => ({
  owner: guard.owner,
  ids: guard.messageIds,
  recordsExpireAt: guard.recordsExpireAt,
  ...(guard.deliveryKey === undefined ? {} : { deliveryKey: guard.deliveryKey }),
});

/** What a guard put claims: the accept it stands for. */
interface GuardClaim {
  readonly owner: string;
  readonly ids: readonly string[];
  readonly recordsExpireAt: number;
  /** The accept's own dedupe key (its delivery id), which only a retry of the same delivery carries. */
  readonly deliveryKey?: string;
}

/** One put's outcome in a refused transaction. */
type TransactOutcomePut = Extract<TransactOutcome, { applied: false }>['puts'][number];

/** The guard that refused a put, while its window lasts; `undefined` when the put was not refused by a live guard. */
const liveGuard = (put: TransactOutcomePut | undefined, route: string, now: Date): Guard | undefined => {
  if (put === undefined || !put.refused || put.current === undefined) return undefined;
  const guard = guardFromItem(put.current, route);
  return guard.windowEndsAt > epochSeconds(now) ? guard : undefined;
};

/** Places one key's guard for `claim`; `undefined` when placed, else the live guard of another accept. */
const placeGuard = async (
  table: StoreTable,
  input: { route: string; dedupeKey: string; claim: GuardClaim; now: Date; windowSeconds: number },
): Promise<Guard | undefined> => {
  for (let attempt = 1; ; attempt += 1) {
    const existing = await putGuard(table, input);
    if (existing !== 'vanished') return existing;
    if (attempt >= GUARD_ATTEMPTS) {
      throw new StoreError(`dedupe guard for ${input.route} kept changing; gave up after ${attempt} attempts`);
    }
  }
};

/** The `expiresAt` of records created at `now`: TTL deletes them some time after it. */
const expiresAtOf = (now: Date, retentionDays: number): number =>
  epochSeconds(now) + Math.ceil(retentionDays * DAY_SECONDS);

const validate = (input: AcceptInput, retentionDays: number): void => {
  const { route, dedupeKey, windowSeconds, messages } = input;
  if (messages.length > MAX_RECORDS_PER_WEBHOOK) {
    throw new StoreError(`one webhook may record at most ${MAX_RECORDS_PER_WEBHOOK} messages, got ${messages.length}`);
  }
  if (messages.length === 0) {
    throw new StoreError('an accept records at least one message; record filtered webhooks as DROPPED');
  }
  // '#' separates the parts of the guard's key: a route containing one could collide with another.
  if (route === '' || route.includes('#')) {
    throw new StoreError(`invalid route name: ${JSON.stringify(route)}`);
  }
  if (dedupeKey === '' || input.replayKey === '') throw new StoreError('empty dedupe key');
  if (!Number.isInteger(windowSeconds) || windowSeconds < 0) {
    throw new StoreError(`windowSeconds must be a whole number ≥ 0, got ${windowSeconds}`);
  }
  if (!(retentionDays > 0)) throw new StoreError(`retentionDays must be > 0, got ${retentionDays}`);
  for (const message of messages) {
    const state: string = message.state ?? MessageState.Pending;
    // Checked at run time too: callers written in JavaScript or casting past the type exist.
    if (state !== MessageState.Pending && state !== MessageState.Dropped && state !== MessageState.Deferred) {
      throw new StoreError(`message ${message.index}: cannot be created in state ${state}`);
    }
    const bad = message.to.find((recipient) => !E164_DIGITS_PATTERN.test(recipient));
    if (bad !== undefined) throw new StoreError(`message ${message.index}: invalid recipient ${bad}`);
    if ((state === MessageState.Pending || state === MessageState.Deferred) && message.to.length === 0) {
      throw new StoreError(`message ${message.index}: a ${state.toLowerCase()} message needs a recipient`);
    }
    if (state === MessageState.Deferred && (message.nextAttemptAt === undefined || !message.reason)) {
      throw new StoreError(`message ${message.index}: a deferred message needs a reason and the end of its window`);
    }
    if (state === MessageState.Dropped && !message.reason) {
      throw new StoreError(`message ${message.index}: a dropped message needs a reason`);
    }
  }
};

const buildRecords = ({
  route,
  dedupeKey,
  messages,
  priority,
  ids,
  now,
  retentionDays,
}: {
  route: string;
  dedupeKey: string;
  messages: readonly NewMessage[];
  priority: RoutePriority | undefined;
  ids: readonly string[];
  now: Date;
  retentionDays: number;
}): MessageRecord[] => {
  const at = now.toISOString();
  const expiresAt = expiresAtOf(now, retentionDays);
  // A recovering duplicate may have rendered a different number of messages (config changed in
  // between); it can only fill the ids the guard holds.
  const count = Math.min(messages.length, ids.length);
  return messages.slice(0, count).map((message, position) => ({
    id: ids[position] as string,
    route,
    dedupeKey,
    lane: laneOf({ ...message, priority }),
    index: message.index,
    part: message.part,
    parts: message.parts,
    text: message.text,
    to: [...message.to],
    ...(message.senderId === undefined ? {} : { senderId: message.senderId }),
    encoding: message.encoding,
    characters: message.characters,
    segments: message.segments,
    delivery: message.delivery,
    ...(message.notice === undefined ? {} : { notice: message.notice }),
    ...(message.incident === undefined ? {} : { incident: message.incident }),
    ...(message.critical === true ? { critical: true as const } : {}),
    state: message.state ?? MessageState.Pending,
    attempts: 0,
    redrives: 0,
    createdAt: at,
    updatedAt: at,
    ...(message.reason === undefined ? {} : { reason: message.reason }),
    ...(message.nextAttemptAt === undefined ? {} : { nextAttemptAt: message.nextAttemptAt.toISOString() }),
    ...(message.digestOf === undefined ? {} : { digestOf: [...message.digestOf] }),
    history: [stateChange({ at, state: message.state ?? MessageState.Pending, reason: message.reason })],
    expiresAt,
  }));
};

/** The put of one key's guard for `claim`: placed unless a live guard of another accept holds the key. */
const guardPut = ({
  route,
  dedupeKey,
  claim,
  now,
  windowSeconds,
}: {
  route: string;
  dedupeKey: string;
  claim: GuardClaim;
  now: Date;
  windowSeconds: number;
}): ConditionalPut => {
  const nowSeconds = epochSeconds(now);
  const windowEndsAt = nowSeconds + windowSeconds;
  return {
    Item: {
      ...dedupeItemKey(route, dedupeKey),
      kind: str(ItemKind.Dedupe),
      dedupeKey: str(dedupeKey),
      owner: str(claim.owner),
      messageIds: strList(claim.ids),
      acceptedAt: str(now.toISOString()),
      windowEndsAt: num(windowEndsAt),
      recordsExpireAt: num(claim.recordsExpireAt),
      ...(claim.deliveryKey === undefined ? {} : { deliveryKey: str(claim.deliveryKey) }),
      // TTL deletes up to 48 h late, which is why the condition compares windowEndsAt.
      [TABLE.timeToLive]: num(windowEndsAt),
    },
    ConditionExpression: 'attribute_not_exists(#pk) OR windowEndsAt <= :now OR #owner = :owner',
    ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#owner': 'owner' },
    ExpressionAttributeValues: { ':now': num(nowSeconds), ':owner': str(claim.owner) },
  };
};

/** The put of one message record: at most one record per id, ever. */
const recordPut = (record: MessageRecord): ConditionalPut => ({
  Item: messageItem(record),
  ConditionExpression: 'attribute_not_exists(#pk)',
  ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
});

/** `undefined` when this call placed the guard (or it already named the same accept); otherwise the live guard it collided with. */
const putGuard = async (
  table: StoreTable,
  input: { route: string; dedupeKey: string; claim: GuardClaim; now: Date; windowSeconds: number },
): Promise<Guard | 'vanished' | undefined> => {
  // The blocking guard: with the refusal on AWS, read after it locally.
  const outcome = await writeIf(table, guardPut(input), { current: true });
  if (outcome.applied) return undefined;
  if (outcome.current === undefined) return 'vanished';
  const guard = guardFromItem(outcome.current, input.route);
  // Read after the failure, the guard may have expired meanwhile: then try again to place ours.
  return guard.windowEndsAt > epochSeconds(input.now) ? guard : 'vanished';
};

const guardFromItem = (item: Item, route: string): Guard => {
  const read = new ItemReader(item, `DEDUPE#${route}`);
  const deliveryKey = read.optStr('deliveryKey');
  return {
    owner: read.str('owner'),
    messageIds: read.strList('messageIds'),
    windowEndsAt: read.num('windowEndsAt'),
    recordsExpireAt: read.num('recordsExpireAt'),
    ...(deliveryKey === undefined ? {} : { deliveryKey }),
  };
};

/** Puts every record that does not exist yet; returns how many this call wrote. */
const putMessages = async (table: StoreTable, records: readonly MessageRecord[]): Promise<number> => {
  // Refused: a concurrent duplicate (or the accept it duplicates) wrote this id first, which is the point.
  // Every put is answered before anything is thrown, so the answer means no put is still under way.
  const outcomes = await Promise.allSettled(records.map(async (record) => await writeIf(table, recordPut(record))));
  let written = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') throw outcome.reason;
    if (outcome.value.applied) written += 1;
  }
  return written;
};

/** The ids among `ids` that have no message record, by consistent reads of their keys only. */
const missingIds = async (table: StoreTable, ids: readonly string[]): Promise<Set<string>> => {
  const found = await Promise.all(
    ids.map(async (id) => {
      const { Item: item } = await table.client.send(
        new GetItemCommand({
          TableName: table.tableName,
          Key: messageKey(id),
          ConsistentRead: true,
          ProjectionExpression: '#pk',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
        }),
      );
      return item !== undefined;
    }),
  );
  return new Set(ids.filter((_, position) => !found[position]));
};

/**
 * A duplicate's answer, once every record of the guard that can be written exists: writes the
 * records a half-finished (or still running) accept has not written yet.
 */
const completeDuplicate = async (
  table: StoreTable,
  { guard, now, build }: { guard: Guard; now: Date; build: (guardIds: readonly string[]) => readonly MessageRecord[] },
): Promise<AcceptResult> => {
  const plain = { outcome: AcceptOutcome.Duplicate, ids: guard.messageIds, recovered: 0 } as const;
  // TTL may have deleted the records: a rewritten one would be a new, second SMS.
  if (epochSeconds(now) >= guard.recordsExpireAt) return plain;
  const missing = await missingIds(table, guard.messageIds);
  if (missing.size === 0) return plain;
  const recovered = await putMessages(
    table,
    build(guard.messageIds).filter((record) => missing.has(record.id)),
  );
  return { ...plain, recovered };
};

/** What `recordNotice` records. */
export interface NoticeInput {
  readonly kind: NoticeKind;
  /** The route the notice is listed under (`_relay` for the low-balance SMS). */
  readonly route: string;
  /** What makes this notice one of a kind (the window it summarises, the time of the drop): a repeat records nothing. */
  readonly key: string;
  readonly message: NewMessage;
  readonly now?: Date;
  readonly retentionDays?: number;
}

/** How long a notice's key counts as a repeat: longer than any window a notice can be about. */
const NOTICE_WINDOW_SECONDS = 35 * DAY_SECONDS;

/**
 * Records one of the relay's own SMS (low balance, a limit's summary) as a `PENDING` message that
 * says which notice it is, so the sender knows it for one without guessing from its key. A second
 * call with the same kind, route and key records nothing (its ids are returned).
 *
 * @example
 * ```typescript
 * await recordNotice(table, { kind: 'held-summary', route: 'alerts', key: window.window, message });
 * ```
 */
export const recordNotice = async (
  table: StoreTable,
  { kind, route, key, message, now, retentionDays }: NoticeInput,
): Promise<AcceptResult> =>
  await acceptWebhook(table, {
    route,
    dedupeKey: `notice:${kind}:${key}`,
    windowSeconds: NOTICE_WINDOW_SECONDS,
    messages: [{ ...message, notice: kind }],
    ...(now === undefined ? {} : { now }),
    ...(retentionDays === undefined ? {} : { retentionDays }),
  });

/**
 * Accepting webhooks and notices: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const acceptOperations = (table: StoreTable) => ({
  /** Records a webhook: dedupe guard plus 1–99 message records. See {@link acceptWebhook}. */
  acceptWebhook: async (input: AcceptInput): Promise<AcceptResult> => await acceptWebhook(table, input),
  /** Records one of the relay's own SMS (low balance, a limit's summary), once per key. See {@link recordNotice}. */
  recordNotice: async (input: NoticeInput): Promise<AcceptResult> => await recordNotice(table, input),
});
