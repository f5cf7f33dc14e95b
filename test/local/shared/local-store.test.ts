import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { test } from '../../helpers/fixtures';
import { createStore, type MessageStore, type NewMessage } from '../../../functions/store';
import { RuntimeError } from '../../../local/shared/errors';
import { LOCAL_AUTHORIZATION, openLocalStore, type LocalStore } from '../../../local/shared/local-store';
import {
  parseSince,
  parseState,
  queryRecords,
  REDRIVE_STATES,
  requeueRecords,
  toRecordView,
} from '../../../local/records';

const T0 = Date.parse('2025-03-01T10:00:00.000Z');
const at = (seconds: number): Date => new Date(T0 + seconds * 1000);
const message = (text: string, to: readonly string[] = ['255712345678']): NewMessage => ({
  index: 0,
  part: 1,
  parts: 1,
  text,
  to,
  encoding: 'GSM-7',
  characters: text.length,
  segments: 1,
  delivery: 'at-most-once',
});

let dir: string;
let local: LocalStore;

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  local = await openLocalStore({ dataDir: dir, tableName: 'sms-relay' });
});
afterAll(async () => {
  await local?.close();
});

async function accept(
  store: MessageStore,
  route: string,
  key: string,
  seconds: number,
  to?: readonly string[],
): Promise<string> {
  const result = await store.acceptWebhook({
    route,
    dedupeKey: key,
    windowSeconds: 60,
    now: at(seconds),
    messages: [message(`${route} ${key}`, to)],
  });
  return result.ids[0]!;
}

describe('the local store', () => {
  it('admits one holder per directory, with a clear error for the second', async () => {
    await expect(openLocalStore({ dataDir: dir, tableName: 'sms-relay' })).rejects.toThrow(RuntimeError);
    await expect(openLocalStore({ dataDir: dir, tableName: 'sms-relay' })).rejects.toThrow(
      `the store in ${dir} is in use by another process`,
    );
  });

  it('keeps records on disk across a close and a reopen', async () => {
    const id = await accept(local.store, 'notify', 'persist', 0);
    await local.close();
    local = await openLocalStore({ dataDir: dir, tableName: 'sms-relay' });
    expect(await local.store.getMessage(id)).toMatchObject({
      id,
      route: 'notify',
      state: 'PENDING',
      text: 'notify persist',
    });
  });

  it('hands dynalite its requests unsigned: the fixed fields it checks for, no SigV4 of the body', async () => {
    // A store of its own: the client builds each command's middleware once, at its first request.
    const own = mkdtempSync(join(tmpdir(), 'sms-relay-store-unsigned-'));
    const fresh = await openLocalStore({ dataDir: own, tableName: 'sms-relay' });
    const seen: Record<string, string>[] = [];
    fresh.client.middlewareStack.add(
      (next) => async (args) => {
        const answer = await next(args);
        seen.push({ ...(args.request as { headers: Record<string, string> }).headers });
        return answer;
      },
      { step: 'finalizeRequest', priority: 'low', name: 'seeHeaders' },
    );
    try {
      const id = await accept(fresh.store, 'notify', 'unsigned', 1);
      expect(await fresh.store.getMessage(id)).toMatchObject({ id, state: 'PENDING' });
    } finally {
      await fresh.close();
      rmSync(own, { recursive: true, force: true });
    }
    expect(seen).toHaveLength(2);
    for (const headers of seen) {
      expect(headers).toMatchObject(LOCAL_AUTHORIZATION);
      expect(headers).not.toHaveProperty('x-amz-content-sha256');
    }
  });

  it('reads the same records through its background client, whose requests it answers one at a time', async () => {
    const id = await accept(local.store, 'notify', 'background', 2);
    const background = createStore({ client: local.backgroundClient, tableName: 'sms-relay' });
    // Sent at once, as the attention watch sends its listings: each still answered, in turn.
    const reads = await Promise.all(Array.from({ length: 5 }, async () => await background.getMessage(id)));
    for (const record of reads) expect(record).toMatchObject({ id, state: 'PENDING', text: 'notify background' });
  });
});

