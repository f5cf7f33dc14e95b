/** How the CLI's store commands reach the records (`record-access.ts`, `store-access.ts`). */

import type { DeliveredIncident } from '../../functions/relay/incident-story';
import type { CloseOutcome, Mute, OnCallOverride, RequeueFrom } from '../../functions/store';
import type { CircuitChange, CircuitRequest, CircuitView } from '../records/circuit-contract';
import type {
  DismissDecision,
  DismissResult,
  RecordQuery,
  RecordView,
  RedriveConsent,
  RequeueOutcome,
} from '../records';

/** How `logs` and `redrive` reach the records. */
export const AccessKind = {
  /** Through the running runtime's local-only endpoints: it holds the store. */
  Runtime: 'runtime',
  /** By opening the on-disk store in this process: no runtime is running. */
  Store: 'store',
  /** A deployed stack's table, with the AWS SDK's usual credentials. */
  Aws: 'aws',
} as const;
export type AccessKind = (typeof AccessKind)[keyof typeof AccessKind];

/** Who an acknowledgement from `sms-relay ack` names on the incident's page and timeline. */
export const ACKNOWLEDGED_BY_CLI = 'sms-relay ack';

export interface RecordAccess {
  readonly kind: AccessKind;
  /** One line saying where the records come from. */
  readonly description: string;
  list(query: RecordQuery): Promise<RecordView[]>;
  /** Requeues up to {@link MAX_REDRIVE_IDS} ids per call; UNKNOWN ones only with `acceptDuplicates`. */
  requeue(ids: readonly string[], from: RequeueFrom, consent?: RedriveConsent): Promise<RequeueOutcome>;
  /** Ends these records unsent (`sms-relay dismiss`), each conditionally; any number of ids. */
  dismiss(ids: readonly string[], decision: DismissDecision): Promise<DismissResult>;
  /** The mutes in force (`sms-relay mutes`). */
  mutes(): Promise<Mute[]>;
  /** Mutes a route (`sms-relay mute`); the store checks the length. */
  mute(request: MuteRequest): Promise<Mute>;
  /** Ends a route's mute; `false` when none was in force (`sms-relay unmute`). */
  unmute(route: string): Promise<boolean>;
  /** The on-call overrides of these schedules in force now (`sms-relay oncall`). */
  overrides(schedules: readonly string[]): Promise<OnCallOverride[]>;
  /** Puts a person on call over the rotation (`sms-relay oncall override`); the store checks the length. */
  override(request: OverrideRequest): Promise<OnCallOverride>;
  /** The open incidents, oldest first (`sms-relay incidents`). */
  incidents(): Promise<DeliveredIncident[]>;
  /** Acknowledges an open incident (`sms-relay ack`): one of concurrent acknowledgements wins. */
  acknowledge(id: string): Promise<CloseOutcome>;
  /** A provider's circuit (`sms-relay circuit`, `sms-relay providers`); absent: `main`'s, the SMS service's. */
  circuit(provider?: string): Promise<CircuitView>;
  /** Opens it for a while or closes it (`sms-relay circuit open --for`, `close`). */
  changeCircuit(request: CircuitRequest): Promise<CircuitChange>;
  close(): Promise<void>;
}

/** What `sms-relay oncall override` asks for. */
export interface OverrideRequest {
  readonly schedule: string;
  readonly person: string;
  readonly forSeconds: number;
  readonly reason: string;
}

/** What `sms-relay mute` asks for. */
export interface MuteRequest {
  readonly route: string;
  readonly forSeconds: number;
  readonly reason: string;
}

export interface LocalAccessOptions {
  readonly dataDir: string;
  readonly tableName?: string;
}

export interface DeployedAccessOptions {
  readonly environment: string;
  /** The table's name; without it, the stack's `TableName` output names it (see `findStackTable`). */
  readonly table?: string;
  readonly region?: string;
}
