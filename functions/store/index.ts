/**
 * The message store: one DynamoDB table that is at once the dedupe, the durable queue and the
 * log of every SMS. See `createStore`.
 */
export { type CapturedPayload, type CaptureInput, keptHeaders } from './capture';
export { AcceptOutcome, type AcceptInput, type AcceptResult, type NoticeInput } from './accept';
export type { BalanceObservation, BalanceUpdate, PriceObservation } from './balance';
export type { CreditBasis, CreditRequest, CreditReservation, CreditSettlement, SentCredit } from './credit';
export { ClaimLostError, StoreError } from './errors';
export { newId } from './ids';
export { MAX_RECORDS_PER_WEBHOOK } from '../core/defaults';
export type { HeartbeatState } from './heartbeat';
export type { CircuitFailureInput, CircuitState } from './circuit';
export { MAX_MUTE_REASON_CHARS, MAX_MUTE_SECONDS } from '../core/defaults';
export type { Mute, MuteInput } from './mutes';
export type { OverrideInput } from './oncall';
export type { AckTarget, AdvanceInput, CloseInput, CloseOutcome, OpenIncidentInput, OpenOutcome } from './incidents';
export type { OnCallOverride } from '../core/oncall/resolve';
export type {
  BudgetWarnedInput,
  MonthCreditsLimit,
  MonthUse,
  CreditsLimit,
  HeldSummaryOptions,
  LimitsTaken,
  MessagesLimit,
  Reservation,
  ReserveInput,
  SpendInput,
  SummarySentInput,
} from './limits';
export type { CountStuckOptions, StuckCounts } from './counts';
export { STUCK_COUNT_CAP } from './counts';
export type {
  DueOptions,
  ListOptions,
  RecentOptions,
  RecentSummaryOptions,
  RecordSummary,
  StaleOptions,
  SummaryOptions,
} from './queries';
export type { BalanceReadingInput, BalanceReadingsOptions, RecordedBalanceReading } from './readings';
export type { DaySpendByRoute, RecentSpend, SpendRecord } from './spend';
export {
  createTableInput,
  ensureTable,
  type EnsureTableOptions,
  type EnsureTableResult,
  TimeToLiveStatus,
} from './setup';
export type { DigestedInput, DigestWindowInput, DroppedDeferredInput, DueDeferredOptions } from './windows';
export { createStore, type MessageStore, type StoreOptions } from './store';
export type { UndecodableRecord } from './store-table';
export { MessageState, TABLE } from './table';
export {
  addUpSpend,
  type DaySpend,
  type LimitUsage,
  type LimitUsageInput,
  type SpendByDayInput,
  spendDays,
} from './usage';
export type {
  ClaimOptions,
  CompleteOptions,
  DismissFrom,
  DismissInput,
  DismissOutcome,
  RequeueFrom,
  RequeueOptions,
  Settlement,
  WakeOptions,
} from './transitions';
export { DISMISS_FROM } from './transitions';
export {
  type BalanceState,
  DEFAULT_RETENTION_DAYS,
  type Dismissal,
  type HeldWindow,
  type LastError,
  LimitKind,
  MAX_HISTORY_TEXT_CHARS,
  NoticeKind,
  type MessageRecord,
  type NewMessage,
  type Page,
  type SendResult,
  type StateChange,
} from './types';
