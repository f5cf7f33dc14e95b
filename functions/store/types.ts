import type { DeliveryPolicy } from '../core/config/policies';
import type { Lane } from '../core/lanes';
import type { MessageState } from './table';

export { DEFAULT_RETENTION_DAYS } from '../core/defaults';

/**
 * What went wrong on the last attempt. Built by the sender from the SMS service's answer; it
 * must never hold the API key.
 */
export interface LastError {
  readonly name: string;
  /** HTTP status, when there was an answer. */
  readonly status?: number;
  /** Whether the SMS may have gone out despite the error, e.g. `'not-sent'` or `'maybe-sent'`. */
  readonly delivery?: string;
  readonly message: string;
}

/** The SMS service's answer to a successful send. */
export interface SendResult {
  readonly deducted: number;
  /** Absent when the provider's answer carries no balance (Africa's Talking, an http gateway). */
  readonly remainingBalance?: number;
  readonly message: string;
  readonly senderId: string;
  /**
   * The recipients exactly as the service returned them. Stored as a JSON string: arbitrary
   * data can hold values DynamoDB cannot (empty strings in sets, nulls in odd places, floats
   * with more than 38 digits).
   */
  readonly recipients: unknown;
}

/** The relay's own SMS, as opposed to one a webhook asked for. */
export const NoticeKind = {
  /** The balance fell below `balance.threshold`: checked again before it goes out. */
  LowBalance: 'low-balance',
  /** A route limit held messages back in a window that has ended. */
  HeldSummary: 'held-summary',
  /** A route passed 80 % of its `creditsPerMonth`: once per route and month, to `balance.notify`. */
  BudgetWarning: 'budget-warning',
  /** A route with a `heartbeat` went silent for longer than `every + grace`. */
  HeartbeatSilent: 'heartbeat-silent',
  /** Webhooks arrived again on a route whose silence was reported. */
  HeartbeatBack: 'heartbeat-back',
  /** A schedule with `notifyHandoff`: its shift's person is told they are on call, once per shift. */
  Handoff: 'handoff',
} as const;
export type NoticeKind = (typeof NoticeKind)[keyof typeof NoticeKind];

/** What an SMS is: the same fields on a message to record and on the stored record. */
export interface MessageContent {
  /** Which fan-out item of the webhook this is (0-based). */
  readonly index: number;
  /** Which part of a split text this is (1-based), of `parts`. */
  readonly part: number;
  readonly parts: number;
  readonly text: string;
  /** Recipients, each `255` followed by 9 digits. Empty only for a `DROPPED` message. */
  readonly to: readonly string[];
  readonly senderId?: string;
  readonly encoding: string;
  readonly characters: number;
  readonly segments: number;
  readonly delivery: DeliveryPolicy;
  /** Set on the relay's own SMS (see `recordNotice`); limits never hold them back. */
  readonly notice?: NoticeKind;
  /**
   * The incident this SMS pages for (its first SMS, a repeat while it is open, an escalation or
   * renotify): the sender sends it only while the incident is open.
   */
  readonly incident?: string;
  /**
   * Set on the SMS of an alert its source calls critical (Opsgenie's P1, P2) on a route that is
   * not `priority: critical`: it may spend `balance.reserve` and goes in the critical lane.
   */
  readonly critical?: true;
}

/** A message to record on accept. */
export interface NewMessage extends MessageContent {
  /**
   * `PENDING` (default) to send it; `DROPPED` to record a webhook that will never become an SMS
   * (filtered, no valid recipient, too long), so the record is the log. Only a new `PENDING`
   * record triggers the sender: the stream filter is `INSERT` with `state = PENDING`.
   */
  readonly state?: typeof MessageState.Pending | typeof MessageState.Dropped | typeof MessageState.Deferred;
  /** Required for `DROPPED` and `DEFERRED`. */
  readonly reason?: string;
  /** Required for `DEFERRED`: when its window ends and the route's digest is due. */
  readonly nextAttemptAt?: Date;
  /** On a digest: the ids of the DEFERRED records its text stands for, oldest first. */
  readonly digestOf?: readonly string[];
}

/**
 * One change of a message record's state, kept in its `history`. `reason` and `error.message` are
 * cut to {@link MAX_HISTORY_TEXT_CHARS} characters (the record's own `reason` and `lastError` are
 * not), so an entry is at most a few KB.
 */
export interface StateChange {
  readonly at: string;
  readonly state: MessageState;
  /** The reason the change was made with (a drop, a hold, a failure…). */
  readonly reason?: string;
  /** The attempt's error, on a return to `PENDING` and on failures that had one. */
  readonly error?: LastError;
  /** The provider of the attempt whose outcome this change records. */
  readonly provider?: string;
}

/** The provider an attempt went to, and why it was not the chain's first (docs/providers.md). */
export interface ProviderAttempt {
  readonly provider: string;
  /** The chain's first provider, when the attempt went to another. */
  readonly failoverFrom?: string;
  /** Why it moved on: a not-sent reason (`unreachable`, `insufficient-credit`…), `circuit-open` or `reserve`. */
  readonly failoverReason?: string;
}

/** The most of a reason or an error message a history entry keeps. */
export const MAX_HISTORY_TEXT_CHARS = 500;

