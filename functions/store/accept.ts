import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { MAX_RECORDS_PER_WEBHOOK } from '../core/defaults';
import { type Item, ItemReader, num, str, strList } from './attributes';
import { messageItem, stateChange } from './codec';
import type { StoreTable } from './context';
import { writeIf } from './write';
import { StoreError } from './errors';
import { newId } from './ids';
import { DAY_SECONDS, ItemKind, dedupeKey as dedupeItemKey, epochSeconds, messageKey } from './keys';
import { MessageState, TABLE } from './table';
import { PHONE_NUMBER_PATTERN } from '../core/defaults';
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

/** Attempts to place the guard when the one we collided with vanished before we could read it. */
const GUARD_ATTEMPTS = 3;

/**
 * Records one webhook: a dedupe guard for `(route, dedupeKey)` and one message record per entry
 * of `messages`.
 *
 * Without transactions (the local server has none, and the same code runs on AWS) atomicity
 * comes from ordering plus conditional writes, 1 + N writes in two round trips:
 * 1. the guard is put with `attribute_not_exists(pk) OR windowEndsAt <= :now`, holding the new
 *    message ids and when their records expire: exactly one concurrent accept wins;
 * 2. then the messages are put, concurrently, each with `attribute_not_exists(pk)`: at most one
 *    record per id, ever. The answer comes once every put has succeeded or been refused.
 *
 * A duplicate (its guard put refused) reads which of the guard's ids have a record (consistent
 * `GetItem`s, concurrently) and writes the missing ones from its own evaluation, under the
 * guard's ids (the same webhook renders the same messages); an id written meanwhile refuses the
 * put, so nothing is recorded twice, and an accept that died after step 1 (the webhook source saw
 * an error, so it redelivers) is completed instead of lost. The duplicate answers only after that,
 * so its answer, too, means every record exists. Once the records' retention has passed it writes
 * nothing, since TTL may have deleted them and a rewritten record would be sent again.
 *
 * With a `replayKey` (the signed body of a sender that does not sign its delivery id) the body's
 * guard is placed first, then the delivery id's. A body already accepted makes the request a
 * duplicate before it writes anything under its own delivery id: a replay under a fresh id leaves
 * no guard there, also while it races the genuine delivery that carries that id, so that delivery
 * is accepted. Only a retry of the same delivery (the body's guard names the same delivery id)
 * places the id's guard, completing an accept that stopped between its two guards. A new body
 * under an id already accepted (a sender that re-signs its retries) is a duplicate of that accept,
 * and its body's guard is pointed there. Two copies of one signed body racing each other under
 * different ids cannot be told apart: the first to place the body's guard is the accept.
 *
 * @throws {StoreError} no messages, more than {@link MAX_MESSAGES_PER_WEBHOOK}, or one that breaks the data model
 *
 * @example
 * ```typescript
 * const result = await acceptWebhook(context, {
 *   route: 'orders',
 *   dedupeKey: deliveryId,
 *   windowSeconds: 86_400,
 *   messages: [{ index: 0, part: 1, parts: 1, text: 'Order #42 shipped', to: ['255712345678'],
 *     encoding: 'GSM-7', characters: 17, segments: 1, delivery: 'at-most-once' }],
 * });
 * if (result.outcome === 'duplicate') logger.info('duplicate webhook', { ids: result.ids });
 * ```
 */
