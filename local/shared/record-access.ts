import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type CloseOutcome,
  createStore,
  type MessageStore,
  type Mute,
  type OnCallOverride,
  type RequeueFrom,
} from '../../functions/store';
import { IncidentState, type Incident } from '../../functions/core/paging/incident';
import { checkAwsAccess, findStackTable, isCredentialsError, noCredentialsError } from './aws';
import { findRunningRuntime, type RuntimeAnnouncement } from './discovery';
import { RuntimeError } from './errors';
import { DATABASE_SUBDIR, openLocalStore, undecodableToStderr } from './local-store';
import {
  type DismissDecision,
  type DismissResult,
  dismissRecords,
  MAX_REDRIVE_IDS,
  queryRecords,
  requeueRecords,
  toRecordView,
  type RecordQuery,
  type RecordView,
  type RedriveConsent,
  type RequeueOutcome,
} from '../records';
import { RUNTIME_DEFAULTS } from './settings';
import {
  changeCircuit,
  type CircuitChange,
  type CircuitRequest,
  circuitView,
  type CircuitView,
  OpenedBy,
} from '../records/circuit';

/** Local-only endpoints under this prefix serve `logs` and `redrive` while the runtime holds the store. */
export const RELAY_PREFIX = '/_relay';

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
export async function openLocalRecordAccess({
  dataDir,
  tableName = RUNTIME_DEFAULTS.tableName,
}: LocalAccessOptions): Promise<RecordAccess> {
  const running = await findRunningRuntime(dataDir);
  if (running !== undefined) return runtimeAccess(running);
  if (!existsSync(join(dataDir, DATABASE_SUBDIR))) {
    return {
      kind: AccessKind.Store,
      description: `local store ${dataDir} (empty: the relay has not run with this RELAY_DATA_DIR)`,
      list: async () => [],
      requeue: async (ids) => ({ requeued: [], skipped: [...ids] }),
      dismiss: async (ids) => ({
        dismissed: [],
        refused: ids.map((id) => ({ id, state: null, why: 'is no record (the local store is empty)' })),
      }),
      mutes: async () => [],
      unmute: async () => false,
      overrides: async () => [],
      incidents: async () => [],
      acknowledge: async () => ({ closed: false, incident: undefined }),
      circuit: async () => circuitView({ failures: 0, probes: 0 }),
      // Kept for the relay, as a mute is: opened by hand before it first runs, it starts open.
      changeCircuit: async (request) => {
        const local = await openLocalStore({ dataDir, tableName });
        try {
          return await changeCircuit(local.store, request, OpenedBy.Cli);
        } finally {
          await local.close();
        }
      },
      // A mute set before the relay first runs is kept for it: the store is created for it.
      mute: async (request) => {
        const local = await openLocalStore({ dataDir, tableName });
        try {
          return await local.store.muteRoute(request);
        } finally {
          await local.close();
        }
      },
      // Kept for the relay too, as a mute is.
      override: async (request) => {
        const local = await openLocalStore({ dataDir, tableName });
        try {
          return await local.store.overrideOnCall(request);
        } finally {
          await local.close();
        }
      },
      close: async () => undefined,
    };
  }
  const local = await openLocalStore({ dataDir, tableName });
  return { ...storeAccess(local.store, AccessKind.Store, `local store ${dataDir}`), close: () => local.close() };
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
export async function openDeployedRecordAccess({
  environment,
  table,
  region,
}: DeployedAccessOptions): Promise<RecordAccess> {
  const client = new DynamoDBClient(region === undefined ? {} : { region });
  try {
    const resolvedRegion = await checkAwsAccess(client, environment);
    const tableName = table ?? (await findStackTable(environment, { region: resolvedRegion }));
    const access = storeAccess(
      createStore({ client, tableName, onUndecodable: undecodableToStderr() }),
      AccessKind.Aws,
      `table ${tableName} (${environment})`,
    );
    // Credentials that fail mid-way (an SSO session expiring during an incident) get the same advice.
    const advised =
      <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          return await call(...args);
        } catch (error) {
          throw isCredentialsError(error) ? noCredentialsError(environment, error) : error;
        }
      };
    return {
      ...access,
      list: advised(access.list),
      requeue: advised(access.requeue),
      dismiss: advised(access.dismiss),
      mutes: advised(access.mutes),
      mute: advised(access.mute),
      unmute: advised(access.unmute),
      overrides: advised(access.overrides),
      override: advised(access.override),
      incidents: advised(access.incidents),
      acknowledge: advised(access.acknowledge),
      circuit: advised(access.circuit),
      changeCircuit: advised(access.changeCircuit),
      close: async () => client.destroy(),
    };
  } catch (error) {
    client.destroy();
    throw error;
  }
}

