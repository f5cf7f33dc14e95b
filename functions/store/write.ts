import {
  ConditionalCheckFailedException,
  GetItemCommand,
  type Put,
  type PutItemCommandInput,
  PutItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  type UpdateItemCommandInput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Item } from './attributes';
import { type StoreTable, isConditionalCheckFailed } from './store-table';
import { TABLE } from './table';

/** A conditional put: the item and its condition (the table is the store's). */
export type ConditionalPut = Omit<PutItemCommandInput, 'TableName' | 'ReturnValuesOnConditionCheckFailure'>;
/** A conditional update: the key, the expressions and what to return (the table is the store's). */
export type ConditionalUpdate = Omit<UpdateItemCommandInput, 'TableName' | 'ReturnValuesOnConditionCheckFailure'>;

/**
 * What a conditional write did: applied (with the item as `ReturnValues` asked for it; `{}` when it
 * asked for none), or refused by its condition with the item as it stands (`undefined`: there is
 * none, or the caller did not ask for it).
 */
export type WriteOutcome =
  | { readonly applied: true; readonly item: Item }
  | { readonly applied: false; readonly current: Item | undefined };

/** Options of {@link writeIf}. */
export interface WriteIfOptions {
  /**
   * On a refusal, return the item that refused it: DynamoDB sends it with the refusal
   * (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, no extra request); where it does not (dynalite
   * ignores the option), one consistent read of the key, made only on a refusal.
   */
  readonly current?: boolean;
}

/**
 * The store's one conditional write, a put or an update of one item: every write whose condition
 * can refuse it (the accept's guard and records, the transitions of a record, the limit counters,
 * the balance item) goes through here and gets the same outcome. Errors other than a refusal
 * (throttling, validation, a network failure) are thrown.
 *
 * @example
 * ```typescript
 * const outcome = await writeIf(table, { Key: messageKey(id), UpdateExpression: 'SET #s = :to', ConditionExpression: '#s = :from', … });
 * if (!outcome.applied) return undefined; // lost the race
 * ```
 */
export const writeIf = async (
  table: StoreTable,
  write: ConditionalPut | ConditionalUpdate,
  { current = false }: WriteIfOptions = {},
): Promise<WriteOutcome> => {
  const onRefusal = current ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {};
  try {
    if ('Item' in write && write.Item !== undefined) {
      const { Attributes: item } = await table.client.send(
        new PutItemCommand({ ...(write as ConditionalPut), TableName: table.tableName, ...onRefusal }),
      );
      return { applied: true, item: item ?? {} };
    }
    const { Attributes: item } = await table.client.send(
      new UpdateItemCommand({ ...(write as ConditionalUpdate), TableName: table.tableName, ...onRefusal }),
    );
    return { applied: true, item: item ?? {} };
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    if (!current) return { applied: false, current: undefined };
    const returned = error instanceof ConditionalCheckFailedException ? error.Item : undefined;
    return { applied: false, current: returned ?? (await readKey(table, keyOf(write))) };
  }
};

/** One put of {@link writeAllIf}, and whether its refusal should return the item that refused it. */
export interface TransactPut {
  /** The item and its condition (the table is the store's). */
  readonly put: Omit<Put, 'TableName' | 'ReturnValuesOnConditionCheckFailure'>;
  /** As {@link WriteIfOptions.current}, for this put. */
  readonly current?: boolean;
}

/**
 * What a transaction of conditional puts did: applied (every put written), or refused (none
 * written), with each put's own outcome in the order given: refused by its condition with the
 * item as it stands (`undefined`: there is none, or it was not asked for), or not refused (it
 * would have been written, had another not been refused).
 */
export type TransactOutcome =
  | { readonly applied: true }
  | {
      readonly applied: false;
      readonly puts: readonly (
        | { readonly refused: true; readonly current: Item | undefined }
        | { readonly refused: false }
      )[];
    };

/** Transactions cancelled by a concurrent one (AWS's `TransactionConflict`) are tried again this often. */
const TRANSACT_ATTEMPTS = 3;

/**
 * {@link writeIf} for several puts that are written all or none, in one request (DynamoDB's
 * `TransactWriteItems`, also answered by the local dynalite, see local/shared/dynalite.ts): one
 * conditional write of several items, with the same kind of outcome. A transaction that DynamoDB
 * cancels for a concurrent transaction on the same item (`TransactionConflict`), which wrote
 * nothing, is sent again, up to {@link TRANSACT_ATTEMPTS} times in all; errors other than a
 * refusal are thrown. At most 100 puts (DynamoDB's limit).
 *
 * @example
 * ```typescript
 * const outcome = await writeAllIf(table, [{ put: guard, current: true }, { put: record }]);
 * if (!outcome.applied && outcome.puts[0]?.refused) return duplicateOf(outcome.puts[0].current);
 * ```
 */
export const writeAllIf = async (table: StoreTable, puts: readonly TransactPut[]): Promise<TransactOutcome> => {
  const command = (): TransactWriteItemsCommand =>
    new TransactWriteItemsCommand({
      TransactItems: puts.map(({ put, current = false }) => ({
        Put: {
          ...put,
          TableName: table.tableName,
          ...(current ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
        },
      })),
    });
  for (let attempt = 1; ; attempt += 1) {
    try {
      await table.client.send(command());
      return { applied: true };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      const codes = reasons.map((reason) => reason.Code ?? 'None');
      if (codes.includes('TransactionConflict') && attempt < TRANSACT_ATTEMPTS) continue;
      if (codes.length !== puts.length || !codes.every((code) => code === 'None' || code === 'ConditionalCheckFailed'))
        throw error;
      const outcomes = await Promise.all(
        puts.map(async ({ put, current = false }, position) => {
          if (codes[position] !== 'ConditionalCheckFailed') return { refused: false } as const;
          if (!current) return { refused: true, current: undefined } as const;
          return { refused: true, current: reasons[position]?.Item ?? (await readKey(table, keyOf(put))) } as const;
        }),
      );
      return { applied: false, puts: outcomes };
    }
  }
};

/** The key of the item a write names: an update's `Key`, or a put item's key attributes. */
const keyOf = (write: ConditionalPut | ConditionalUpdate): Item => {
  if ('Key' in write && write.Key !== undefined) return write.Key;
  const item = (write as ConditionalPut).Item ?? {};
  return Object.fromEntries(
    Object.entries(item).filter(([name]) => name === TABLE.partitionKey || name === TABLE.sortKey),
  );
};

const readKey = async (table: StoreTable, key: Item): Promise<Item | undefined> =>
  (await table.client.send(new GetItemCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }))).Item;
