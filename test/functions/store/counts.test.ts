import { BatchWriteItemCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createStore,
  type MessageStore,
  MessageState,
  type NewMessage,
  type Settlement,
  STUCK_COUNT_CAP,
  TABLE,
} from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { countItemTraffic } from '../../helpers/requests';
import { at, message, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

describe('countStuck', () => {
  it('counts UNKNOWN, PARKED, FAILED, HELD and overdue DEFERRED records alike by index (AWS) and by scan (local)', async () => {
    const table = await newTable(db);
    const scanner = createStore({
      client: db.client,
      tableName: table.tableName,
      clock: () => at(0),
      readIndexes: false,
    });
    let n = 0;
    const accept = async (store: MessageStore, overrides: Partial<NewMessage> = {}): Promise<string> =>
      (
        await store.acceptWebhook({
          route: 'a',
          dedupeKey: `k${(n += 1)}`,
          windowSeconds: 60,
          messages: [message(overrides)],
          now: at(0),
        })
      ).ids[0]!;
    const settled = async (settlement: Settlement): Promise<void> => {
      const id = await accept(table.store);
      const claimed = await table.store.claimMessage(id, { now: at(0) });
      await table.store.settle(id, claimed!.claimToken!, settlement, { now: at(0) });
    };
    for (let i = 0; i < 3; i += 1) await settled({ state: 'UNKNOWN', reason: 'may have been sent' });
    for (let i = 0; i < 2; i += 1) await settled({ state: 'PARKED', reason: 'insufficient balance' });
    await settled({ state: 'FAILED', reason: 'refused' });
    await settled({ state: 'HELD', reason: 'route limit' });
    await settled({
      state: 'SENT',
      result: { deducted: 1, remainingBalance: 9, message: 'ok', senderId: 'S', recipients: [] },
    });
    await accept(table.store);
    await accept(table.store, { state: 'DEFERRED', nextAttemptAt: at(-120_000), reason: 'digest window' });
    await accept(table.store, { state: 'DEFERRED', nextAttemptAt: at(-1_000), reason: 'digest window' });
    await accept(table.store, { state: 'DEFERRED', nextAttemptAt: at(60_000), reason: 'digest window' });
    // Limit and balance items share the table and are no records.
    await table.store.reserveLimit({ route: 'a', messages: { max: 5, windowSeconds: 60 }, now: at(0) });

    const expected = { unknown: 3, parked: 2, failed: 1, held: 1, deferredOverdue: 1 };
    expect(await table.store.countStuck({ overdueBefore: at(-60_000) })).toEqual(expected);
    expect(await scanner.countStuck({ overdueBefore: at(-60_000) })).toEqual(expected);
    expect(await scanner.countStuck({ overdueBefore: at(0) })).toEqual({ ...expected, deferredOverdue: 2 });
  });

  it('no longer counts a record once it is dismissed, by index (AWS) and by scan (local)', async () => {
    const table = await newTable(db);
    const scanner = createStore({ client: db.client, tableName: table.tableName, readIndexes: false });
    const failed: string[] = [];
    for (const key of ['f1', 'f2']) {
      const id = (
        await table.store.acceptWebhook({
          route: 'a',
          dedupeKey: key,
          windowSeconds: 60,
          messages: [message()],
          now: at(0),
        })
      ).ids[0]!;
      const claimed = await table.store.claimMessage(id, { now: at(0) });
      await table.store.settle(id, claimed!.claimToken!, { state: 'FAILED', reason: 'invalid number' });
      failed.push(id);
    }
    const counts = async () => [
      (await table.store.countStuck({ overdueBefore: at(0) })).failed,
      (await scanner.countStuck({ overdueBefore: at(0) })).failed,
    ];
    expect(await counts()).toEqual([2, 2]);
    await table.store.dismiss(failed[0]!, { by: 'asha', reason: 'customer number disconnected', now: at(1000) });
    expect(await counts()).toEqual([1, 1]);
    await table.store.dismiss(failed[1]!, { by: 'asha', reason: 'customer number disconnected', now: at(1000) });
    expect(await counts()).toEqual([0, 0]);
  });

  // 1,150 records written first: on DynamoDB Local, with every index, that alone took over a minute in CI.
  it('stops a count at the cap: past 1,000 FAILED records it reads at most 1,000 index entries and reports 1,000', {
    timeout: 300_000,
  }, async () => {
    const table = await newTable(db);
    const failedRecords = STUCK_COUNT_CAP + 150;
    const requests: WriteRequest[] = Array.from({ length: failedRecords }, (_, n) => {
      const when = at(n).toISOString();
      return {
        PutRequest: {
          Item: {
            [TABLE.partitionKey]: { S: `MSG#f${n}` },
            [TABLE.sortKey]: { S: 'MSG' },
            kind: { S: 'message' },
            id: { S: `f${n}` },
            route: { S: 'a' },
            state: { S: MessageState.Failed },
            createdAt: { S: when },
            updatedAt: { S: when },
          },
        },
      };
    });
    for (let start = 0; start < requests.length; start += 25) {
      let pending: WriteRequest[] = requests.slice(start, start + 25);
      while (pending.length > 0) {
        const { UnprocessedItems } = await db.client.send(
          new BatchWriteItemCommand({ RequestItems: { [table.tableName]: pending } }),
        );
        pending = UnprocessedItems?.[table.tableName] ?? [];
      }
    }
    const client = db.newClient();
    const traffic = countItemTraffic(client);
    const counts = await table.storeWith(client).countStuck({ overdueBefore: at(0) });
    console.log(
      `countStuck over ${failedRecords} FAILED records: failed ${counts.failed}, index entries read ${traffic.itemsRead()}`,
    );
    expect(counts).toEqual({ unknown: 0, parked: 0, failed: STUCK_COUNT_CAP, held: 0, deferredOverdue: 0 });
    expect(traffic.itemsRead()).toBeLessThanOrEqual(STUCK_COUNT_CAP);
    const scanner = createStore({ client: db.client, tableName: table.tableName, readIndexes: false });
    expect((await scanner.countStuck({ overdueBefore: at(0) })).failed).toBe(STUCK_COUNT_CAP);
  });
});