/** A message record as stored. Timestamps are ISO-8601 UTC with milliseconds. */
export interface MessageRecord extends MessageContent {
  readonly id: string;
  readonly route: string;
  readonly dedupeKey: string;
  /**
   * Which lane it is sent in (`laneOf`, fixed when recorded): on AWS which of the sender's stream
   * mappings takes it; locally which of the send queue's queues. A record written before lanes
   * reads as `bulk`.
   */
  readonly lane: Lane;
  readonly state: MessageState;
  /** Claims so far since acceptance or the last redrive. */
  readonly attempts: number;
  /** How often an operator sent it back to `PENDING` with `requeue`. */
  readonly redrives: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Not to be claimed before this time (set by `settle` back to `PENDING` and by `requeue`). */
  readonly nextAttemptAt?: string;
  readonly claimedAt?: string;
  /**
   * When a sweep last woke it (see `wake`): a PENDING record left waiting (the SMS service was
   * unreachable, a retry past the sender's time-out) handed to the stream-fed sender again. Removed
   * by the claim.
   */
  readonly wokenAt?: string;
  /** Present only while `SENDING`: the token the claiming sender must present to complete. */
  readonly claimToken?: string;
  /** Why it was dropped, failed, parked, held or is unknown. */
  readonly reason?: string;
  /** The provider of the last attempt: the one that sent it, when SENT. Absent before any attempt. */
  readonly provider?: string;
  /** Set when the last attempt's provider was not the chain's first: the provider it moved on from. */
  readonly failoverFrom?: string;
  /** Why it moved on from `failoverFrom`: a not-sent reason (`unreachable`, `insufficient-credit`…), `circuit-open`, `reserve` or `maybe-sent` (an at-least-once retry after a send that may have gone out). */
  readonly failoverReason?: string;
  readonly lastError?: LastError;
  readonly result?: SendResult;
  readonly sentAt?: string;
  /** On a DIGESTED record: the id of the digest record whose SMS carried it. */
  readonly digestId?: string;
  /** On a digest record: the ids of the DEFERRED records its SMS stands for, oldest first. */
  readonly digestOf?: readonly string[];
  /** On a DISMISSED record: who dismissed it, when, why, and the state it was in (its `reason` stays that state's). */
  readonly dismissal?: Dismissal;
  /**
   * The record's changes of state, oldest first: the initial state when it was created, then one
   * entry per transition, appended by the same update that makes it. Empty on records written
   * before the history existed.
   *
   * Bounded, so a record can always be written (DynamoDB items hold 400 KB): an entry is bounded
   * (see {@link StateChange}), and a change that takes the list past `HISTORY_KEPT`
   * (`core/defaults`) is followed by a write that keeps the first `HISTORY_KEPT.first` entries and
   * the last `HISTORY_KEPT.last`, counting the ones dropped between them in
   * {@link MessageRecord.historyOmitted}. A change DynamoDB refuses as too large is written with
   * the history already cut.
   */
  readonly history: readonly StateChange[];
  /** How many changes of state were dropped from `history` after its first entries; absent when none. */
  readonly historyOmitted?: number;
  /** TTL, epoch seconds: `createdAt` plus the retention. */
  readonly expiresAt: number;
}

/** Who decided not to send a record, when, why, and from which state (see `dismiss`). */
export interface Dismissal {
  readonly by: string;
  readonly at: string;
  readonly reason: string;
  readonly from: MessageState;
}

/** One page of a listing. `cursor` is absent on the last page. */
export interface Page<T> {
  readonly items: readonly T[];
  /** Opaque; pass back as `cursor` to get the next page. */
  readonly cursor?: string;
}

/** Which route limit refused a reservation. */
export const LimitKind = {
  /** At most `max` messages per window of `windowSeconds`. */
  Messages: 'messages',
  /** At most `maxPerDay` credits per UTC day. */
  Credits: 'credits',
  /** At most `creditsPerMonth` credits per calendar month in the route's time zone. */
  MonthCredits: 'month-credits',
} as const;
export type LimitKind = (typeof LimitKind)[keyof typeof LimitKind];

/** A finished limit window that held messages back and whose summary SMS is still due. */
export interface HeldWindow {
  readonly route: string;
  /** The window's sort key; pass it to `markSummarySent`. */
  readonly window: string;
  readonly limit: LimitKind;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly held: number;
}

/** The balance watch's state. Absent (first run) reads as armed with nothing observed. */
export interface BalanceState {
  /** Whether a drop below the threshold will send the alert SMS. */
  readonly armed: boolean;
  readonly lastBalance?: number;
  readonly lastCheckedAt?: string;
  readonly lastAlertAt?: string;
  /** How many times the alert was disarmed (one per crossing below the threshold): the key of the next crossing's notice. Absent: none yet. */
  readonly alerts?: number;
  /** The first balance ever observed: how much spend history the days-left forecast can rest on. */
  readonly firstObservedAt?: string;
  /** The last recorded price of one SMS to one recipient (see `recordPrice`). */
  readonly creditsPerUnit?: number;
  /** The projected balance `balance.reserve` is enforced against (see `reserveCredit`); absent until a balance is observed with a reserve set. */
  readonly projected?: number;
  /** Credits of settled sends so far: the basis a balance read taken now is rebased on (see `rebaseCredit`). */
  readonly charged?: number;
  /** When the projected balance was last rebased on a balance read. */
  readonly rebasedAt?: string;
  /**
   * Credits a day at the recent spend, as the balance watch last forecast it (see `forecastBalance`);
   * absent when it could not forecast. What a low-balance notice recorded by a send says the balance
   * lasts, so that no send reads the spend.
   */
  readonly spendPerDay?: number;
}
