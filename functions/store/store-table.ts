import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The table every store operation works on, and how (client, clock, whether to read its indexes). */
export interface StoreTable {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The time of operations that were not given a `now`; tests pass a fixed clock. */
  readonly clock: () => Date;
  /** `false`: listings scan the table instead of querying its indexes (see `StoreOptions.readIndexes`). */
  readonly readIndexes: boolean;
  /** Told of each record a listing skipped because this version cannot read it (see `StoreOptions.onUndecodable`). */
  readonly onUndecodable: (record: UndecodableRecord) => void;
  /** How long the day's spend counter gathers sends before it writes them (see `recordSpend`). */
  readonly spendWindowMs: number;
}

/**
 * A message record this version cannot read: a state, notice or history state written by a newer
 * version (read after a rollback), or an item that lost its shape. Listings leave it out and go on.
 */
export interface UndecodableRecord {
  /** The record's id (its partition key when even that is missing). */
  readonly id: string;
  /** What could not be read, naming the item. */
  readonly error: Error;
}

/** True for a write refused by its condition: a lost race or a state that moved on, not a fault. */
export const isConditionalCheckFailed = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';
