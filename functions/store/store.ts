import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type DigestedInput,
  type DigestWindowInput,
  dropDeferred,
  type DroppedDeferredInput,
  type DueDeferredOptions,
  findDueDeferred,
  markDigested,
  moveToWindow,
  openDigestWindow,
} from './windows';
import { type AcceptInput, type AcceptResult, acceptWebhook, type NoticeInput, recordNotice } from './accept';
import {
  type BalanceObservation,
  type BalanceUpdate,
  getBalanceState,
  type PriceObservation,
  recordPrice,
  updateBalanceState,
} from './balance';
import {
  type CapturedPayload,
  type CaptureInput,
  capturePayload,
  findCapture,
  getCapture,
  listCaptures,
} from './capture';
import {
  type CreditBasis,
  type CreditRequest,
  type CreditReservation,
  type CreditSettlement,
  keepStaleCredit,
  observeSentCredit,
  rebaseCredit,
  reserveCredit,
  type SentCredit,
  settleCredit,
} from './credit';
import type { StoreTable, UndecodableRecord } from './store-table';
import {
  type CircuitFailureInput,
  type CircuitState,
  claimCircuitProbe,
  claimCircuitTrial,
  closeCircuitByHand,
  getCircuit,
  openCircuitByHand,
  releaseCircuitProbe,
  releaseCircuitTrial,
  recordCircuitFailure,
  recordCircuitProbeFailure,
  recordCircuitSuccess,
} from './circuit';
import { takeRateSlot } from './provider-rate';
import { countStuck, type CountStuckOptions, type StuckCounts } from './counts';
import { armHeartbeat, getHeartbeat, HeartbeatTransition, type HeartbeatState, touchHeartbeat } from './heartbeat';
import { getMute, listMutes, type Mute, type MuteInput, muteRoute, unmuteRoute } from './mutes';
import { activeOverrides, overrideOnCall, type OverrideInput } from './oncall';
import {
  ackToken,
  type AckTarget,
  advanceIncident,
  type AdvanceInput,
  closeIncident,
  type CloseInput,
  type CloseOutcome,
  findAckToken,
  getIncident,
  listOpenIncidents,
  noteIncident,
  openIncident,
  openIncidentOf,
  type OpenIncidentInput,
  type OpenOutcome,
} from './incidents';
import type { Incident, TimelineEntry } from '../core/paging/incident';
import type { OnCallOverride } from '../core/oncall/resolve';
import {
  type BudgetWarnedInput,
  markBudgetWarned,
  type HeldSummaryOptions,
  type LimitsTaken,
  type Reservation,
  type ReserveInput,
  type SpendInput,
  type SummarySentInput,
  heldSummaryDue,
  markSummarySent,
  recordCreditsSpent,
  releaseLimit,
  reserveLimit,
} from './limits';
import {
  type DueOptions,
  type ListOptions,
  type StaleOptions,
  findDuePending,
  findStaleSending,
  getMessage,
  listByRoute,
  listRecent,
  newestByRoute,
  type RecentOptions,
  type RecordSummary,
  summarizeRecords,
  listByState,
} from './queries';
import {
  type BalanceReadingInput,
  type BalanceReadingsOptions,
  type RecordedBalanceReading,
  listBalanceReadings,
  recordBalanceReading,
} from './readings';
import type { MessageState } from './table';
import {
  type DaySpend,
  type LimitUsage,
  type LimitUsageInput,
  type SpendByDayInput,
  limitUsage,
  spendByDay,
} from './usage';
import { type RecentSpend, type SpendRecord, recentSpend, recordSpend, startSpendCount } from './spend';
import {
  type ClaimOptions,
  type CompleteOptions,
  type DismissInput,
  type DismissOutcome,
  type RequeueOptions,
  type Settlement,
  type WakeOptions,
  claimMessage,
  dismiss,
  requeue,
  settle,
  wake,
} from './transitions';
import type { BalanceState, HeldWindow, MessageRecord, Page } from './types';

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
}

/**
 * The store's operations, bound to one client and table. Every `now` defaults to the store's
 * clock; each method is documented in full on the function of the same name.
 */
