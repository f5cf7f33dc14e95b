import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type Item, ItemReader, num, str, strList } from './attributes';
import { messageItem } from './codec';
import { type StoreContext, isConditionalCheckFailed } from './context';
import { InvalidMessageError, StoreError, TooManyMessagesError } from './errors';
import { newId } from './ids';
import { DAY_SECONDS, ItemKind, dedupeKey as dedupeItemKey, epochSeconds } from './keys';
import { MessageState, TABLE } from './table';
import { DEFAULT_RETENTION_DAYS, MAX_MESSAGES_PER_WEBHOOK, type MessageRecord, type NewMessage } from './types';

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
  /** How long a second delivery with the same key counts as a duplicate. 0 turns dedupe off. */
  readonly windowSeconds: number;
  /** 1 to {@link MAX_MESSAGES_PER_WEBHOOK} messages, in fan-out order. */
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
       * Message records this call wrote for an earlier accept that stopped half-way (see
       * {@link acceptWebhook}); 0 for a plain duplicate.
       */
      readonly recovered: number;
    };

/**
 * The dedupe guard's progress. A guard is written before its messages (dynalite, the local
 * server, has no transactions), so a guard still `ACCEPTING` may belong to an accept that died.
 */
const GuardStatus = { Accepting: 'ACCEPTING', Accepted: 'ACCEPTED' } as const;

interface Guard {
  readonly acceptId: string;
  readonly messageIds: readonly string[];
  readonly status: string;
  readonly windowEndsAt: number;
}

const RECIPIENT = /^255\d{9}$/;
/** Attempts to place the guard when the one we collided with vanished before we could read it. */
const GUARD_ATTEMPTS = 3;

