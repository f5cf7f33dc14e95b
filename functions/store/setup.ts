import {
  type CreateTableCommandInput,
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type TableDescription,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { StoreError } from './errors';
import { TABLE } from './table';

/**
 * The table's definition for local servers and scripts (the CDK construct defines the deployed
 * one from the same {@link TABLE}): on-demand billing, its indexes with the projection
 * {@link TABLE} gives them (`byState` the attributes its queries read, `byRoute` keys only, `byDue`
 * the waiting records' times), and a stream of new images for the sender's trigger.
 *
 * @example
 * ```typescript
 * await client.send(new CreateTableCommand(createTableInput('sms-relay')));
 * ```
 */
export const createTableInput = (tableName: string): CreateTableCommandInput => {
  const indexes = Object.values(TABLE.indexes);
  const stringKeys = [
    TABLE.partitionKey,
    TABLE.sortKey,
    ...indexes.flatMap((index) => [index.partitionKey, index.sortKey]),
  ];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...new Set(stringKeys)].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: {
        ProjectionType: index.projection,
        ...(index.projection === 'INCLUDE' ? { NonKeyAttributes: [...index.attributes] } : {}),
      },
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
  };
};

/** What {@link ensureTable} found or did about TTL. */
export const TimeToLiveStatus = {
  Enabled: 'ENABLED',
  /** Being switched on (AWS takes up to an hour). */
  Enabling: 'ENABLING',
  /** The server cannot delete expired items (dynalite): they stay until deleted by hand. */
  Unsupported: 'UNSUPPORTED',
} as const;
export type TimeToLiveStatus = (typeof TimeToLiveStatus)[keyof typeof TimeToLiveStatus];

/** Waiting limits of `ensureTable`. */
export interface EnsureTableOptions {
  /** How long to wait for the table to become `ACTIVE`. */
  readonly timeoutMs?: number;
  readonly pollMs?: number;
}

/** Whether `ensureTable` created the table, and where TTL stands. */
export interface EnsureTableResult {
  readonly created: boolean;
  readonly timeToLive: TimeToLiveStatus;
}

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms));

const errorName = (error: unknown): string | undefined => (error instanceof Error ? error.name : undefined);

/**
 * Creates the table unless it exists, waits until it and its indexes are `ACTIVE`, and switches
 * TTL on where the server supports it. Safe to call from several processes at once.
 *
 * @throws {StoreError} the table is not `ACTIVE` within `timeoutMs`
 *
 * @example
 * ```typescript
 * const { created, timeToLive } = await ensureTable(client, 'sms-relay');
 * if (timeToLive === 'UNSUPPORTED') logger.warn('expired records will not be deleted');
 * ```
 */
export const ensureTable = async (
  client: DynamoDBClient,
  tableName: string,
  { timeoutMs = 60_000, pollMs = 100 }: EnsureTableOptions = {},
): Promise<EnsureTableResult> => {
  let created = false;
  if ((await describe(client, tableName)) === undefined) {
    try {
      await client.send(new CreateTableCommand(createTableInput(tableName)));
      created = true;
    } catch (error) {
      // Another process created it between our describe and create.
      if (errorName(error) !== 'ResourceInUseException') throw error;
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const table = await describe(client, tableName);
    if (table === undefined) throw new StoreError(`table ${tableName}: vanished while waiting for it`);
    const ready =
      table.TableStatus === 'ACTIVE' &&
      (table.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE');
    if (ready) break;
    if (Date.now() >= deadline) {
      throw new StoreError(`table ${tableName}: still ${table.TableStatus ?? 'unknown'} after ${timeoutMs} ms`);
    }
    await sleep(pollMs);
  }
  return { created, timeToLive: await ensureTimeToLive(client, tableName) };
};

const describe = async (client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> => {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (errorName(error) === 'ResourceNotFoundException') return undefined;
    throw error;
  }
};

const ensureTimeToLive = async (client: DynamoDBClient, tableName: string): Promise<TimeToLiveStatus> => {
  const { TimeToLiveDescription: current } = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  if (current?.TimeToLiveStatus === 'ENABLED') return TimeToLiveStatus.Enabled;
  if (current?.TimeToLiveStatus === 'ENABLING') return TimeToLiveStatus.Enabling;
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { Enabled: true, AttributeName: TABLE.timeToLive },
      }),
    );
    return TimeToLiveStatus.Enabling;
  } catch (error) {
    // dynalite answers UnknownOperationException: it has no TTL at all.
    if (errorName(error) === 'UnknownOperationException') return TimeToLiveStatus.Unsupported;
    // Another caller switched it on between our describe and update (DynamoDB refuses a second switch).
    if (errorName(error) === 'ValidationException' && /already enabled/i.test((error as Error).message)) {
      const { TimeToLiveDescription: now } = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
      return now?.TimeToLiveStatus === 'ENABLED' ? TimeToLiveStatus.Enabled : TimeToLiveStatus.Enabling;
    }
    throw error;
  }
};