export interface MessageStore {
  /** Records a webhook: dedupe guard plus 1–99 message records. See {@link acceptWebhook}. */
  acceptWebhook(input: AcceptInput): Promise<AcceptResult>;
  /** Records one of the relay's own SMS (low balance, a limit's summary), once per key. See {@link recordNotice}. */
  recordNotice(input: NoticeInput): Promise<AcceptResult>;

  /** `PENDING` and due → `SENDING` for exactly one caller; `undefined` for the others. */
  claimMessage(id: string, options?: ClaimOptions): Promise<MessageRecord | undefined>;
  /** `SENDING` → the settlement's state (sent, failed, back to pending…). Throws `ClaimLostError` without the claim. */
  settle(id: string, token: string, settlement: Settlement, options?: CompleteOptions): Promise<MessageRecord>;
  /** `PARKED`/`FAILED`/`HELD` (and `UNKNOWN` with `acceptDuplicates`) → `PENDING`, due now, no attempt: the table's stream (locally the runtime) hands it to the sender; the sweeper is the safety net. */
  requeue(id: string, options: RequeueOptions): Promise<MessageRecord | undefined>;
  /** A waiting `PENDING` record handed to the stream-fed sender again (`wokenAt`); `false` when no longer PENDING. See {@link wake}. */
  wake(id: string, options?: WakeOptions): Promise<boolean>;
  /** `UNKNOWN`/`FAILED`/`HELD`/`PARKED` → `DISMISSED`, never sent, with who, when and why; any other state is refused. See {@link dismiss}. */
  dismiss(id: string, input: DismissInput): Promise<DismissOutcome>;

  /** One record, strongly consistent. */
  getMessage(id: string): Promise<MessageRecord | undefined>;
  /** Records in one state by `updatedAt`, paged. */
  listByState(state: MessageState, options?: ListOptions): Promise<Page<MessageRecord>>;
  /** A route's records by `createdAt`, paged: keys from the `byRoute` index, then the records by consistent `BatchGetItem`. */
  listByRoute(route: string, options?: ListOptions): Promise<Page<MessageRecord>>;
  /** Records of every state by last change, newest first. See {@link listRecent}. */
  listRecent(options?: RecentOptions): Promise<MessageRecord[]>;
  /** Every record changed since a time, reduced to route, state, times and amounts. See {@link summarizeRecords}. */
  summarizeRecords(options: { readonly since: Date }): Promise<RecordSummary[]>;
  /** When each route's newest record was created. See {@link newestByRoute}. */
  newestByRoute(routes: readonly string[]): Promise<Map<string, string>>;
  /** `SENDING` records claimed before `olderThan`. */
  findStaleSending(options: StaleOptions): Promise<Page<MessageRecord>>;
  /** `PENDING` records that are due. */
  findDuePending(options?: DueOptions): Promise<Page<MessageRecord>>;
  /** How many records are UNKNOWN, PARKED, FAILED, HELD now, and DEFERRED past their window. See {@link countStuck}. */
  countStuck(options: CountStuckOptions): Promise<StuckCounts>;

  /** Takes one message from the route's window and day limits, or says which limit held it. */
  reserveLimit(input: ReserveInput): Promise<Reservation>;
  /** Gives back what an allowed reservation took, for a send that certainly did not go out. See {@link releaseLimit}. */
  releaseLimit(taken: LimitsTaken): Promise<void>;
  /** Adds credits actually deducted to the route's day and to the global day total. */
  recordCreditsSpent(input: SpendInput): Promise<void>;
  /** Finished windows with held messages and no summary yet. */
  heldSummaryDue(options: HeldSummaryOptions): Promise<readonly HeldWindow[]>;
  /** The end of the route's digest window a message accepted now belongs to, opening one if none is. See {@link openDigestWindow}. */
  openDigestWindow(input: DigestWindowInput): Promise<Date>;
  /** The route's DEFERRED records whose window has ended, oldest first. See {@link findDueDeferred}. */
  findDueDeferred(options: DueDeferredOptions): Promise<MessageRecord[]>;
  /** DEFERRED → DIGESTED, naming the digest; `undefined` when it moved on meanwhile. See {@link markDigested}. */
  markDigested(id: string, input: DigestedInput): Promise<MessageRecord | undefined>;
  /** DEFERRED → DROPPED with the reason (its route is muted); `undefined` when it moved on meanwhile. See {@link dropDeferred}. */
  dropDeferred(id: string, input: DroppedDeferredInput): Promise<MessageRecord | undefined>;
  /** Moves a DEFERRED record left out of its window's digest to the window `to`. See {@link moveToWindow}. */
  moveToWindow(id: string, input: { from: string; to: string; now?: Date }): Promise<boolean>;
  /** `true` for exactly one caller per window: that one sends the summary SMS. */
  markSummarySent(input: SummarySentInput): Promise<boolean>;
  /** `true` for exactly one caller per route and month: its 80 % warning is marked recorded. See {@link markBudgetWarned}. */
  markBudgetWarned(input: BudgetWarnedInput): Promise<boolean>;

