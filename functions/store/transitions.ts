import { num, str } from './attributes';
import {
  boundedHistory,
  DUE_AT,
  dismissalValue,
  historyValue,
  lastErrorValue,
  messageFromItem,
  resultAttributes,
  stateChange,
} from './codec';
import type { StoreTable } from './store-table';
import { writeIf } from './write';
import { ClaimLostError, StoreError } from './errors';
import { buildUpdate, type UpdateSpec } from './expressions';
import { newId } from './ids';
import { ItemKind, messageKey } from './keys';
import { getMessage } from './record-reads';
import { MessageState } from './table';
import { DeliveryPolicy } from '../core/config/policies';
import { DISMISS, HISTORY_KEPT } from '../core/defaults';
import { LANES } from '../core/lanes';
import type { LastError, MessageRecord, ProviderAttempt, SendResult, StateChange } from './types';

/** A change of state: the update's `set` and the `history` entry it appends in the same write. */
interface Change extends Omit<UpdateSpec, 'append'> {
  readonly condition: string;
  readonly entry: StateChange;
}

/** Entries a history keeps at most: past this, a transition cuts it (see {@link boundedHistory}). */
const HISTORY_BOUND = HISTORY_KEPT.first + HISTORY_KEPT.last;

/**
 * Applies a conditional update to a message record that moves it to `entry.state`, appending
 * `entry` to its history in the same write; `undefined` when the condition refused it (and then
 * nothing is appended).
 *
 * The history is kept bounded here, so the bound holds on AWS as locally:
 * - a change that takes it past {@link HISTORY_BOUND} entries is followed by a second write that
 *   cuts it (see {@link trimmed}); a lost race costs nothing more than before;
 * - a change DynamoDB refuses because the item would pass 400 KB (a record whose history grew
 *   before there was a bound) is written again with the history already cut, after a read, and
 *   conditional on the record being as read: a record changed meanwhile refuses it, as a lost race
 *   does.
 */
export const transition = async (
  table: StoreTable,
  id: string,
  { entry, condition, values, ...spec }: Change,
): Promise<MessageRecord | undefined> => {
  let record: MessageRecord | undefined;
  try {
    record = await update(table, id, { ...spec, condition, values, append: { history: historyValue([entry]) } });
  } catch (error) {
    if (!isItemTooLarge(error)) throw error;
    return await withHistoryCut(table, id, { entry, condition, values, ...spec }, error);
  }
  return record === undefined ? undefined : await trimmed(table, id, record);
};

/**
 * Cuts the history of a record just changed when it has passed its bound, conditional on nothing
 * having changed it since. Best effort: the change itself is done, so a cut refused or failed
 * returns the record as changed, and the next change cuts it.
 */
const trimmed = async (table: StoreTable, id: string, record: MessageRecord): Promise<MessageRecord> => {
  if (record.history.length <= HISTORY_BOUND) return record;
  const { history, omitted } = boundedHistory(record.history, record.historyOmitted);
  try {
    const cut = await update(table, id, {
      set: { history: historyValue(history), historyOmitted: num(omitted) },
      condition: '#updatedAt = :seenUpdatedAt AND size(#history) = :seenHistory',
      values: { ':seenUpdatedAt': str(record.updatedAt), ':seenHistory': num(record.history.length) },
    });
    return cut ?? record;
  } catch {
    return record;
  }
};

/**
 * Writes a change DynamoDB refused as too large with the history cut to its bound, or, should the
 * item still be too large (its other attributes), to its first entries alone.
 */
const withHistoryCut = async (
  table: StoreTable,
  id: string,
  { entry, condition, values = {}, ...spec }: Change,
  refusal: unknown,
): Promise<MessageRecord | undefined> => {
  const current = await getMessage(table, id);
  if (current === undefined) return undefined;
  // Next to no history: cutting it would not make room.
  if (current.history.length <= HISTORY_KEPT.first) throw refusal;
  const unchanged = {
    condition: `(${condition}) AND #updatedAt = :seenUpdatedAt AND size(#history) = :seenHistory`,
    values: { ...values, ':seenUpdatedAt': str(current.updatedAt), ':seenHistory': num(current.history.length) },
  };
  for (const last of [HISTORY_KEPT.last, 0]) {
    const { history, omitted } = boundedHistory([...current.history, entry], current.historyOmitted, last);
    try {
      return await update(table, id, {
        ...spec,
        ...unchanged,
        set: { ...spec.set, history: historyValue(history), historyOmitted: num(omitted) },
      });
    } catch (error) {
      if (!isItemTooLarge(error)) throw error;
    }
  }
  throw refusal;
};

