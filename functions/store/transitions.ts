import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { num, str } from './attributes';
import { lastErrorValue, messageFromItem, resultValue } from './codec';
import { type StoreContext, isConditionalCheckFailed } from './context';
import { ClaimLostError, InvalidArgumentError } from './errors';
import { buildUpdate, type UpdateSpec } from './expressions';
import { newId } from './ids';
import { ItemKind, messageKey } from './keys';
import { MessageState } from './table';
import { Delivery, type LastError, type MessageRecord, type SendResult } from './types';

/** Applies a conditional update to a message record; `undefined` when the condition refused it. */
const transition = async (context: StoreContext, id: string, spec: UpdateSpec): Promise<MessageRecord | undefined> => {
  try {
    const { Attributes: item } = await context.client.send(
      new UpdateItemCommand({
        TableName: context.tableName,
        Key: messageKey(id),
        ...buildUpdate(spec),
        ReturnValues: 'ALL_NEW',
      }),
    );
    // ALL_NEW always returns the item of a successful update.
    return item === undefined ? undefined : messageFromItem(item);
  } catch (error) {
    if (isConditionalCheckFailed(error)) return undefined;
    throw error;
  }
};

/** Options of {@link claimMessage}. */
export interface ClaimOptions {
  readonly now?: Date;
  /**
   * Also take over a `SENDING` record claimed at least this long ago, but only on an
   * at-least-once route: its sender is presumed dead, and sending again is what at-least-once
   * allows. At-most-once records are never taken over; the sweeper marks them `UNKNOWN`.
   * Omitted: only `PENDING` records are claimed.
   */
  readonly staleAfterMs?: number;
}

/**
 * Claims a message for sending: one conditional update from `PENDING` (and due) to `SENDING`,
 * with `attempts + 1` and a fresh `claimToken`. Of any number of concurrent claims exactly one
 * gets the record; this is what keeps a second invocation from sending it again.
 *
 * @returns the claimed record, or `undefined` when it is missing, not pending, not yet due, or
 * someone else claimed it. Never throws for a lost race.
 *
 * @example
 * ```typescript
 * const record = await store.claimMessage(id);
 * if (record === undefined) return; // someone else has it, or it is no longer pending
 * const result = await sms.send(record);
 * await store.markSent(record.id, record.claimToken!, result);
 * ```
 */
export const claimMessage = async (
  context: StoreContext,
  id: string,
  { now = context.clock(), staleAfterMs }: ClaimOptions = {},
): Promise<MessageRecord | undefined> => {
  const at = now.toISOString();
  const due = '(#state = :pending AND (attribute_not_exists(#nextAttemptAt) OR #nextAttemptAt <= :now))';
  const stale = '(#state = :sending AND #claimedAt <= :staleBefore AND #delivery = :atLeastOnce)';
  return await transition(context, id, {
    set: {
      state: str(MessageState.Sending),
      claimedAt: str(at),
      claimToken: str(newId(now)),
      updatedAt: str(at),
    },
    add: { attempts: num(1) },
    remove: ['nextAttemptAt'],
    // DynamoDB rejects redundant parentheses, so `due` alone is not wrapped again.
    condition: `#kind = :message AND ${staleAfterMs === undefined ? due : `(${due} OR ${stale})`}`,
    values: {
      ':message': str(ItemKind.Message),
      ':pending': str(MessageState.Pending),
      ':now': str(at),
      ...(staleAfterMs === undefined
        ? {}
        : {
            ':sending': str(MessageState.Sending),
            ':staleBefore': str(new Date(now.getTime() - staleAfterMs).toISOString()),
            ':atLeastOnce': str(Delivery.AtLeastOnce),
          }),
    },
  });
};

/** Options shared by the completions. */
export interface CompleteOptions {
  readonly now?: Date;
}

/**
 * Completes a claimed message. Conditional on `SENDING` with this claim token, so a sender whose
 * claim went stale cannot overwrite the outcome of the one that took over.
 */