  /** Mutes a route for a while: its messages are recorded `DROPPED` until then. See {@link muteRoute}. */
  muteRoute(input: MuteInput): Promise<Mute>;
  /** Ends a route's mute now; `false` when none was in force. */
  unmuteRoute(input: { readonly route: string; readonly now?: Date }): Promise<boolean>;
  /** The mute in force on a route, if any. See {@link getMute}. */
  getMute(input: {
    readonly route: string;
    readonly now?: Date;
    readonly consistent?: boolean;
  }): Promise<Mute | undefined>;
  /** The mutes in force, by route id (all routes, or those given). See {@link listMutes}. */
  listMutes(input?: { readonly routes?: readonly string[]; readonly now?: Date }): Promise<Mute[]>;

  /** Puts a person on call for a schedule for a while, over the rotation. See {@link overrideOnCall}. */
  overrideOnCall(input: OverrideInput): Promise<OnCallOverride>;
  /** The overrides of these schedules in force now or later. See {@link activeOverrides}. */
  activeOverrides(input: { readonly schedules: readonly string[]; readonly now?: Date }): Promise<OnCallOverride[]>;
  /** Opens the incident of a route and key unless one is open. See {@link openIncident}. */
  openIncident(input: OpenIncidentInput): Promise<OpenOutcome>;
  /** The open incident of a route and key. See {@link openIncidentOf}. */
  openIncidentOf(route: string, key: string): Promise<Incident | undefined>;
  getIncident(id: string): Promise<Incident | undefined>;
  /** The open incidents, oldest first. See {@link listOpenIncidents}. */
  listOpenIncidents(): Promise<Incident[]>;
  /** Claims an incident's next escalation or renotify. See {@link advanceIncident}. */
  advanceIncident(id: string, input: AdvanceInput): Promise<boolean>;
  /** Adds a line to an incident's story. See {@link noteIncident}. */
  noteIncident(id: string, entry: Omit<TimelineEntry, 'at'>, now?: Date): Promise<void>;
  /** Acknowledges or resolves an open incident; one of concurrent closes wins. See {@link closeIncident}. */
  closeIncident(id: string, input: CloseInput): Promise<CloseOutcome>;
  /** A recipient's acknowledge token for an incident. See {@link ackToken}. */
  ackToken(incidentId: string, number: string, now?: Date): Promise<string>;
  /** The incident a token opens while valid. See {@link findAckToken}. */
  findAckToken(token: string, now?: Date): Promise<AckTarget | undefined>;

