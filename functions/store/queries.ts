/**
 * Reading messages, split by purpose: the record reads under them all (`record-reads.ts`), the
 * paged listings (`listings.ts`), the summaries (`summaries.ts`) and the console's index reads
 * (`console-reads.ts`). This module binds their operations to one table, their part of
 * `MessageStore`.
 */
import {
  type DueOptions,
  findDuePending,
  findStaleSending,
  listByRoute,
  listByState,
  type StaleOptions,
  type StateListOptions,
} from './listings';
import { listRecent, newestByRoute, type RecentOptions } from './console-reads';
import { getMessage, type ListOptions } from './record-reads';
import type { StoreTable } from './store-table';
import {
  type RecentSummaryOptions,
  type RecordSummary,
  type SummaryOptions,
  summarizeRecent,
  summarizeRecords,
} from './summaries';
import type { MessageState } from './table';
import type { MessageRecord, Page } from './types';

export type { DueOptions, StaleOptions, StateListOptions } from './listings';
export type { RecentOptions } from './console-reads';
export type { ListOptions } from './record-reads';
export type { RecentSummaryOptions, RecordSummary, SummaryOptions } from './summaries';

/**
 * Reading and listing messages: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const queryOperations = (table: StoreTable) => ({
  /** One record, strongly consistent. */
  getMessage: async (id: string): Promise<MessageRecord | undefined> => await getMessage(table, id),
  /** Records in one state by `updatedAt`, paged. */
  listByState: async (state: MessageState, options?: StateListOptions): Promise<Page<MessageRecord>> =>
    await listByState(table, state, options),
  /** A route's records by `createdAt`, paged: keys from the `byRoute` index, then the records by consistent `BatchGetItem`. */
  listByRoute: async (route: string, options?: ListOptions): Promise<Page<MessageRecord>> =>
    await listByRoute(table, route, options),
  /** Records of every state by last change, newest first. See {@link listRecent}. */
  listRecent: async (options?: RecentOptions): Promise<MessageRecord[]> => await listRecent(table, options),
  /** Every record changed since a time, reduced to route, state, times and amounts. See {@link summarizeRecords}. */
  summarizeRecords: async (options: SummaryOptions): Promise<RecordSummary[]> => await summarizeRecords(table, options),
  /** The newest records of one state, summarised from the state index alone. See {@link summarizeRecent}. */
  summarizeRecent: async (options: RecentSummaryOptions): Promise<RecordSummary[]> =>
    await summarizeRecent(table, options),
  /** When each route's newest record was created. See {@link newestByRoute}. */
  newestByRoute: async (routes: readonly string[]): Promise<Map<string, string>> => await newestByRoute(table, routes),
  /** `SENDING` records claimed before `olderThan`. */
  findStaleSending: async (options: StaleOptions): Promise<Page<MessageRecord>> =>
    await findStaleSending(table, options),
  /** `PENDING` records that are due. */
  findDuePending: async (options?: DueOptions): Promise<Page<MessageRecord>> => await findDuePending(table, options),
});
