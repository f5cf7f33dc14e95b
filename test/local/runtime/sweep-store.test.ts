import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, describe, expect, it } from 'vitest';
import { sweep } from '../../../functions/relay/sweeper';
import { createStore, MessageState } from '../../../functions/store';
import { sweepStores } from '../../../local/runtime/sweep-store';
import { DATABASE_SUBDIR, type LocalStore, openLocalStore } from '../../../local/shared/local-store';
import { bearer, harness, type Harness, SECRETS, TestClock, useRelayServers } from '../../functions/relay/support';

const servers = useRelayServers({});
const TABLE = 'sms-relay';
const STALE_MS = 120_000;
/** Records that wait for nothing: what a sweep that scans reads every run, and a bounded one never. */
const SETTLED = 150;
const SENT = { deducted: 20, remainingBalance: 980, message: 'ok', senderId: 'OPS', recipients: [] } as const;

const dirs: string[] = [];
const opened: LocalStore[] = [];
afterEach(async () => {
  for (const local of opened.splice(0)) await local.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The local store on disk, and the relay on it, its Scan requests counted. */
async function open(
  dataDir: string,
  clock: TestClock,
): Promise<{ relay: Harness; local: LocalStore; scans: () => number }> {
  const local = await openLocalStore({ dataDir, tableName: TABLE });
  opened.push(local);
  let scans = 0;
  local.client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'ScanCommand') scans += 1;
      return await next(args);
    },
    { step: 'initialize', name: 'countScans' },
  );
  const relay = await harness({
    db: servers.db,
    baseUrl: servers.sandbox.baseUrl,
    client: local.client,
    tableName: TABLE,
    clock,
    policy: { staleSendingMs: STALE_MS },
  });
  return { relay, local, scans: () => scans };
}

async function post(relay: Harness, text: string): Promise<string> {
  const response = await relay.ingest('ops-alo', JSON.stringify({ message: text }), {
    headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
  });
  expect(response.status).toBe(202);
  return (response.body['ids'] as string[])[0]!;
}

/** What a kill between dynalite's writes leaves: the record's state index entries gone, the record itself as it was. */
async function dropIndexEntries(dataDir: string, id: string): Promise<number> {
  const db = new ClassicLevel<string, { pk?: { S?: string } }>(join(dataDir, DATABASE_SUBDIR), {
    valueEncoding: 'json',
  });
  const dropped: string[] = [];
  for await (const [key, value] of db.iterator({ gte: 'index-', lt: 'index.' }))
    if (value.pk?.S === `MSG#${id}`) dropped.push(key);
  for (const key of dropped) await db.del(key);
  await db.close();
  return dropped.length;
}

describe("the local runtime's sweeps: the first scans the table, the later ones read what waits", () => {
  it('lists due and stale records without a scan after the first sweep, whatever the table holds', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sweep-store-'));
    dirs.push(dataDir);
    const clock = new TestClock();
    const { relay, local, scans } = await open(dataDir, clock);
    for (let n = 0; n < SETTLED; n += 1) {
      const id = await post(relay, `settled ${n}`);
      const claimed = await relay.store.claimMessage(id, { now: clock.now });
      await relay.store.settle(
        id,
        claimed!.claimToken!,
        { state: MessageState.Sent, result: SENT },
        { now: clock.now },
      );
    }
    const stale = await post(relay, 'claimed, then its sender died');
    await relay.store.claimMessage(stale, { now: clock.now });
    const stores = sweepStores(
      createStore({ client: local.client, tableName: TABLE, clock: clock.read, readIndexes: false }),
      relay.store,
    );
    const dispatched: string[] = [];
    const run = async () =>
      await sweep(
        { ...relay.context, store: await stores.next() },
        { limit: 1_000, dispatch: (ids) => dispatched.push(...ids) },
      );

    const before = scans();
    await run();
    expect(scans() - before).toBeGreaterThan(0);

    clock.advance(STALE_MS + 1_000);
    const due = await post(relay, 'waiting for the sweep');
    dispatched.length = 0;
    const second = scans();
    const report = await run();
    expect(scans() - second).toBe(0);
    expect(report.recovered).toBe(1);
    expect(await relay.record(stale)).toMatchObject({ state: MessageState.Pending });
    expect(dispatched).toContain(due);
    expect(dispatched).toContain(stale);
  });

  it('recovers a SENDING record a kill left out of the state index once it is stale, reading it by key', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sweep-store-'));
    dirs.push(dataDir);
    const clock = new TestClock();
    const first = await open(dataDir, clock);
    const id = await post(first.relay, 'in flight at the kill');
    await first.relay.store.claimMessage(id, { now: clock.now });
    await opened.pop()!.close();
    expect(await dropIndexEntries(dataDir, id)).toBeGreaterThan(0);

    const { relay, local } = await open(dataDir, clock);
    expect((await relay.store.findStaleSending({ olderThan: new Date(8.64e15) })).items).toEqual([]);
    const stores = sweepStores(
      createStore({ client: local.client, tableName: TABLE, clock: clock.read, readIndexes: false }),
      relay.store,
    );
    const run = async () =>
      await sweep({ ...relay.context, store: await stores.next() }, { limit: 1_000, dispatch: () => undefined });

    // Not stale yet at the first sweep after the restart; the later sweeps read the indexes, which do not list it.
    expect((await run()).recovered).toBe(0);
    clock.advance(STALE_MS + 1_000);
    expect((await run()).recovered).toBe(1);
    expect(await relay.record(id)).toMatchObject({ state: MessageState.Pending });
    expect((await run()).recovered).toBe(0);
  });
});
