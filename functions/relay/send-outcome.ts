import type { MessageStore } from '../store';
import type { BalanceWatchStore } from './balance';
import type { CircuitStore } from './circuit';
import { type CreditGateStore, GateOutcome } from './credit-gate';
import type { IncidentSendStore } from './incident-sends';
import type { ProviderRateStore } from './provider-rate';
import type { Lane } from '../core/lanes';

/*
 * What the sender answers and takes, apart from `sender.ts`, so the send through the provider
 * chain (`failover.ts`) and `sendMessage` share them without importing each other.
 */

/** What `sendMessage` uses of the store: the claim and the outcome, and what its gate, circuit and balance watch use. */
export type SenderStore = Pick<MessageStore, 'claimMessage' | 'settle'> &
  IncidentSendStore &
  CreditGateStore &
  CircuitStore &
  ProviderRateStore &
  BalanceWatchStore;

/** What the sender did with one record. */
export const SendOutcome = {
  Sent: 'sent',
  /** Another sender holds it, or it is not due / not pending: nothing done. */
  Skipped: 'skipped',
  Retrying: 'retrying',
  Failed: 'failed',
  Unknown: 'unknown',
  Parked: GateOutcome.Parked,
  Held: GateOutcome.Held,
  /** A low-balance notice whose balance is back above the threshold: dropped, never sent. */
  Dropped: GateOutcome.Dropped,
  /** The SMS service is unreachable (its circuit is open): left PENDING, untouched, for when it is back. */
  Waiting: 'waiting',
} as const;
export type SendOutcome = (typeof SendOutcome)[keyof typeof SendOutcome];

/** Options of {@link sendMessage}. */
export interface SendMessageOptions {
  /**
   * Told when the record went back to PENDING for another attempt at `nextAttemptAt` (a send that
   * certainly did not go out, or any failure on an at-least-once route), so the caller can send it
   * again on time instead of waiting for the sweeper, in the record's lane.
   */
  readonly onRetry?: (nextAttemptAt: Date, lane: Lane) => void;
}