/** One conditional update of a message record: the record as written, or `undefined` when its condition refused it. */
const update = async (table: StoreTable, id: string, spec: UpdateSpec): Promise<MessageRecord | undefined> => {
  const outcome = await writeIf(table, { Key: messageKey(id), ...buildUpdate(spec), ReturnValues: 'ALL_NEW' });
  // ALL_NEW always returns the item of a successful update.
  return outcome.applied ? messageFromItem(outcome.item) : undefined;
};

/** True for a write DynamoDB refused because the item would pass its 400 KB limit (the message is the same on dynalite). */
const isItemTooLarge = (error: unknown): boolean =>
  error instanceof Error &&
  error.name === 'ValidationException' &&
  /item size .*exceeded the maximum allowed size/i.test(error.message);

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
 * with `attempts + 1`, a fresh `claimToken` and a `SENDING` entry appended to `history`. Of any
 * number of concurrent claims exactly one gets the record; this is what keeps a second invocation
 * from sending it again.
 *
 * @returns the claimed record, or `undefined` when it is missing, not pending, not yet due, or
 * someone else claimed it. Never throws for a lost race.
 *
 * @example
 * ```typescript
 * const record = await store.claimMessage(id);
 * if (record === undefined) return; // someone else has it, or it is no longer pending
 * const result = await sms.send(record);
 * await store.settle(record.id, record.claimToken!, { state: 'SENT', result });
 * ```
 */
