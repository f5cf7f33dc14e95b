/**
 * The message store: one DynamoDB table that is at once the dedupe, the durable queue and the
 * log of every SMS. See `createStore`.
 */
export { type CapturedPayload, keptHeaders } from './capture';
export { AcceptOutcome, type AcceptResult } from './accept';
export { ClaimLostError, StoreError } from './errors';
export { newId } from './ids';
export { MAX_RECORDS_PER_WEBHOOK } from '../core/defaults';
export type { CircuitState } from './circuit';
export type { Mute } from './mutes';
export type { CloseOutcome } from './incidents';
export type { AlertEntry, AlertIdentifierType, AlertRequest } from './alert-api';
export type { OnCallOverride } from '../core/oncall/resolve';
export type { MonthUse, LimitsTaken } from './limits';
export type { StuckCounts } from './counts';
export { STUCK_COUNT_CAP } from './counts';
export type { DueOptions } from './listings';
export type { RecordSummary } from './summaries';
export { createTableInput, ensureTable } from './setup';
export { createStore, type MessageStore } from './store';
export type { UndecodableRecord } from './store-table';
export { MessageState, TABLE } from './table';
export type { DismissFrom, RequeueFrom, Settlement } from './transitions';
export {
  type BalanceState,
  type LastError,
  LimitKind,
  NoticeKind,
  type MessageRecord,
  type NewMessage,
  type Page,
  type ProviderAttempt,
  type SendResult,
  type StateChange,
} from './types';
export { MAIN_PROVIDER } from './keys';
