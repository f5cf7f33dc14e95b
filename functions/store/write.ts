import {
  ConditionalCheckFailedException,
  GetItemCommand,
  type PutItemCommandInput,
  PutItemCommand,
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
export const writeIf = async (table: StoreTable, write: ConditionalPut | ConditionalUpdate, { current = false }: WriteIfOptions = {}): Promise<WriteOutcome> => {
  const onRefusal = current ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {};
  try {
    if ('Item' in write && write.Item !== undefined) {
      const { Attributes: item } = await table.client.send(new PutItemCommand({ ...(write as ConditionalPut), TableName: table.tableName, ...onRefusal }));
      return { applied: true, item: item ?? {} };
    }
    const { Attributes: item } = await table.client.send(new UpdateItemCommand({ ...(write as ConditionalUpdate), TableName: table.tableName, ...onRefusal }));
    return { applied: true, item: item ?? {} };
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    if (!current) return { applied: false, current: undefined };
    const returned = error instanceof ConditionalCheckFailedException ? error.Item : undefined;
    return { applied: false, current: returned ?? (await readKey(table, keyOf(write))) };
  }
};

/** The key of the item a write names: an update's `Key`, or a put item's key attributes. */
const keyOf = (write: ConditionalPut | ConditionalUpdate): Item => {
  if ('Key' in write && write.Key !== undefined) return write.Key;
  const item = (write as ConditionalPut).Item ?? {};
  return Object.fromEntries(Object.entries(item).filter(([name]) => name === TABLE.partitionKey || name === TABLE.sortKey));
};

const readKey = async (table: StoreTable, key: Item): Promise<Item | undefined> =>
  (await table.client.send(new GetItemCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }))).Item;