  /** Records an authenticated webhook for the route's dead-man's switch, at most once per interval. See {@link touchHeartbeat}. */
  touchHeartbeat(input: { readonly route: string; readonly intervalMs: number; readonly now?: Date }): Promise<boolean>;
  /** The route's heartbeat state. */
  getHeartbeat(route: string): Promise<HeartbeatState>;
  /** Starts the silence clock of a route never heard from. */
  armHeartbeat(input: { readonly route: string; readonly now?: Date }): Promise<void>;
  /** The heartbeat's conditional changes of state; see {@link HeartbeatTransition}. */
  heartbeat: {
    readonly [K in keyof typeof HeartbeatTransition]: (
      input: Parameters<(typeof HeartbeatTransition)[K]>[1],
    ) => Promise<boolean>;
  };
  /**
   * A route's use of its limits now, for the console: messages in the current window (when its
   * length is given) and credits reserved, spent and held today. Unwritten counters read as 0.
   * See {@link limitUsage}.
   *
   * @example
   * ```typescript
   * const { messages, day } = await store.limitUsage({ route: 'alerts', messagesWindowSeconds: 3600 });
   * ```
   */
  limitUsage(input: LimitUsageInput): Promise<LimitUsage>;
  /**
   * Credits a route spent per UTC day, the last `days` (1–35) days oldest first, 0 for a day
   * without sends. Every route's sends count, with a credits limit or not.
   */
  spendByDay(input: SpendByDayInput): Promise<DaySpend[]>;

  /** One send of the second `epochSecond` under `provider.maxPerSecond`, shared by every sender: its number in the second, `undefined` when the second is full. See {@link takeRateSlot}. */
  takeRateSlot(input: { readonly epochSecond: number; readonly maxPerSecond: number }): Promise<number | undefined>;

  /** The SMS service's circuit, shared by every sender; strongly consistent. See {@link getCircuit}. */
  getCircuit(): Promise<CircuitState>;
  /** The circuit's conditional changes; see `functions/store/circuit.ts`. */
  circuit: {
    /** One more failure in a row; opens the circuit at the threshold (`opened` for exactly one caller). See {@link recordCircuitFailure}. */
    failed(input: CircuitFailureInput): Promise<{ readonly state: CircuitState; readonly opened: boolean }>;
    /** A call succeeded: failures reset, an open circuit closes (`closed` for exactly one caller). See {@link recordCircuitSuccess}. */
    succeeded(input?: {
      readonly probation?: number;
      readonly now?: Date;
    }): Promise<{ readonly closed?: CircuitState }>;
    /** The right to probe an open circuit whose probe is due, for one caller. See {@link claimCircuitProbe}. */
    claimProbe(input: { readonly leaseUntil: Date; readonly now?: Date }): Promise<CircuitState | undefined>;
    /** A probe failed; the next may start at `nextProbeAt`. See {@link recordCircuitProbeFailure}. */
    probeFailed(input: {
      readonly openedAt: string;
      readonly nextProbeAt: Date;
      readonly error: string;
    }): Promise<boolean>;
    /** Gives back a probe lease whose send was never made. See {@link releaseCircuitProbe}. */
    releaseProbe(input: { readonly leaseUntil: Date; readonly now?: Date }): Promise<boolean>;
    /** The one trial send of a circuit on probation, for one caller. See {@link claimCircuitTrial}. */
    claimTrial(input: { readonly leaseUntil: Date; readonly now?: Date }): Promise<boolean>;
    /** Gives back a trial that said nothing about the service. See {@link releaseCircuitTrial}. */
    releaseTrial(input: { readonly leaseUntil: Date }): Promise<boolean>;
    /** An operator opens it until `until`. See {@link openCircuitByHand}. */
    open(input: { readonly until: Date; readonly by: string; readonly now?: Date }): Promise<CircuitState>;
    /** An operator closes it; returns the state it had. See {@link closeCircuitByHand}. */
    close(): Promise<CircuitState>;
  };