function storeAccess(store: MessageStore, kind: AccessKind, description: string): Omit<RecordAccess, 'close'> {
  return {
    kind,
    description,
    list: async (query) => (await queryRecords(store, query)).map(toRecordView),
    requeue: async (ids, from, consent) => await requeueRecords(store, ids, from, consent),
    dismiss: async (ids, decision) => await dismissRecords(store, ids, decision),
    mutes: async () => await store.listMutes(),
    mute: async (request) => await store.muteRoute(request),
    unmute: async (route) => await store.unmuteRoute({ route }),
    overrides: async (schedules) => await store.activeOverrides({ schedules }),
    override: async (request) => await store.overrideOnCall(request),
    incidents: async () => await store.listOpenIncidents(),
    acknowledge: async (id) =>
      await store.closeIncident(id, { state: IncidentState.Acknowledged, by: ACKNOWLEDGED_BY_CLI }),
    circuit: async () => circuitView(await store.getCircuit()),
    changeCircuit: async (request) => await changeCircuit(store, request, OpenedBy.Cli),
  };
}

/** Who an acknowledgement from `sms-relay ack` names on the incident's page and timeline. */
export const ACKNOWLEDGED_BY_CLI = 'sms-relay ack';

function runtimeAccess({ url, pid, consoleSecret }: RuntimeAnnouncement): RecordAccess {
  // The runtime's secret from its runtime.json: /_relay answers no one else.
  const authorization: Record<string, string> =
    consoleSecret === undefined ? {} : { authorization: `Bearer ${consoleSecret}` };
  const call = async <T>(path: string, init?: RequestInit): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(`${url}${RELAY_PREFIX}${path}`, {
        ...init,
        headers: { ...authorization, ...(init?.headers as Record<string, string> | undefined) },
        signal: AbortSignal.timeout(60_000),
      });
    } catch (error) {
      throw new RuntimeError(`the running relay at ${url} did not answer (${(error as Error).message})`, {
        cause: error,
      });
    }
    const body = (await response.json().catch(() => ({}))) as T & { error?: string };
    if (!response.ok)
      throw new RuntimeError(`the running relay answered ${response.status}: ${body.error ?? 'no details'}`);
    return body;
  };
  return {
    kind: AccessKind.Runtime,
    description: `the running relay (pid ${pid}, ${url})`,
    list: async ({ route, state, since, limit }) => {
      const query = new URLSearchParams();
      if (route !== undefined) query.set('route', route);
      if (state !== undefined) query.set('state', state);
      if (since !== undefined) query.set('since', since.toISOString());
      if (limit !== undefined) query.set('limit', String(limit));
      return (await call<{ records: RecordView[] }>(`/records?${query.toString()}`)).records;
    },
    requeue: async (ids, from, { acceptDuplicates = false } = {}) => {
      if (ids.length > MAX_REDRIVE_IDS) throw new RangeError(`at most ${MAX_REDRIVE_IDS} ids per call`);
      return await call<RequeueOutcome>('/redrive', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ from, ids, acceptDuplicates }),
      });
    },
    dismiss: async (ids, { by, reason, from }) => {
      const dismissed: string[] = [];
      const refused: DismissResult['refused'][number][] = [];
      // The endpoint takes at most MAX_REDRIVE_IDS ids a request.
      for (let start = 0; start < ids.length; start += MAX_REDRIVE_IDS) {
        const outcome = await call<DismissResult>('/dismiss', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            ids: ids.slice(start, start + MAX_REDRIVE_IDS),
            reason,
            by,
            ...(from === undefined ? {} : { state: from }),
          }),
        });
        dismissed.push(...outcome.dismissed);
        refused.push(...outcome.refused);
      }
      return { dismissed, refused };
    },
    mutes: async () => (await call<{ mutes: Mute[] }>('/mutes')).mutes,
    mute: async (request) =>
      (
        await call<{ mute: Mute }>('/mutes', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(request),
        })
      ).mute,
    unmute: async (route) =>
      (
        await call<{ unmuted: boolean }>('/unmute', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ route }),
        })
      ).unmuted,
    overrides: async (schedules) =>
      (
        await call<{ overrides: OnCallOverride[] }>(
          `/overrides?${new URLSearchParams({ schedules: schedules.join(',') }).toString()}`,
        )
      ).overrides,
    override: async (request) =>
      (
        await call<{ override: OnCallOverride }>('/overrides', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(request),
        })
      ).override,
    incidents: async () => (await call<{ incidents: Incident[] }>('/incidents')).incidents,
    acknowledge: async (id) =>
      await call<CloseOutcome>('/ack', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ incident: id }),
      }),
    circuit: async () => (await call<{ circuit: CircuitView }>('/circuit')).circuit,
    changeCircuit: async (request) =>
      await call<CircuitChange>('/circuit', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request),
      }),
    close: async () => undefined,
  };
}
