import type { DismissResult } from '../records';
import { MAX_REDRIVE_IDS } from '../records/states';
import { findRunningRuntime, type RuntimeAnnouncement } from './discovery';
import { AccessKind, type LocalAccessOptions, type DeployedAccessOptions, type RecordAccess } from './access-kind';
import { relayClient } from './relay-client';

export { RELAY_PREFIX } from './relay-client';

export {
  AccessKind,
  type DeployedAccessOptions,
  type LocalAccessOptions,
  type MuteRequest,
  type OverrideRequest,
  type RecordAccess,
} from './access-kind';

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

export { ACKNOWLEDGED_BY_CLI } from './access-kind';

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
    circuit: async (provider) =>
      (await relay('GET /circuit', provider === undefined ? {} : { query: { provider } })).circuit,
    changeCircuit: async (request) => await relay('POST /circuit', { body: request }),
    close: async () => undefined,
  };
}