export const claimMessage = async (
  table: StoreTable,
  id: string,
  { now = table.clock(), staleAfterMs }: ClaimOptions = {},
): Promise<MessageRecord | undefined> => {
  const at = now.toISOString();
  const due = '(#state = :pending AND (attribute_not_exists(#nextAttemptAt) OR #nextAttemptAt <= :now))';
  const stale = '(#state = :sending AND #claimedAt <= :staleBefore AND #delivery = :atLeastOnce)';
  return await transition(table, id, {
    set: {
      state: str(MessageState.Sending),
      claimedAt: str(at),
      claimToken: str(newId(now)),
      updatedAt: str(at),
    },
    add: { attempts: num(1) },
    // A woken record taken: a later change leaving it PENDING (a retry) must not look woken to the stream.
    remove: ['nextAttemptAt', DUE_AT, 'wokenAt'],
    entry: stateChange({ at, state: MessageState.Sending }),
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
            ':atLeastOnce': str(DeliveryPolicy.AtLeastOnce),
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
  table: StoreTable,
  id: string,
  token: string,
  { set, remove = [], entry }: Pick<Change, 'set' | 'remove' | 'entry'>,
): Promise<MessageRecord> => {
  const record = await transition(table, id, {
    set,
    entry,
    remove: ['claimToken', ...remove],
    condition: '#state = :sending AND #claimToken = :token',
    values: { ':sending': str(MessageState.Sending), ':token': str(token) },
  });
  if (record === undefined) throw new ClaimLostError(id);
  return record;
};

/**
 * How a claimed message comes out of `SENDING`; with `attempt`, the provider the attempt went to
 * is kept on the record (`provider`, and `failoverFrom`/`failoverReason` when it was not the
 * chain's first, removed when it was) and on the history entry.
 */
export type Settlement = SettlementOutcome & { readonly attempt?: ProviderAttempt };

/** The outcome part of a {@link Settlement}. */
export type SettlementOutcome =
  /** The SMS service accepted it; its answer is kept (bounded, see `resultAttributes`). */
  | { readonly state: typeof MessageState.Sent; readonly result: SendResult }
  /** Back to waiting, for the sweeper to send once `nextAttemptAt` has come. */
  | { readonly state: typeof MessageState.Pending; readonly nextAttemptAt: Date; readonly lastError: LastError }
  /** Not sent now, and why: failed, unknown, parked (402, a reserve), held (a limit) or dropped (a stale notice). */
  | {
      readonly state:
        | typeof MessageState.Failed
        | typeof MessageState.Unknown
        | typeof MessageState.Parked
        | typeof MessageState.Held
        | typeof MessageState.Dropped;
      readonly reason: string;
      readonly lastError?: LastError;
    };

/**
 * Settles a claimed message: one conditional update from `SENDING` with this claim token, so a
 * sender whose claim went stale cannot overwrite the outcome of the one that took over. The same
 * write appends the outcome to `history`, with the settlement's `reason` and `lastError`. A return
 * to `PENDING` (a retry) is a MODIFY with `attempts` above 0, which the stream ignores: the sender
 * that settled it sends it again at its backoff while its time-out allows, else the sweeper does.
 *
 * @throws {ClaimLostError} the record is not `SENDING` with this token
 *
 * @example
 * ```typescript
 * await store.settle(record.id, token, { state: 'SENT', result });
 * await store.settle(record.id, token, { state: 'PARKED', reason: 'insufficient balance (402)', lastError });
 * await store.settle(record.id, token, { state: 'PENDING', nextAttemptAt: new Date(Date.now() + 30_000), lastError });
 * ```
 */
export const settle = async (
  table: StoreTable,
  id: string,
  token: string,
  settlement: Settlement,
  { now = table.clock() }: CompleteOptions = {},
): Promise<MessageRecord> => {
  const at = str(now.toISOString());
  const state = str(settlement.state);
  const { attempt } = settlement;
  const provider = attempt?.provider;
  const attemptSet =
    attempt === undefined
      ? {}
      : {
          provider: str(attempt.provider),
          ...(attempt.failoverFrom === undefined ? {} : { failoverFrom: str(attempt.failoverFrom) }),
          ...(attempt.failoverReason === undefined ? {} : { failoverReason: str(attempt.failoverReason) }),
        };
  // An attempt through the chain's first provider is no failover, whatever an earlier attempt was.
  const attemptRemove = [
    ...(attempt === undefined || attempt.failoverFrom !== undefined ? [] : ['failoverFrom']),
    ...(attempt === undefined || attempt.failoverReason !== undefined ? [] : ['failoverReason']),
  ];
  switch (settlement.state) {
    case MessageState.Sent:
      return await complete(table, id, token, {
        set: { state, ...resultAttributes(settlement.result), sentAt: at, updatedAt: at, ...attemptSet },
        remove: ['reason', 'nextAttemptAt', ...attemptRemove],
        entry: stateChange({ at: now.toISOString(), state: settlement.state, provider }),
      });
    case MessageState.Pending:
      return await complete(table, id, token, {
        set: {
          state,
          nextAttemptAt: str(settlement.nextAttemptAt.toISOString()),
          [DUE_AT]: str(settlement.nextAttemptAt.toISOString()),
          lastError: lastErrorValue(settlement.lastError),
          updatedAt: at,
          ...attemptSet,
        },
        remove: attemptRemove,
        entry: stateChange({ at: now.toISOString(), state: settlement.state, error: settlement.lastError, provider }),
      });
    default:
      return await complete(table, id, token, {
        set: {
          state,
          reason: str(settlement.reason),
          lastError: settlement.lastError === undefined ? undefined : lastErrorValue(settlement.lastError),
          updatedAt: at,
          ...attemptSet,
        },
        remove: attemptRemove,
        entry: stateChange({
          at: now.toISOString(),
          state: settlement.state,
          reason: settlement.reason,
          error: settlement.lastError,
          provider,
        }),
      });
  }
};

/** States an operator can send back to `PENDING`; `UNKNOWN` only with `acceptDuplicates`. */
export type RequeueFrom =
  | typeof MessageState.Parked
  | typeof MessageState.Failed
  | typeof MessageState.Held
  | typeof MessageState.Unknown;

const REQUEUE_FROM: ReadonlySet<string> = new Set([
  MessageState.Parked,
  MessageState.Failed,
  MessageState.Held,
  MessageState.Unknown,
]);

/** Options of {@link requeue}. */
export interface RequeueOptions {
  readonly from: RequeueFrom;
  readonly now?: Date;
  /**
   * Required for `from: UNKNOWN`: such a record may already have been sent (the service failed
   * after the request left), so sending it again may deliver it twice. Ignored for other states.
   * @default false
   */
  readonly acceptDuplicates?: boolean;
}

/**
 * Sends a parked, failed, held or (knowingly, see `acceptDuplicates`) unknown message back to `PENDING`, due now, with `attempts` reset,
 * `redrives + 1` and a `PENDING` entry appended to `history`. Conditional on the record still being in `from`, so two operators redriving at
 * once move it once.
 *
 * This is a MODIFY leaving the record PENDING with `attempts` 0, which the stream mapping of its
 * lane passes to the sender (a record from before lanes is given the `bulk` lane here). Re-inserting
 * instead would need a delete and a put of the same key, which cannot share a transaction and would
 * lose the record if the second write failed.
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
  table: StoreTable,
  id: string,
  { from, now = table.clock(), acceptDuplicates = false }: RequeueOptions,
): Promise<MessageRecord | undefined> => {
  // Checked at run time too: `from` often comes from a command line.
  if (!REQUEUE_FROM.has(from)) throw new StoreError(`cannot requeue from ${String(from)}`);
  if (from === MessageState.Unknown && !acceptDuplicates)
    throw new StoreError('an UNKNOWN record may already have been sent: requeue it only with acceptDuplicates');
  return await transition(table, id, {
    set: {
      state: str(MessageState.Pending),
      nextAttemptAt: str(now.toISOString()),
      [DUE_AT]: str(now.toISOString()),
      updatedAt: str(now.toISOString()),
      attempts: num(0),
    },
    // A record from before lanes: the stream's mappings each take one lane, so it must carry one.
    setIfAbsent: { lane: str(LANES.unmarked) },
    add: { redrives: num(1) },
    remove: ['reason', 'claimToken'],
    entry: stateChange({ at: now.toISOString(), state: MessageState.Pending }),
    condition: '#kind = :message AND #state = :from',
    values: { ':message': str(ItemKind.Message), ':from': str(from) },
  });
};

/** Options of {@link wake}. */
export interface WakeOptions {
  readonly now?: Date;
}

/**
 * Wakes a PENDING record that is waiting (the SMS service was unreachable while its stream event
 * came, or its retry is past the sender's time-out): sets `wokenAt`, a MODIFY of a PENDING record
 * with `wokenAt`, which the stream mapping of its lane passes to the sender. Nothing else changes
 * (no history entry: its state does not), and the claim removes `wokenAt`, so the sender's own
 * later updates never look woken. Conditional on the record still being PENDING; an event twice is
 * harmless, as the claim is conditional.
 *
 * @returns whether it was woken (`false`: missing, or no longer PENDING)
 *
 * @example
 * ```typescript
 * for (const record of page.items) await store.wake(record.id);
 * ```
 */
export const wake = async (
  table: StoreTable,
  id: string,
  { now = table.clock() }: WakeOptions = {},
): Promise<boolean> => {
  const outcome = await writeIf(table, {
    Key: messageKey(id),
    ...buildUpdate({
      set: { wokenAt: str(now.toISOString()) },
      // A record from before lanes: each of the stream's mappings takes one lane.
      setIfAbsent: { lane: str(LANES.unmarked) },
      condition: '#kind = :message AND #state = :pending',
      values: { ':message': str(ItemKind.Message), ':pending': str(MessageState.Pending) },
    }),
  });
  return outcome.applied;
};

/** States an operator can dismiss a record from: the ones the stuck-now gauges count. */
export type DismissFrom =
  | typeof MessageState.Unknown
  | typeof MessageState.Failed
  | typeof MessageState.Held
  | typeof MessageState.Parked;

/** {@link DismissFrom}, in the order the gauges and alarms name them. */
export const DISMISS_FROM = [
  MessageState.Unknown,
  MessageState.Failed,
  MessageState.Held,
  MessageState.Parked,
] as const satisfies readonly DismissFrom[];

const DISMISSIBLE: ReadonlySet<string> = new Set(DISMISS_FROM);

/** What {@link dismiss} is told. */
export interface DismissInput {
  /** Who decided it: an OS user, a name given with `--by`. At most `DISMISS.maxByChars` characters. */
  readonly by: string;
  /** Why it is not sent. Required, at most `DISMISS.maxReasonChars` characters. */
  readonly reason: string;
  /** Only while the record is still in this state (a dismissal of a listing by state); absent: any of {@link DISMISS_FROM}. */
  readonly from?: DismissFrom;
  readonly now?: Date;
}

/** What {@link dismiss} did: the record as it is now (dismissed, or as found when refused), `undefined` when there is none. */
export interface DismissOutcome {
  readonly dismissed: boolean;
  readonly record: MessageRecord | undefined;
}

/** Tries of a dismissal whose record changed state between its read and its write. */
const DISMISS_TRIES = 3;

/**
 * Ends an UNKNOWN, FAILED, HELD or PARKED record without sending it: one conditional update to the
 * final state `DISMISSED`, keeping who, when and why in `dismissal` (the record's `reason` stays
 * the one it failed, parked… with) and appending a `DISMISSED` entry to `history`. The stuck-now
 * gauges count states, so they stop counting it at their next count.
 *
 * The write is conditional on the record still being in the state it was read in (or `from`), so a
 * dismissal racing a redrive, a claim or a settlement leaves one of them done and the other
 * refused, never a mix. A SENT, PENDING or SENDING record (or any other) is refused and left as it is.
 *
 * @throws {StoreError} an empty or too long `reason` or `by`, or a `from` nobody dismisses from
 *
 * @example
 * ```typescript
 * const { dismissed, record } = await store.dismiss(id, { by: 'asha', reason: 'customer number disconnected' });
 * if (!dismissed) console.log(`not dismissed: ${record?.state ?? 'no such record'}`);
 * ```
 */
export const dismiss = async (
  table: StoreTable,
  id: string,
  { by, reason, from, now = table.clock() }: DismissInput,
): Promise<DismissOutcome> => {
  // Checked at run time too: these come from a command line, a request body, a form.
  if (from !== undefined && !DISMISSIBLE.has(from)) throw new StoreError(`cannot dismiss from ${String(from)}`);
  const why = reason.trim();
  const who = by.trim();
  if (why === '') throw new StoreError('a dismissal needs a reason');
  if (why.length > DISMISS.maxReasonChars)
    throw new StoreError(`a dismissal's reason is at most ${DISMISS.maxReasonChars} characters`);
  if (who === '' || who.length > DISMISS.maxByChars)
    throw new StoreError(`who dismissed it is 1 to ${DISMISS.maxByChars} characters`);
  const at = now.toISOString();
  const write = async (state: DismissFrom): Promise<MessageRecord | undefined> =>
    await transition(table, id, {
      set: {
        state: str(MessageState.Dismissed),
        updatedAt: str(at),
        dismissal: dismissalValue({ by: who, at, reason: why, from: state }),
      },
      remove: ['nextAttemptAt', 'claimToken'],
      entry: stateChange({ at, state: MessageState.Dismissed, reason: `${why} (dismissed by ${who})` }),
      condition: '#kind = :message AND #state = :from',
      values: { ':message': str(ItemKind.Message), ':from': str(state) },
    });
  if (from !== undefined) {
    const record = await write(from);
    return record === undefined
      ? { dismissed: false, record: await getMessage(table, id) }
      : { dismissed: true, record };
  }
  // The state it is in is read first, so the write can say which one it was dismissed from.
  for (let tries = 0; tries < DISMISS_TRIES; tries += 1) {
    const current = await getMessage(table, id);
    if (current === undefined || !DISMISSIBLE.has(current.state)) return { dismissed: false, record: current };
    const record = await write(current.state as DismissFrom);
    if (record !== undefined) return { dismissed: true, record };
  }
  return { dismissed: false, record: await getMessage(table, id) };
};

/**
 * A message's changes of state: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const transitionOperations = (table: StoreTable) => ({
  /** `PENDING` and due → `SENDING` for exactly one caller; `undefined` for the others. */
  claimMessage: async (id: string, options?: ClaimOptions): Promise<MessageRecord | undefined> =>
    await claimMessage(table, id, options),
  /** `SENDING` → the settlement's state (sent, failed, back to pending…). Throws `ClaimLostError` without the claim. */
  settle: async (
    id: string,
    token: string,
    settlement: Settlement,
    options?: CompleteOptions,
  ): Promise<MessageRecord> => await settle(table, id, token, settlement, options),
  /** `PARKED`/`FAILED`/`HELD` (and `UNKNOWN` with `acceptDuplicates`) → `PENDING`, due now, no attempt: the table's stream (locally the runtime) hands it to the sender; the sweeper is the safety net. */
  requeue: async (id: string, options: RequeueOptions): Promise<MessageRecord | undefined> =>
    await requeue(table, id, options),
  /** `UNKNOWN`/`FAILED`/`HELD`/`PARKED` → `DISMISSED`, never sent, with who, when and why; any other state is refused. See {@link dismiss}. */
  dismiss: async (id: string, input: DismissInput): Promise<DismissOutcome> => await dismiss(table, id, input),
  /** A waiting `PENDING` record handed to the stream-fed sender again (`wokenAt`); `false` when no longer PENDING. See {@link wake}. */
  wake: async (id: string, options?: WakeOptions): Promise<boolean> => await wake(table, id, options),
});
