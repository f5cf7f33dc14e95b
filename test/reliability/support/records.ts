import { join } from 'node:path';
import { DATABASE_SUBDIR } from '../../../local/shared/local-store';
import type { RecordView } from '../../../local/records';
import { RUNTIME_DEFAULTS } from '../../../local/shared/settings';
import { createStore, MessageState, type MessageRecord } from '../../../functions/store';
import { startDynalite } from '../../helpers/dynalite';
import { operatorHeaders } from '../../helpers/relay-operator';
import { call } from './http';
import type { Runtime } from './runtime';

/** States after which the relay does nothing more on its own. */
export const FINAL_STATES: ReadonlySet<string> = new Set([
  MessageState.Sent,
  MessageState.Failed,
  MessageState.Unknown,
  MessageState.Parked,
  MessageState.Held,
  MessageState.Dropped,
]);

export type { RecordView } from '../../../local/records';

/** Records of a running runtime, by id (all routes, or one). */
export async function liveRecords(runtime: Runtime, route?: string): Promise<Map<string, RecordView>> {
  const query = route === undefined ? '' : `?route=${encodeURIComponent(route)}`;
  const answer = await call(runtime.baseUrl, {
    path: `/_relay/records${query}`,
    headers: { host: `127.0.0.1:${runtime.port}`, ...(await operatorHeaders(runtime.baseUrl)) },
    timeoutMs: 120_000,
  });
  if (answer.status !== 200 || !Array.isArray(answer.json?.['records'])) {
    throw new Error(`GET /_relay/records answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  }
  return new Map((answer.json['records'] as RecordView[]).map((record) => [record.id, record]));
}

import { waitUntil } from '../../helpers/wait';

export { waitUntil };

/**
 * Waits until every id has a record in a final state (read through the running runtime).
 *
 * @returns the records, by id
 */
export async function waitForFinal(
  runtime: Runtime,
  ids: readonly string[],
  deadlineMs: number,
  route?: string,
): Promise<Map<string, RecordView>> {
  let latest = new Map<string, RecordView>();
  const pending = (): string[] => ids.filter((id) => !FINAL_STATES.has(latest.get(id)?.state ?? 'MISSING'));
  await waitUntil(
    `${ids.length} record(s) to reach a final state`,
    async () => {
      latest = await liveRecords(runtime, route);
      return pending().length === 0;
    },
    {
      timeoutMs: deadlineMs,
      intervalMs: 500,
      describe: () => {
        const open = pending();
        const states = countBy(open.map((id) => latest.get(id)?.state ?? 'MISSING'));
        return `${open.length} not final: ${JSON.stringify(states)}; e.g. ${open
          .slice(0, 3)
          .map((id) => JSON.stringify(latest.get(id) ?? { id, state: 'MISSING' }))
          .join(', ')}`;
      },
    },
  );
  return latest;
}

/**
 * Every message record in a stopped runtime's store, read from its data dir (so the runtime must
 * have exited: LevelDB allows one process at a time).
 */
export async function storedRecords(dataDir: string): Promise<MessageRecord[]> {
  const db = await startDynalite({ path: join(dataDir, DATABASE_SUBDIR) });
  try {
    const store = createStore({ client: db.client, tableName: RUNTIME_DEFAULTS.tableName });
    const records: MessageRecord[] = [];
    for (const state of Object.values(MessageState)) {
      let cursor: string | undefined;
      do {
        const page = await store.listByState(state, { limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
        records.push(...page.items);
        cursor = page.cursor;
      } while (cursor !== undefined);
    }
    return records;
  } finally {
    await db.close();
  }
}

export function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