/**
 * Records one webhook: a dedupe guard for `(route, dedupeKey)` and one message record per entry
 * of `messages`.
 *
 * Without transactions (the local server has none, and the same code runs on AWS) atomicity
 * comes from ordering plus conditional writes:
 * 1. the guard is put with `attribute_not_exists(pk) OR windowEndsAt <= :now`, holding the new
 *    message ids and `status = ACCEPTING`: exactly one concurrent accept wins;
 * 2. each message is put with `attribute_not_exists(pk)`: at most one record per id, ever;
 * 3. the guard is set `ACCEPTED`.
 *
 * A duplicate that finds the guard still `ACCEPTING` writes its own copies of the messages under
 * the guard's ids (the same webhook renders the same messages); ids already written refuse the
 * put, so nothing is recorded twice, and an accept that died after step 1 (the webhook source saw
 * an error, so it redelivers) is completed instead of lost.
 *
 * @throws {TooManyMessagesError} more than {@link MAX_MESSAGES_PER_WEBHOOK} messages
 * @throws {InvalidMessageError} no messages, or one that breaks the data model
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
export const acceptWebhook = async (context: StoreContext, input: AcceptInput): Promise<AcceptResult> => {
  const {
    route,
    dedupeKey,
    windowSeconds,
    messages,
    now = context.clock(),
    retentionDays = DEFAULT_RETENTION_DAYS,
  } = input;
  validate(input, retentionDays);

  const acceptId = newId(now);
  const ids = messages.map(() => newId(now));

  for (let attempt = 1; ; attempt += 1) {
    const existing = await putGuard(context, { route, dedupeKey, acceptId, ids, now, windowSeconds });
    if (existing === undefined) break;
    if (existing !== 'vanished') {
      const records = buildRecords({ route, dedupeKey, messages, ids: existing.messageIds, now, retentionDays });
      return await completeDuplicate(context, { route, dedupeKey, guard: existing, records });
    }
    if (attempt >= GUARD_ATTEMPTS) {
      throw new StoreError(`dedupe guard for ${route} kept changing; gave up after ${attempt} attempts`);
    }
  }

  await putMessages(context, buildRecords({ route, dedupeKey, messages, ids, now, retentionDays }));
  await markGuardAccepted(context, route, dedupeKey, acceptId);
  return { outcome: AcceptOutcome.Accepted, ids };
};

const validate = (input: AcceptInput, retentionDays: number): void => {
  const { route, dedupeKey, windowSeconds, messages } = input;
  if (messages.length > MAX_MESSAGES_PER_WEBHOOK) {
    throw new TooManyMessagesError(messages.length, MAX_MESSAGES_PER_WEBHOOK);
  }
  if (messages.length === 0) {
    throw new InvalidMessageError('an accept records at least one message; record filtered webhooks as DROPPED');
  }
  // '#' separates the parts of the guard's key: a route containing one could collide with another.
  if (route === '' || route.includes('#')) {
    throw new InvalidMessageError(`invalid route name: ${JSON.stringify(route)}`);
  }
  if (dedupeKey === '') throw new InvalidMessageError('empty dedupe key');
  if (!Number.isInteger(windowSeconds) || windowSeconds < 0) {
    throw new InvalidMessageError(`windowSeconds must be a whole number ≥ 0, got ${windowSeconds}`);
  }
  if (!(retentionDays > 0)) throw new InvalidMessageError(`retentionDays must be > 0, got ${retentionDays}`);
  for (const message of messages) {
    const state: string = message.state ?? MessageState.Pending;
    // Checked at run time too: callers written in JavaScript or casting past the type exist.
    if (state !== MessageState.Pending && state !== MessageState.Dropped) {
      throw new InvalidMessageError(`message ${message.index}: cannot be created in state ${state}`);
    }
    const bad = message.to.find((recipient) => !RECIPIENT.test(recipient));
    if (bad !== undefined) throw new InvalidMessageError(`message ${message.index}: invalid recipient ${bad}`);
    if (state === MessageState.Pending && message.to.length === 0) {
      throw new InvalidMessageError(`message ${message.index}: a pending message needs a recipient`);
    }
    if (state === MessageState.Dropped && !message.reason) {
      throw new InvalidMessageError(`message ${message.index}: a dropped message needs a reason`);
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
  const expiresAt = epochSeconds(now) + Math.ceil(retentionDays * DAY_SECONDS);
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
    state: message.state ?? MessageState.Pending,
    attempts: 0,
    redrives: 0,
    createdAt: at,
    updatedAt: at,
    ...(message.reason === undefined ? {} : { reason: message.reason }),
    expiresAt,
  }));
};

/** `undefined` when this call placed the guard; otherwise the live guard it collided with. */
const putGuard = async (
  context: StoreContext,
  {
    route,
    dedupeKey,
    acceptId,
    ids,
    now,
    windowSeconds,
  }: { route: string; dedupeKey: string; acceptId: string; ids: readonly string[]; now: Date; windowSeconds: number },
): Promise<Guard | 'vanished' | undefined> => {
  const nowSeconds = epochSeconds(now);
  const windowEndsAt = nowSeconds + windowSeconds;
  try {
    await context.client.send(
      new PutItemCommand({
        TableName: context.tableName,
        Item: {
          ...dedupeItemKey(route, dedupeKey),
          kind: str(ItemKind.Dedupe),
          dedupeKey: str(dedupeKey),
          acceptId: str(acceptId),
          messageIds: strList(ids),
          status: str(GuardStatus.Accepting),
          acceptedAt: str(now.toISOString()),
          windowEndsAt: num(windowEndsAt),
          // TTL deletes up to 48 h late, which is why the condition compares windowEndsAt.
          [TABLE.timeToLive]: num(windowEndsAt),
        },
        ConditionExpression: 'attribute_not_exists(#pk) OR windowEndsAt <= :now',
        ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
        ExpressionAttributeValues: { ':now': num(nowSeconds) },
        // AWS returns the blocking guard with the failure, saving a read; dynalite ignores this.
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return undefined;
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    const returned = error instanceof ConditionalCheckFailedException ? error.Item : undefined;
    const item = returned ?? (await readGuardItem(context, route, dedupeKey));
    if (item === undefined) return 'vanished';
    const guard = guardFromItem(item, route);
    // Read after the failure, the guard may have expired meanwhile: then try again to place ours.
    return guard.windowEndsAt > nowSeconds ? guard : 'vanished';
  }
};

const readGuardItem = async (context: StoreContext, route: string, dedupeKey: string): Promise<Item | undefined> => {
  const { Item: item } = await context.client.send(
    new GetItemCommand({ TableName: context.tableName, Key: dedupeItemKey(route, dedupeKey), ConsistentRead: true }),
  );
  return item;
};

const guardFromItem = (item: Item, route: string): Guard => {
  const read = new ItemReader(item, `DEDUPE#${route}`);
  return {
    acceptId: read.str('acceptId'),
    messageIds: read.strList('messageIds'),
    status: read.optStr('status') ?? GuardStatus.Accepted,
    windowEndsAt: read.num('windowEndsAt'),
  };
};

/** Puts every record that does not exist yet; returns how many this call wrote. */
const putMessages = async (context: StoreContext, records: readonly MessageRecord[]): Promise<number> => {
  const outcomes = await Promise.allSettled(
    records.map((record) =>
      context.client.send(
        new PutItemCommand({
          TableName: context.tableName,
          Item: messageItem(record),
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
        }),
      ),
    ),
  );
  let written = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') written += 1;
    // Refused: a concurrent duplicate already wrote this id, which is the point.
    else if (!isConditionalCheckFailed(outcome.reason)) throw outcome.reason;
  }
  return written;
};

const markGuardAccepted = async (
  context: StoreContext,
  route: string,
  dedupeKey: string,
  acceptId: string,
): Promise<void> => {
  try {
    await context.client.send(
      new UpdateItemCommand({
        TableName: context.tableName,
        Key: dedupeItemKey(route, dedupeKey),
        UpdateExpression: 'SET #status = :accepted',
        // Only this generation of the guard: after its window a newer accept may own the key.
        ConditionExpression: 'acceptId = :acceptId',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':accepted': str(GuardStatus.Accepted), ':acceptId': str(acceptId) },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
};

const completeDuplicate = async (
  context: StoreContext,
  {
    route,
    dedupeKey,
    guard,
    records,
  }: { route: string; dedupeKey: string; guard: Guard; records: readonly MessageRecord[] },
): Promise<AcceptResult> => {
  let recovered = 0;
  if (guard.status !== GuardStatus.Accepted) {
    recovered = await putMessages(context, records);
    await markGuardAccepted(context, route, dedupeKey, guard.acceptId);
  }
  return { outcome: AcceptOutcome.Duplicate, ids: guard.messageIds, recovered };
};
