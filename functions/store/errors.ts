/**
 * Errors of the store. Losing a race (a claim someone else won, a summary someone else marked)
 * is an outcome, never an error; only misuse, corrupt data and lost claims are thrown.
 */

/**
 * Base class for every error thrown by the store, so callers can tell store problems from
 * their own with one `instanceof`.
 */
class StoreError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreError';
  }
}

/**
 * Thrown by `acceptWebhook` when one webhook fans out into more message records than
 * `MAX_RECORDS_PER_WEBHOOK` (51). The caller caps fan-out before it gets here.
 *
 * @example
 * ```typescript
 * try {
 *   await store.acceptWebhook({ route, dedupeKey, windowSeconds, messages });
 * } catch (error) {
 *   if (error instanceof TooManyMessagesError) logger.error('fan-out not capped', { count: error.count });
 *   throw error;
 * }
 * ```
 */
class TooManyMessagesError extends StoreError {
  public readonly count: number;
  public readonly max: number;

  public constructor(count: number, max: number, options?: ErrorOptions) {
    super(`one webhook may record at most ${max} messages, got ${count}`, options);
    this.name = 'TooManyMessagesError';
    this.count = count;
    this.max = max;
  }
}

/**
 * Thrown by `acceptWebhook` for a message that breaks the data model: no messages at all, a
 * recipient that is not `255` + 9 digits, a pending message with no recipient, a dropped one with
 * no reason. A bug in the caller, never a property of the webhook: filtered webhooks are recorded
 * as `DROPPED` messages with a reason.
 *
 * @example
 * ```typescript
 * await store.acceptWebhook({ route, dedupeKey, windowSeconds, messages: [] }); // throws InvalidMessageError
 * ```
 */
class InvalidMessageError extends StoreError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidMessageError';
  }
}

/**
 * Thrown when a sender completes a message it no longer holds: the record is not `SENDING`, or
 * it carries another claim token (the claim went stale and another sender took it over). The
 * record is left untouched; the caller logs and stops.
 *
 * @example
 * ```typescript
 * try {
 *   await store.settle(record.id, record.claimToken, { state: 'SENT', result });
 * } catch (error) {
 *   if (error instanceof ClaimLostError) logger.warn('claim lost before completion', { id: error.id });
 *   else throw error;
 * }
 * ```
 */
class ClaimLostError extends StoreError {
  public readonly id: string;

  public constructor(id: string, options?: ErrorOptions) {
    super(`message ${id} is no longer claimed with this token`, options);
    this.name = 'ClaimLostError';
    this.id = id;
  }
}

/**
 * Thrown for a pagination cursor that this store did not hand out (truncated, edited, or from
 * another version).
 *
 * @example
 * ```typescript
 * await store.listByState('PENDING', { cursor: 'garbage' }); // throws InvalidCursorError
 * ```
 */
class InvalidCursorError extends StoreError {
  public constructor(message = 'invalid pagination cursor', options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidCursorError';
  }
}

/**
 * Thrown when an item read from the table does not have the shape this code writes: a missing
 * attribute, a wrong type. Points at a bug or at a hand-edited item.
 *
 * @example
 * ```typescript
 * catch (error) {
 *   if (error instanceof CorruptRecordError) logger.error('bad item', { key: error.key, error });
 * }
 * ```
 */
class CorruptRecordError extends StoreError {
  public readonly key: string;

  public constructor(key: string, message: string, options?: ErrorOptions) {
    super(`item ${key}: ${message}`, options);
    this.name = 'CorruptRecordError';
    this.key = key;
  }
}

/**
 * Thrown for an option that cannot be honoured: a limit window of zero seconds, a negative credit
 * estimate, a page size of 0, a requeue from a state that must never be sent again. A bug in the
 * caller or its configuration.
 *
 * @example
 * ```typescript
 * await store.requeue(id, { from: 'SENT' as 'PARKED' }); // throws InvalidArgumentError
 * ```
 */
class InvalidArgumentError extends StoreError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidArgumentError';
  }
}

/**
 * Thrown by `ensureTable` when the table does not become `ACTIVE` within the wait.
 *
 * @example
 * ```typescript
 * await ensureTable(client, 'sms-relay', { timeoutMs: 5_000 }); // may throw TableNotReadyError
 * ```
 */
class TableNotReadyError extends StoreError {
  public readonly tableName: string;

  public constructor(tableName: string, message: string, options?: ErrorOptions) {
    super(`table ${tableName}: ${message}`, options);
    this.name = 'TableNotReadyError';
    this.tableName = tableName;
  }
}

export {
  InvalidArgumentError,
  ClaimLostError,
  CorruptRecordError,
  InvalidCursorError,
  InvalidMessageError,
  StoreError,
  TableNotReadyError,
  TooManyMessagesError,
};
