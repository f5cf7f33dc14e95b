/**
 * The one DynamoDB table's key schema, shared by the store code, the CDK construct and the local
 * runtime (dynalite) so the three can never disagree.
 */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB TTL deletes items some time after it passes. */
  timeToLive: 'expiresAt',
  /**
   * The global secondary indexes. `projection` is what each holds besides the keys: `ALL` would
   * rewrite the whole record (its growing `history` too) in the index on every change; `INCLUDE`
   * holds the keys and `attributes`; `KEYS_ONLY` the keys alone. A listing of whole records reads
   * them from the table by their keys. On AWS a projection cannot be changed in place: a changed
   * projection is a new index under a new name (see `retiredIndexes`).
   */
  indexes: {
    /**
     * Every message record by state, oldest change first: sweeps, redrive, `logs --state`, the
     * console's counts. It holds what its queries read from it: the `findDuePending` filter
     * (`nextAttemptAt`) and the summaries of `summarizeRecords` (route, times, the send's answer
     * `result`, at most 512 bytes: `MAX_RESULT_BYTES`; the service's whole recipients answer is
     * `resultRecipients`, which it does not hold); never the text, the recipients or the history.
     * So no entry weighs more than about 700 bytes, and a change of state rewrites one write unit.
     */
    byState: {
      name: 'byStateSummary',
      partitionKey: 'state',
      sortKey: 'updatedAt',
      projection: 'INCLUDE',
      attributes: ['id', 'route', 'createdAt', 'sentAt', 'result', 'nextAttemptAt'],
    },
    /**
     * Every message record by route, in order of acceptance: `logs --route`. Keys only, as neither
     * key ever changes: a listing reads the records themselves (`listByRoute`).
     */
    byRoute: { name: 'byRoute', partitionKey: 'route', sortKey: 'createdAt', projection: 'KEYS_ONLY', attributes: [] },
    /**
     * The PENDING records by when they are due (`dueAt`: the retry's `nextAttemptAt`, else the time
     * the record became PENDING), due first: the sweeper's due listing, whose key condition
     * `dueAt <= now` leaves the records not due yet out of the page instead of filtering them after
     * it. Sparse: only a PENDING record carries `dueAt` (a claim removes it), so the index holds the
     * waiting records alone. `updatedAt` for the listing's grace (records changed a moment ago are
     * left to the stream-fed sender).
     */
    byDue: {
      name: 'byDue',
      partitionKey: 'state',
      sortKey: 'dueAt',
      projection: 'INCLUDE',
      attributes: ['updatedAt'],
    },
  },
  /**
   * Indexes of earlier versions that the deployed table keeps for one more deploy: CloudFormation
   * adds or deletes one global secondary index per update, so replacing `byState` (all attributes)
   * by `byStateSummary` is two deploys, the first adding the new index (see docs/deploying.md, "Upgrading past the state index's replacement").
   * Nothing reads them; the local table never has them.
   */
  retiredIndexes: {
    byState: { name: 'byState', partitionKey: 'state', sortKey: 'updatedAt', projection: 'ALL', attributes: [] },
  },
} as const;

/** The life of a message record. Final states: SENT, FAILED, UNKNOWN, DROPPED, DIGESTED, DISMISSED. */
export const MessageState = {
  /** Recorded, waiting for the sender (or for its next attempt). */
  Pending: 'PENDING',
  /** Claimed by a sender that is calling the SMS service right now. */
  Sending: 'SENDING',
  /** The service accepted it. */
  Sent: 'SENT',
  /** Certainly not sent, and no more attempts will be made. */
  Failed: 'FAILED',
  /** May or may not have been sent (time-out, reset, 5xx) on an at-most-once route: never retried automatically. */
  Unknown: 'UNKNOWN',
  /** The balance did not cover it (402); goes out after a top-up and `redrive`. */
  Parked: 'PARKED',
  /** Held back by a route limit; counted in the route's summary SMS. */
  Held: 'HELD',
  /** Never to be sent: filtered, no valid recipient, or rejected as too long. The reason is recorded. */
  Dropped: 'DROPPED',
  /**
   * Accepted during the route's quiet hours or digest window: not sent on its own, but waiting
   * (until `nextAttemptAt`, the window's end) for the route's digest SMS.
   */
  Deferred: 'DEFERRED',
  /** A DEFERRED message that went out inside a digest SMS: `digestId` names the digest's record. */
  Digested: 'DIGESTED',
  /**
   * An UNKNOWN, FAILED, HELD or PARKED message an operator decided not to send (`dismiss`): final,
   * with who, when and why (`dismissal`), and no longer counted by the stuck-now gauges.
   */
  Dismissed: 'DISMISSED',
} as const;
export type MessageState = (typeof MessageState)[keyof typeof MessageState];