const complete = async (
  context: StoreContext,
  id: string,
  token: string,
  { set, remove = [] }: Pick<UpdateSpec, 'set' | 'remove'>,
): Promise<MessageRecord> => {
  const record = await transition(context, id, {
    set,
    remove: ['claimToken', ...remove],
    condition: '#state = :sending AND #claimToken = :token',
    values: { ':sending': str(MessageState.Sending), ':token': str(token) },
  });
  if (record === undefined) throw new ClaimLostError(id);
  return record;
};

/**
 * Records that the SMS service accepted the message.
 *
 * @throws {ClaimLostError} the record is not `SENDING` with this token
 *
 * @example
 * ```typescript
 * await store.markSent(record.id, token, { deducted: 2, remainingBalance: 98, message: 'ok',
 *   senderId: 'SHOP', recipients: body.recipients });
 * ```
 */
export const markSent = async (
  context: StoreContext,
  id: string,
  token: string,
  result: SendResult,
  { now = context.clock() }: CompleteOptions = {},
): Promise<MessageRecord> =>
  await complete(context, id, token, {
    set: {
      state: str(MessageState.Sent),
      result: resultValue(result),
      sentAt: str(now.toISOString()),
      updatedAt: str(now.toISOString()),
    },
    remove: ['reason', 'nextAttemptAt'],
  });

const finalWithError =
  (state: MessageState) =>
  async (
    context: StoreContext,
    id: string,
    token: string,
    reason: string,
    lastError: LastError,
    { now = context.clock() }: CompleteOptions = {},
  ): Promise<MessageRecord> =>
    await complete(context, id, token, {
      set: {
        state: str(state),
        reason: str(reason),
        lastError: lastErrorValue(lastError),
        updatedAt: str(now.toISOString()),
      },
    });

const finalWithReason =
  (state: MessageState) =>
  async (context: StoreContext, id: string, token: string, reason: string, { now = context.clock() }: CompleteOptions = {}): Promise<MessageRecord> =>
    await complete(context, id, token, {
      set: { state: str(state), reason: str(reason), updatedAt: str(now.toISOString()) },
    });

/**
 * Records that the message was certainly not sent and will not be tried again.
 *
 * @throws {ClaimLostError} the record is not `SENDING` with this token
 *
 * @example
 * ```typescript
 * await store.markFailed(id, token, 'rejected by the service', { name: 'BadRequest', status: 400, message });
 * ```
 */
export const markFailed = finalWithError(MessageState.Failed);

/**
 * Records that the message may or may not have gone out (time-out, reset, 5xx) on an
 * at-most-once route: it is never retried automatically.
 *
 * @throws {ClaimLostError} the record is not `SENDING` with this token
 *
 * @example
 * ```typescript
 * await store.markUnknown(id, token, 'timed out after 10 s', {
 *   name: 'TimeoutError',
 *   delivery: 'maybe-sent',
 *   message: 'no answer in 10 s',
 * });
 * ```
 */
export const markUnknown = finalWithError(MessageState.Unknown);

/** Options of {@link markParked}. */
export interface ParkOptions extends CompleteOptions {
  readonly lastError?: LastError;
}

/**
 * Parks a message the balance did not cover (402). It goes out after a top-up and `requeue`.
 *
 * @throws {ClaimLostError} the record is not `SENDING` with this token
 *
 * @example
 * ```typescript
 * await store.markParked(id, token, 'insufficient balance', { lastError });
 * ```
 */
export const markParked = async (
  context: StoreContext,
  id: string,
  token: string,
  reason: string,
  { now = context.clock(), lastError }: ParkOptions = {},
): Promise<MessageRecord> =>
  await complete(context, id, token, {
    set: {
      state: str(MessageState.Parked),
      reason: str(reason),
      lastError: lastError === undefined ? undefined : lastErrorValue(lastError),
      updatedAt: str(now.toISOString()),
    },
  });