  /** Records a balance; `alert: true` for exactly one caller per drop below the threshold. */
  updateBalanceState(observation: BalanceObservation): Promise<BalanceUpdate>;
  /** The balance watch's state, with the last known balance and price. */
  getBalanceState(): Promise<BalanceState>;
  /** Keeps the price of one SMS to one recipient, for every process's cost estimates. */
  recordPrice(observation: PriceObservation): Promise<void>;
  /** Takes a send's estimate from the projected balance, conditional on keeping `floor`. See {@link reserveCredit}. */
  reserveCredit(request: CreditRequest): Promise<CreditReservation>;
  /** Corrects a reservation with what the send is taken to have cost. See {@link settleCredit}. */
  settleCredit(settlement: CreditSettlement): Promise<void>;
  /** Rebases the projected balance on a balance the service reported. See {@link rebaseCredit}. */
  rebaseCredit(basis: CreditBasis): Promise<boolean>;
  /** Settles the reservation of a sender that stopped as maybe sent. See {@link keepStaleCredit}. */
  keepStaleCredit(stale: { readonly token: string }): Promise<void>;
  /** Settles a sent message's reservation and checks the projected balance against its answer. See {@link observeSentCredit}. */
  observeSentCredit(sent: SentCredit): Promise<void>;
  /**
   * Keeps one balance read from the SMS service for 35 days, for the console's balance chart. The
   * balance watch calls it; sends do not (their `remainingBalance` is on the `SENT` record).
   * See {@link recordBalanceReading}.
   */
  recordBalanceReading(input: BalanceReadingInput): Promise<void>;
  /**
   * The balance readings from `since` to `now`, oldest first (all pages).
   *
   * @example
   * ```typescript
   * const points = await store.listBalanceReadings({ since: new Date(Date.now() - 7 * 86_400_000) });
   * ```
   */
  listBalanceReadings(options: BalanceReadingsOptions): Promise<RecordedBalanceReading[]>;
  /** Keeps one received payload for the route's `capture` time. See {@link capturePayload}. */
  capturePayload(input: CaptureInput): Promise<CapturedPayload>;
  /** A route's captured payloads, newest first. */
  listCaptures(route: string, options?: { readonly limit?: number; readonly now?: Date }): Promise<CapturedPayload[]>;
  /** One captured payload by its id, if it is still kept. See {@link getCapture}. */
  getCapture(route: string, id: string): Promise<CapturedPayload | undefined>;
  /** The captured payload a record came from, if it is still kept. See {@link findCapture}. */
  findCapture(route: string, recordId: string, createdAt: string): Promise<CapturedPayload | undefined>;
  /**
   * Credits spent by all routes over the last `days` (1–35) UTC days, today included, from the
   * day counters: `days` + 1 items whatever the volume. See {@link recentSpend}.
   */
  spendLastDays(days: number, now?: Date): Promise<number>;
  /** The same, with since when spend is counted: what the days-left forecast rests on. See {@link recentSpend}. */
  recentSpend(days: number, now?: Date): Promise<RecentSpend>;
  /** Adds one sent message's `deducted` to its UTC day's spend counter. See {@link recordSpend}. */
  recordSpend(input: SpendRecord): Promise<void>;
  /** Marks when spend began to be counted, once per process. See {@link startSpendCount}. */
  startSpendCount(now?: Date): Promise<void>;
}

