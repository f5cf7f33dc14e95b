/**
 * How the CLI's store commands reach the records: through the running relay's `/_relay` API while
 * a runtime holds the local store, else by opening the store in this process, or a deployed
 * stack's table with `--env`. Opening a store loads `store-access.ts` (the AWS SDK, dynalite, the
 * store) on demand, so a command the running relay answers loads none of it.
 */
import type { Incident } from '../../functions/core/paging/incident';
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
import { MAX_REDRIVE_IDS } from '../records/states';
import { findRunningRuntime, type RuntimeAnnouncement } from './discovery';
import { relayClient } from './relay-client';

export { RELAY_PREFIX } from './relay-client';

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
  incidents(): Promise<Incident[]>;
  /** Acknowledges an open incident (`sms-relay ack`): one of concurrent acknowledgements wins. */
  acknowledge(id: string): Promise<CloseOutcome>;
  /** The SMS service's circuit (`sms-relay circuit`). */
  circuit(): Promise<CircuitView>;
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

/**
 * Reaches the local records. LevelDB admits one process per directory, so while a runtime holds
 * the store (its `runtime.json` is there and its `/health` answers) the records are read and
 * requeued through its `/_relay` endpoints; otherwise the store is opened here and closed again.
 * A store that was never created reads as empty and is not created.
 *
 * @throws {RuntimeError} the store is held by a process that is not an answering runtime
 *
 * @example
 * ```ts
 * const access = await openLocalRecordAccess({ dataDir: localPath('dataDir', undefined) });
 * try { console.log(await access.list({ state: 'PARKED' })); } finally { await access.close(); }
 * ```
 */
export async function openLocalRecordAccess(options: LocalAccessOptions): Promise<RecordAccess> {
  const running = await findRunningRuntime(options.dataDir);
  if (running !== undefined) return runtimeAccess(running);
  return await (await import('./store-access')).openLocalStoreAccess(options);
}

export interface DeployedAccessOptions {
  readonly environment: string;
  /** The table's name; without it, the stack's `TableName` output names it (see `findStackTable`). */
  readonly table?: string;
  readonly region?: string;
}

/**
 * Reaches a deployed stack's table with the AWS SDK's default credential chain. Without `table`
 * the table is the one the stack `SmsRelay-<env>` outputs as `TableName`. Without a region or
 * credentials it says what to set (`AWS_REGION`, `AWS_PROFILE`, `aws sso login`) before any call.
 *
 * @example
 * ```ts
 * const access = await openDeployedRecordAccess({ environment: 'prod' });
 * ```
 */
export async function openDeployedRecordAccess(options: DeployedAccessOptions): Promise<RecordAccess> {
  return await (await import('./store-access')).openDeployedStoreAccess(options);
}

/** Who an acknowledgement from `sms-relay ack` names on the incident's page and timeline. */
export const ACKNOWLEDGED_BY_CLI = 'sms-relay ack';

/** The records through the running relay's `/_relay` API, with the secret of its `runtime.json`. */
function runtimeAccess({ url, pid, consoleSecret }: RuntimeAnnouncement): RecordAccess {
  const relay = relayClient({ url, consoleSecret });
  return {
    kind: AccessKind.Runtime,
    description: `the running relay (pid ${pid}, ${url})`,
    list: async ({ route, state, since, limit }) =>
      (await relay('GET /records', { query: { route, state, since: since?.toISOString(), limit } })).records,
    requeue: async (ids, from, { acceptDuplicates = false } = {}) => {
      if (ids.length > MAX_REDRIVE_IDS) throw new RangeError(`at most ${MAX_REDRIVE_IDS} ids per call`);
      return await relay('POST /redrive', { body: { from, ids: [...ids], acceptDuplicates } });
    },
    dismiss: async (ids, { by, reason, from }) => {
      const dismissed: string[] = [];
      const refused: DismissResult['refused'][number][] = [];
      // The endpoint takes at most MAX_REDRIVE_IDS ids a request.
      for (let start = 0; start < ids.length; start += MAX_REDRIVE_IDS) {
        const outcome = await relay('POST /dismiss', {
          body: {
            ids: ids.slice(start, start + MAX_REDRIVE_IDS),
            reason,
            by,
            ...(from === undefined ? {} : { state: from }),
          },
        });
        dismissed.push(...outcome.dismissed);
        refused.push(...outcome.refused);
      }
      return { dismissed, refused };
    },
    mutes: async () => (await relay('GET /mutes')).mutes,
    mute: async (request) => (await relay('POST /mutes', { body: request })).mute,
    unmute: async (route) => (await relay('POST /unmute', { body: { route } })).unmuted,
    overrides: async (schedules) =>
      (await relay('GET /overrides', { query: { schedules: schedules.join(',') } })).overrides,
    override: async (request) => (await relay('POST /overrides', { body: request })).override,
    incidents: async () => (await relay('GET /incidents')).incidents,
    acknowledge: async (id) => await relay('POST /ack', { body: { incident: id } }),
    circuit: async () => (await relay('GET /circuit')).circuit,
    changeCircuit: async (request) => await relay('POST /circuit', { body: request }),
    close: async () => undefined,
  };
}
