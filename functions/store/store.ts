import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { acceptOperations } from './accept';
import { balanceOperations } from './balance';
import { captureOperations } from './capture';
import { circuitOperations } from './circuit';
import { countOperations } from './counts';
import { creditOperations } from './credit';
import { heartbeatOperations } from './heartbeat';
import { incidentOperations } from './incidents';
import { alertApiOperations } from './alert-api';
import { limitOperations } from './limits';
import { muteOperations } from './mutes';
import { onCallOperations } from './oncall';
import { rateOperations } from './provider-rate';
import { queryOperations } from './queries';
import { readingOperations } from './readings';
import { spendOperations } from './spend';
import { transitionOperations } from './transitions';
import { usageOperations } from './usage';
import { windowOperations } from './windows';
import type { StoreTable, UndecodableRecord } from './store-table';
import { SPEND_WINDOW_MS } from '../core/defaults';

/** Options of {@link createStore}. */
export interface StoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The time of operations not given a `now`. Defaults to the system clock. */
  readonly clock?: () => Date;
  /**
   * `false` lists records by scanning the table instead of querying its indexes: the local
   * runtime's choice, because dynalite writes an item and its index entries without atomicity, so
   * a process killed mid-write can leave an index that disagrees with the table. A scan reads the
   * records themselves, which are always right; locally the table is small enough to scan.
   * @default true
   */
  readonly readIndexes?: boolean;
  /**
   * Told of each record a listing (and so the sweeper) left out because this version cannot read
   * it: a value written by a newer version, seen after a rollback. The record is left as it is
   * for the version that wrote it. The relay logs its id and counts `UndecodableRecords`
   * (`reportUndecodable`).
   * @default ignores them
   */
  readonly onUndecodable?: (record: UndecodableRecord) => void;
  /**
   * How long the day's spend counter gathers this store's sends before it writes them (see
   * `recordSpend`). Tests set a window that does not end on its own, to count what a flush writes.
   * @default SPEND_WINDOW_MS
   */
  readonly spendWindowMs?: number;
}

/**
 * Creates the store for one table. Holds no state besides its options and the day spend it counted
 * and has not written yet (`recordSpend` writes it per window: `flushSpend` before the process may
 * stop or freeze), so create it once per Lambda container, outside the handler.
 *
 * @example
 * ```typescript
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
 * import { createStore } from '../store';
 *
 * const store = createStore({ client: new DynamoDBClient({}), tableName: process.env.TABLE_NAME ?? 'sms-relay' });
 *
 * export const handler = async (id: string) => {
 *   const record = await store.claimMessage(id);
 *   if (record === undefined) return;
 *   // … send, then store.settle(record.id, record.claimToken!, { state: 'SENT', result })
 * };
 * ```
 */
export const createStore = ({
  client,
  tableName,
  clock = () => new Date(),
  readIndexes = true,
  onUndecodable = () => undefined,
  spendWindowMs = SPEND_WINDOW_MS,
}: StoreOptions) => {
  const table: StoreTable = { client, tableName, clock, readIndexes, onUndecodable, spendWindowMs };
  return {
    ...acceptOperations(table),
    ...transitionOperations(table),
    ...queryOperations(table),
    ...countOperations(table),
    ...limitOperations(table),
    ...windowOperations(table),
    ...muteOperations(table),
    ...onCallOperations(table),
    ...incidentOperations(table),
    ...alertApiOperations(table),
    ...heartbeatOperations(table),
    ...usageOperations(table),
    ...rateOperations(table),
    ...circuitOperations(table),
    ...balanceOperations(table),
    ...creditOperations(table),
    ...readingOperations(table),
    ...captureOperations(table),
    ...spendOperations(table),
  };
};

/**
 * The store's operations, bound to one client and table: each store module's part (its
 * `…Operations(table)`) combined. Every `now` defaults to the store's clock; each operation is
 * documented where it is defined. A relay operation names the ones it uses (its port, e.g.
 * `Pick<MessageStore, 'claimMessage' | 'settle'>`).
 */
export type MessageStore = ReturnType<typeof createStore>;