export const acceptWebhook = async (context: StoreTable, input: AcceptInput): Promise<AcceptResult> => {
  const {
    route,
    dedupeKey,
    replayKey,
    windowSeconds,
    messages,
    now = context.clock(),
    retentionDays = DEFAULT_RETENTION_DAYS,
  } = input;
  validate(input, retentionDays);

  const ids = messages.map(() => newId(now));
  const recordsExpireAt = expiresAtOf(now, retentionDays);
  const own: GuardClaim = { owner: ids[0]!, ids, recordsExpireAt, deliveryKey: dedupeKey };
  const build = (guardIds: readonly string[]): MessageRecord[] =>
    buildRecords({ route, dedupeKey, messages, ids: guardIds, now, retentionDays });
  const place = (key: string, claim: GuardClaim) => placeGuard(context, { route, dedupeKey: key, claim, now, windowSeconds });

  // The signed body's key goes first: a replay is found before it places anything under its own,
  // unsigned delivery id, so it cannot leave a guard there that would turn the genuine delivery
  // carrying that id into a "duplicate". Nothing has to be cleaned up afterwards, which is what
  // makes a replay racing the genuine delivery safe: the replay never writes the id's guard.
  const hasReplayKey = replayKey !== undefined && replayKey !== dedupeKey;
  if (hasReplayKey) {
    const byBody = await place(replayKey, own);
    if (byBody !== undefined) {
      // The same delivery again (the sender's retry) may complete an accept that stopped between
      // its two guards; any other delivery id is a replay's and gets no guard.
      // Should that id name another accept, the body's guard is one about to be pointed at it (below).
      const byId = byBody.deliveryKey === dedupeKey ? await place(dedupeKey, claimOf(byBody)) : undefined;
      return await completeDuplicate(context, { guard: byId ?? byBody, now, build });
    }
  }
  const byId = await place(dedupeKey, own);
  if (byId === undefined) {
    await putMessages(context, build(ids));
    return { outcome: AcceptOutcome.Accepted, ids };
  }
  // A new body under a delivery id already accepted (a sender that re-signs its retries): the body's
  // guard, placed for this call's ids that will never be written, is pointed at that accept.
  if (hasReplayKey) await repointGuard(context, route, replayKey, ids[0]!, byId);
  return await completeDuplicate(context, { guard: byId, now, build });
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

/** Places one key's guard for `claim`; `undefined` when placed, else the live guard of another accept. */
const placeGuard = async (
  context: StoreTable,
  input: { route: string; dedupeKey: string; claim: GuardClaim; now: Date; windowSeconds: number },
): Promise<Guard | undefined> => {
  for (let attempt = 1; ; attempt += 1) {
    const existing = await putGuard(context, input);
    if (existing !== 'vanished') return existing;
    if (attempt >= GUARD_ATTEMPTS) {
      throw new StoreError(`dedupe guard for ${input.route} kept changing; gave up after ${attempt} attempts`);
    }
  }
};

/** Makes a guard this call placed name `target` instead, unless it was changed meanwhile. */
const repointGuard = async (context: StoreTable, route: string, dedupe: string, owner: string, target: Guard): Promise<void> => {
  // Refused: changed meanwhile, which leaves it to whoever changed it.
  await writeIf(context, {
    Key: dedupeItemKey(route, dedupe),
    UpdateExpression: `SET #owner = :target, messageIds = :ids, recordsExpireAt = :expires${target.deliveryKey === undefined ? ' REMOVE deliveryKey' : ', deliveryKey = :delivery'}`,
    ConditionExpression: '#owner = :owner',
    ExpressionAttributeNames: { '#owner': 'owner' },
    ExpressionAttributeValues: {
      ':target': str(target.owner),
      ':ids': strList(target.messageIds),
      ':owner': str(owner),
      ':expires': num(target.recordsExpireAt),
      ...(target.deliveryKey === undefined ? {} : { ':delivery': str(target.deliveryKey) }),
    },
  });
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
    const bad = message.to.find((recipient) => !PHONE_NUMBER_PATTERN.test(recipient));
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
  ids,
  now,
  retentionDays,
}: {
  route: string;
  dedupeKey: string;
  messages: readonly NewMessage[];
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

/** `undefined` when this call placed the guard (or it already named the same accept); otherwise the live guard it collided with. */
const putGuard = async (
  context: StoreTable,
  { route, dedupeKey, claim, now, windowSeconds }: { route: string; dedupeKey: string; claim: GuardClaim; now: Date; windowSeconds: number },
): Promise<Guard | 'vanished' | undefined> => {
  const nowSeconds = epochSeconds(now);
  const windowEndsAt = nowSeconds + windowSeconds;
  const outcome = await writeIf(
    context,
    {
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
    },
    // The blocking guard: with the refusal on AWS, read after it locally.
    { current: true },
  );
  if (outcome.applied) return undefined;
  if (outcome.current === undefined) return 'vanished';
  const guard = guardFromItem(outcome.current, route);
  // Read after the failure, the guard may have expired meanwhile: then try again to place ours.
  return guard.windowEndsAt > nowSeconds ? guard : 'vanished';
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
const putMessages = async (context: StoreTable, records: readonly MessageRecord[]): Promise<number> => {
  // Refused: a concurrent duplicate (or the accept it duplicates) wrote this id first, which is the point.
  // Every put is answered before anything is thrown, so the answer means no put is still under way.
  const outcomes = await Promise.allSettled(
    records.map(async (record) => await writeIf(context, { Item: messageItem(record), ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': TABLE.partitionKey } })),
  );
  let written = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') throw outcome.reason;
    if (outcome.value.applied) written += 1;
  }
  return written;
};

/** The ids among `ids` that have no message record, by consistent reads of their keys only. */
const missingIds = async (context: StoreTable, ids: readonly string[]): Promise<Set<string>> => {
  const found = await Promise.all(
    ids.map(async (id) => {
      const { Item: item } = await context.client.send(
        new GetItemCommand({
          TableName: context.tableName,
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
  context: StoreTable,
  {
    guard,
    now,
    build,
  }: { guard: Guard; now: Date; build: (guardIds: readonly string[]) => readonly MessageRecord[] },
): Promise<AcceptResult> => {
  const plain = { outcome: AcceptOutcome.Duplicate, ids: guard.messageIds, recovered: 0 } as const;
  // TTL may have deleted the records: a rewritten one would be a new, second SMS.
  if (epochSeconds(now) >= guard.recordsExpireAt) return plain;
  const missing = await missingIds(context, guard.messageIds);
  if (missing.size === 0) return plain;
  const recovered = await putMessages(context, build(guard.messageIds).filter((record) => missing.has(record.id)));
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
 * await recordNotice(context, { kind: 'held-summary', route: 'alerts', key: window.window, message });
 * ```
 */
export const recordNotice = async (context: StoreTable, { kind, route, key, message, now, retentionDays }: NoticeInput): Promise<AcceptResult> =>
  await acceptWebhook(context, {
    route,
    dedupeKey: `notice:${kind}:${key}`,
    windowSeconds: NOTICE_WINDOW_SECONDS,
    messages: [{ ...message, notice: kind }],
    ...(now === undefined ? {} : { now }),
    ...(retentionDays === undefined ? {} : { retentionDays }),
  });