/**
 * Creates the store for one table. Holds no state besides its options, so create it once per
 * Lambda container, outside the handler.
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
}: StoreOptions): MessageStore => {
  const table: StoreTable = { client, tableName, clock, readIndexes, onUndecodable };
  return {
    acceptWebhook: async (input) => await acceptWebhook(table, input),
    recordNotice: async (input) => await recordNotice(table, input),
    claimMessage: async (id, options) => await claimMessage(table, id, options),
    settle: async (id, token, settlement, options) => await settle(table, id, token, settlement, options),
    requeue: async (id, options) => await requeue(table, id, options),
    wake: async (id, options) => await wake(table, id, options),
    dismiss: async (id, input) => await dismiss(table, id, input),
    getMessage: async (id) => await getMessage(table, id),
    listByState: async (state, options) => await listByState(table, state, options),
    listByRoute: async (route, options) => await listByRoute(table, route, options),
    listRecent: async (options) => await listRecent(table, options),
    summarizeRecords: async (options) => await summarizeRecords(table, options),
    newestByRoute: async (routes) => await newestByRoute(table, routes),
    findStaleSending: async (options) => await findStaleSending(table, options),
    findDuePending: async (options) => await findDuePending(table, options),
    countStuck: async (options) => await countStuck(table, options),
    reserveLimit: async (input) => await reserveLimit(table, input),
    releaseLimit: async (taken) => await releaseLimit(table, taken),
    recordCreditsSpent: async (input) => await recordCreditsSpent(table, input),
    heldSummaryDue: async (options) => await heldSummaryDue(table, options),
    openDigestWindow: async (input) => await openDigestWindow(table, input),
    findDueDeferred: async (options) => await findDueDeferred(table, options),
    markDigested: async (id, input) => await markDigested(table, id, input),
    dropDeferred: async (id, input) => await dropDeferred(table, id, input),
    moveToWindow: async (id, input) => await moveToWindow(table, id, input),
    markSummarySent: async (input) => await markSummarySent(table, input),
    markBudgetWarned: async (input) => await markBudgetWarned(table, input),
    muteRoute: async (input) => await muteRoute(table, input),
    unmuteRoute: async (input) => await unmuteRoute(table, input),
    getMute: async (input) => await getMute(table, input),
    listMutes: async (input) => await listMutes(table, input),
    overrideOnCall: async (input) => await overrideOnCall(table, input),
    activeOverrides: async (input) => await activeOverrides(table, input),
    openIncident: async (input) => await openIncident(table, input),
    openIncidentOf: async (route, key) => await openIncidentOf(table, route, key),
    getIncident: async (id) => await getIncident(table, id),
    listOpenIncidents: async () => await listOpenIncidents(table),
    advanceIncident: async (id, input) => await advanceIncident(table, id, input),
    noteIncident: async (id, entry, now) => await noteIncident(table, id, entry, now),
    closeIncident: async (id, input) => await closeIncident(table, id, input),
    ackToken: async (incidentId, number, now) => await ackToken(table, incidentId, number, now),
    findAckToken: async (token, now) => await findAckToken(table, token, now),
    touchHeartbeat: async (input) => await touchHeartbeat(table, input),
    getHeartbeat: async (route) => await getHeartbeat(table, route),
    armHeartbeat: async (input) => await armHeartbeat(table, input),
    heartbeat: {
      silent: async (input) => await HeartbeatTransition.silent(table, input),
      silentNotified: async (input) => await HeartbeatTransition.silentNotified(table, input),
      back: async (input) => await HeartbeatTransition.back(table, input),
      backNotified: async (input) => await HeartbeatTransition.backNotified(table, input),
    },
    limitUsage: async (input) => await limitUsage(table, input),
    spendByDay: async (input) => await spendByDay(table, input),
    takeRateSlot: async (input) => await takeRateSlot(table, input),
    getCircuit: async () => await getCircuit(table),
    circuit: {
      failed: async (input) => await recordCircuitFailure(table, input),
      succeeded: async (input) => await recordCircuitSuccess(table, input),
      claimProbe: async (input) => await claimCircuitProbe(table, input),
      probeFailed: async (input) => await recordCircuitProbeFailure(table, input),
      releaseProbe: async (input) => await releaseCircuitProbe(table, input),
      claimTrial: async (input) => await claimCircuitTrial(table, input),
      releaseTrial: async (input) => await releaseCircuitTrial(table, input),
      open: async (input) => await openCircuitByHand(table, input),
      close: async () => await closeCircuitByHand(table),
    },
    updateBalanceState: async (observation) => await updateBalanceState(table, observation),
    getBalanceState: async () => await getBalanceState(table),
    recordPrice: async (observation) => await recordPrice(table, observation),
    reserveCredit: async (request) => await reserveCredit(table, request),
    settleCredit: async (settlement) => await settleCredit(table, settlement),
    rebaseCredit: async (basis) => await rebaseCredit(table, basis),
    keepStaleCredit: async (stale) => await keepStaleCredit(table, stale),
    observeSentCredit: async (sent) => await observeSentCredit(table, sent),
    recordBalanceReading: async (input) => await recordBalanceReading(table, input),
    listBalanceReadings: async (options) => await listBalanceReadings(table, options),
    spendLastDays: async (days, now) => (await recentSpend(table, days, now)).spent,
    recentSpend: async (days, now) => await recentSpend(table, days, now),
    recordSpend: async (input) => await recordSpend(table, input),
    startSpendCount: async (now) => await startSpendCount(table, now),
    capturePayload: async (input) => await capturePayload(table, input),
    listCaptures: async (route, options) => await listCaptures(table, route, options),
    findCapture: async (route, recordId, createdAt) => await findCapture(table, route, recordId, createdAt),
    getCapture: async (route, id) => await getCapture(table, route, id),
  };
};