/**
 * Holds a message back because a route limit refused it; it counts in the route's summary SMS.
 *
 * @throws {ClaimLostError} the record is not `SENDING` with this token
 *
 * @example
 * ```typescript
 * const limit = await store.reserveLimit({ route, messages: { max: 10, windowSeconds: 3600 } });
 * if (!limit.allowed) await store.markHeld(id, token, `limit: ${limit.reason}`);
 * ```
 */
export const markHeld = finalWithReason(MessageState.Held);

/**
 * Drops a claimed message that must not go out any more (a low-balance notice whose balance is
 * back above the threshold). Final: it is never sent.
 *
 * @throws {ClaimLostError} the record is not `SENDING` with this token
 *
 * @example
 * ```typescript
 * await store.markDropped(id, token, 'stale: the balance is back above the threshold');
 * ```
 */
export const markDropped = finalWithReason(MessageState.Dropped);

/** Options of {@link releaseForRetry}. */
export interface RetryOptions extends CompleteOptions {
  /** Not to be claimed before this time. */
  readonly nextAttemptAt: Date;
  readonly lastError: LastError;
}

/**
 * Puts a claimed message back to `PENDING` for a later attempt. This is a MODIFY, not an INSERT,
 * so the stream does not trigger the sender again: the sweeper claims it once it is due (see
 * `findDuePending`).
 *
 * @throws {ClaimLostError} the record is not `SENDING` with this token
 *
 * @example
 * ```typescript
 * await store.releaseForRetry(id, token, { nextAttemptAt: new Date(Date.now() + 30_000), lastError });
 * ```
 */
export const releaseForRetry = async (
  context: StoreContext,
  id: string,
  token: string,
  { nextAttemptAt, lastError, now = context.clock() }: RetryOptions,
): Promise<MessageRecord> =>
  await complete(context, id, token, {
    set: {
      state: str(MessageState.Pending),
      nextAttemptAt: str(nextAttemptAt.toISOString()),
      lastError: lastErrorValue(lastError),
      updatedAt: str(now.toISOString()),
    },
  });

/** States an operator can send back to `PENDING`. */
export type RequeueFrom = typeof MessageState.Parked | typeof MessageState.Failed | typeof MessageState.Held;

const REQUEUE_FROM: ReadonlySet<string> = new Set([MessageState.Parked, MessageState.Failed, MessageState.Held]);

/** Options of {@link requeue}. */
export interface RequeueOptions {
  readonly from: RequeueFrom;
  readonly now?: Date;
}

/**
 * Sends a parked, failed or held message back to `PENDING`, due now, with `attempts` reset and
 * `redrives + 1`. Conditional on the record still being in `from`, so two operators redriving at
 * once move it once.
 *
 * This is a MODIFY, which the stream filter (`INSERT`, `state = PENDING`) ignores: the sweeper
 * sends it on its next pass (within a minute on AWS). Re-inserting instead would need a delete
 * and a put of the same key, which cannot share a transaction and would lose the record if the
 * second write failed.
 *
 * @returns the requeued record, or `undefined` when it is missing or not in `from`.
 *
 * @example
 * ```typescript
 * const page = await store.listByState('PARKED');
 * for (const record of page.items) await store.requeue(record.id, { from: 'PARKED' });
 * ```
 */
export const requeue = async (
  context: StoreContext,
  id: string,
  { from, now = context.clock() }: RequeueOptions,
): Promise<MessageRecord | undefined> => {
  // Checked at run time too: `from` often comes from a command line.
  if (!REQUEUE_FROM.has(from)) throw new InvalidArgumentError(`cannot requeue from ${String(from)}`);
  return await transition(context, id, {
    set: {
      state: str(MessageState.Pending),
      nextAttemptAt: str(now.toISOString()),
      updatedAt: str(now.toISOString()),
      attempts: num(0),
    },
    add: { redrives: num(1) },
    remove: ['reason', 'claimToken'],
    condition: '#kind = :message AND #state = :from',
    values: { ':message': str(ItemKind.Message), ':from': str(from) },
  });
};
