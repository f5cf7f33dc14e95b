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
   * The global secondary indexes. `projection` is what each holds besides the keys: `ALL` costs an
   * index write on every change of the record, `KEYS_ONLY` only when an index key changes (on
   * AWS a projection cannot be changed in place: the index must be deleted and created again).
   */
  indexes: {
    /** Every message record by state, oldest change first: sweeps, redrive, `logs --state`. */
    byState: { name: 'byState', partitionKey: 'state', sortKey: 'updatedAt', projection: 'ALL' },
    /**
     * Every message record by route, in order of acceptance: `logs --route`. Keys only, as neither
     * key ever changes: a listing reads the records themselves (`listByRoute`).
     */
    byRoute: { name: 'byRoute', partitionKey: 'route', sortKey: 'createdAt', projection: 'KEYS_ONLY' },
  },
} as const;

/** The life of a message record. Final states: SENT, FAILED, UNKNOWN, DROPPED. */
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
} as const;
export type MessageState = (typeof MessageState)[keyof typeof MessageState];