describe('records for logs and redrive', () => {
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const { store } = local;
    ids['a1'] = await accept(store, 'alpha', 'a1', 10);
    ids['a2'] = await accept(store, 'alpha', 'a2', 20, ['255754111222', '255712345678']);
    ids['b1'] = await accept(store, 'beta', 'b1', 30);
    ids['b2'] = await accept(store, 'beta', 'b2', 40);
    // a2 is parked at 50 s, b1 sent at 60 s; a1 and b2 stay PENDING.
    const a2 = await store.claimMessage(ids['a2']!, { now: at(50) });
    await store.settle(
      ids['a2']!,
      a2!.claimToken!,
      { state: 'PARKED', reason: 'insufficient balance (402) for 0712345678' },
      { now: at(50) },
    );
    const b1 = await store.claimMessage(ids['b1']!, { now: at(60) });
    await store.settle(
      ids['b1']!,
      b1!.claimToken!,
      { state: 'SENT', result: { deducted: 20, remainingBalance: 980, message: 'ok', senderId: 'X', recipients: [] } },
      { now: at(60) },
    );
  });

  it('lists a route newest first, by creation, optionally one state', async () => {
    expect((await queryRecords(local.store, { route: 'alpha' })).map((record) => record.id)).toEqual([
      ids['a2'],
      ids['a1'],
    ]);
    expect((await queryRecords(local.store, { route: 'beta', state: 'SENT' })).map((record) => record.id)).toEqual([
      ids['b1'],
    ]);
    expect((await queryRecords(local.store, { route: 'beta', since: at(35) })).map((record) => record.id)).toEqual([
      ids['b2'],
    ]);
    expect(await queryRecords(local.store, { route: 'nobody' })).toEqual([]);
  });

  it('lists every state newest change first, limited', async () => {
    const newest = await queryRecords(local.store, { since: at(5), limit: 3 });
    expect(newest.map((record) => record.id)).toEqual([ids['b1'], ids['a2'], ids['b2']]);
    expect((await queryRecords(local.store, { state: 'PARKED' })).map((record) => record.id)).toEqual([ids['a2']]);
  });

  it('shows numbers masked, also inside reasons, with credits when sent', async () => {
    const [parked] = await queryRecords(local.store, { state: 'PARKED' });
    expect(toRecordView(parked!)).toEqual({
      id: ids['a2'],
      route: 'alpha',
      state: 'PARKED',
      createdAt: at(20).toISOString(),
      updatedAt: at(50).toISOString(),
      to: ['2557****222', '2557****678'],
      segments: 1,
      attempts: 1,
      reason: 'insufficient balance (402) for 2557****678',
      deducted: null,
      remainingBalance: null,
      provider: null,
      failoverFrom: null,
      failoverReason: null,
      dismissal: null,
    });
    const [sent] = await queryRecords(local.store, { state: 'SENT' });
    expect(toRecordView(sent!)).toMatchObject({ deducted: 20, remainingBalance: 980, reason: null });
  });

  it('requeues only records still in the state they were listed in', async () => {
    expect(await requeueRecords(local.store, [ids['a2']!, ids['b1']!], 'PARKED')).toEqual({
      requeued: [ids['a2']],
      skipped: [ids['b1']],
    });
    expect(await local.store.getMessage(ids['a2']!)).toMatchObject({ state: 'PENDING', attempts: 0, redrives: 1 });
    expect(await requeueRecords(local.store, [ids['a2']!], 'PARKED')).toEqual({ requeued: [], skipped: [ids['a2']] });
  });
});

describe('command-line values', () => {
  it('reads --since as a duration back from now or an ISO time', () => {
    const now = new Date('2025-03-01T12:00:00.000Z');
    expect(parseSince('2h', now).toISOString()).toBe('2025-03-01T10:00:00.000Z');
    expect(parseSince('90', now).toISOString()).toBe('2025-03-01T11:58:30.000Z');
    expect(parseSince('2025-02-28T08:00:00Z', now).toISOString()).toBe('2025-02-28T08:00:00.000Z');
    expect(() => parseSince('yesterday', now)).toThrow('--since: expected a duration like 30m, 2h, 3d or an ISO time');
  });

  it('reads a state in any case, from the allowed ones only', () => {
    expect(parseState('parked', REDRIVE_STATES)).toBe('PARKED');
    expect(() => parseState('SENT', REDRIVE_STATES)).toThrow(
      '--state: expected one of PARKED, FAILED, HELD, UNKNOWN, got "SENT"',
    );
  });
});
