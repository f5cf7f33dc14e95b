/**
 * Errors of the store. Losing a race (a claim someone else won, a summary someone else marked)
 * is an outcome, never an error; only misuse, corrupt data and lost claims are thrown. A lost
 * claim is the one a caller handles on its own (it logs and stops), so it is the one subclass;
 * misuse (too many or invalid messages, a bad cursor or option), a corrupt item and a table that
 * does not become ready are all a `StoreError` whose message says which.
 */

/**
 * Every error thrown by the store, so callers can tell store problems from their own with one
 * `instanceof`: a caller bug (an empty or over-long fan-out, a message that breaks the data model,
 * an option that cannot be honoured, a cursor this store did not hand out), an item that does not
 * have the shape this code writes, or a table that does not become `ACTIVE` in time.
 *
 * @example
 * ```typescript
 * await store.listByState('PENDING', { cursor: 'garbage' }); // throws StoreError('invalid pagination cursor')
 * ```
 */
class StoreError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreError';
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
 * An item read from the table does not have the shape this code writes (a missing attribute, a
 * wrong type): a bug or a hand-edited item. `key` names the item.
 */
const corruptRecord = (key: string, message: string, options?: ErrorOptions): StoreError =>
  new StoreError(`item ${key}: ${message}`, options);

/** A pagination cursor this store did not hand out (truncated, edited, or from another version). */
const invalidCursor = (options?: ErrorOptions): StoreError => new StoreError('invalid pagination cursor', options);

export { ClaimLostError, corruptRecord, invalidCursor, StoreError };
