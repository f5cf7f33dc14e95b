import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The table every store operation works on, and how (client, clock, whether to read its indexes). */
export interface StoreTable {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The time of operations that were not given a `now`; tests pass a fixed clock. */
  readonly clock: () => Date;
  /** `false`: listings scan the table instead of querying its indexes (see `StoreOptions.readIndexes`). */
  readonly readIndexes: boolean;
}

/** True for a write refused by its condition: a lost race or a state that moved on, not a fault. */
export const isConditionalCheckFailed = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';
