/**
 * The records reached by opening a store in this process: the local store when no runtime holds it,
 * or a deployed stack's table. Loaded only then (`record-access.ts` imports it on demand), since it
 * pulls in the AWS SDK, dynalite and the store, which a command answered by the running relay
 * never needs.
 */
import { withDelivery } from '../../functions/relay/incident-story';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createStore, type MessageStore } from '../../functions/store';
import { IncidentState } from '../../functions/core/paging/incident';
import { checkAwsAccess, findStackTable, isCredentialsError, noCredentialsError } from './aws';
import { DATABASE_SUBDIR, openLocalStore, undecodableToStderr } from './local-store';
import { dismissRecords, queryRecords, requeueRecords, toRecordView } from '../records';
import { RUNTIME_DEFAULTS } from './settings';
import { changeCircuit, circuitView, OpenedBy } from '../records/circuit';
import {
  ACKNOWLEDGED_BY_CLI,
  AccessKind,
  type DeployedAccessOptions,
  type LocalAccessOptions,
  type RecordAccess,
} from './access-kind';

/**
 * The local store in `dataDir`, opened in this process (no runtime holds it; see
 * `openLocalRecordAccess`). A store that was never created reads as empty and is not created.
 */
export async function openLocalStoreAccess({
  dataDir,
  tableName = RUNTIME_DEFAULTS.tableName,
}: LocalAccessOptions): Promise<RecordAccess> {
  if (!existsSync(join(dataDir, DATABASE_SUBDIR))) {
    // The writes an operator may make before the relay first runs create the store for it.
    const withLocalStore = async <T>(write: (store: MessageStore) => Promise<T>): Promise<T> => {
      const local = await openLocalStore({ dataDir, tableName });
      try {
        return await write(local.store);
      } finally {
        await local.close();
      }
    };
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
      changeCircuit: async (request) => await withLocalStore((store) => changeCircuit(store, request, OpenedBy.Cli)),
      // A mute set before the relay first runs is kept for it: the store is created for it.
      mute: async (request) => await withLocalStore((store) => store.muteRoute(request)),
      // Kept for the relay too, as a mute is.
      override: async (request) => await withLocalStore((store) => store.overrideOnCall(request)),
      close: async () => undefined,
    };
  }
  const local = await openLocalStore({ dataDir, tableName });
  return { ...storeAccess(local.store, AccessKind.Store, `local store ${dataDir}`), close: () => local.close() };
}

/** A deployed stack's table (see `openDeployedRecordAccess`). */
export async function openDeployedStoreAccess({
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
    incidents: async () =>
      await Promise.all((await store.listOpenIncidents()).map(async (incident) => await withDelivery(store, incident))),
    acknowledge: async (id) =>
      await store.closeIncident(id, { state: IncidentState.Acknowledged, by: ACKNOWLEDGED_BY_CLI }),
    circuit: async (provider) => circuitView(await store.getCircuit(provider)),
    changeCircuit: async (request) => await changeCircuit(store, request, OpenedBy.Cli),
  };
}
