import {
  type AttributeValue,
  type BatchGetItemCommandOutput,
  BatchWriteItemCommand,
  DeleteItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore, type MessageRecord, type Page, StoreError, TABLE } from '../../../functions/store';
import { MAX_RESULT_BYTES, messageItem } from '../../../functions/store/codec';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { acceptEach, at, message, messages, newTable, T0 } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const lastError = { name: 'TimeoutError', message: 'timed out' };

const collect = async (next: (cursor?: string) => Promise<Page<MessageRecord>>): Promise<string[][]> => {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await next(cursor);
    pages.push(page.items.map((record) => record.id));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return pages;
};

describe('getMessage', () => {
  it('returns undefined for an unknown id', async () => {
    const { store } = await newTable(db);
    expect(await store.getMessage('01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeUndefined();
  });
});

describe('a record naming its providers', () => {
  it('reads back the provider of its last attempt, its failover and the provider of each history entry', async () => {
    const { store, tableName } = await newTable(db);
    const [id] = await acceptEach(store, ['a']);
    const accepted = (await store.getMessage(id!))!;
    const sentByAt: MessageRecord = {
      ...accepted,
      state: 'SENT',
      provider: 'at',
      failoverFrom: 'main',
      failoverReason: 'unreachable',
      history: [...accepted.history, { at: at(1_000).toISOString(), state: 'SENT', provider: 'at' }],
    };
    await db.client.send(new PutItemCommand({ TableName: tableName, Item: messageItem(sentByAt) }));
    expect(await store.getMessage(id!)).toEqual(sentByAt);
  });
});

describe('listByState', () => {
  it('pages through one state oldest first, leaving other states and non-message items out', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'a', 'b', 'a', 'b']);
    await store.claimMessage(ids[1] ?? '', { now: at(10_000) });
    // Limit and balance items live in the same table and must never show up in a listing.
    await store.reserveLimit({ route: 'a', messages: { max: 5, windowSeconds: 60 }, now: at(0) });
    await store.updateBalanceState({ balance: 5, threshold: 10, now: at(0) });

    const pages = await collect((cursor) => store.listByState('PENDING', { limit: 2, ...(cursor ? { cursor } : {}) }));

    expect(pages.flat()).toEqual([ids[0], ids[2], ids[3], ids[4]]);
    expect(pages[0]).toHaveLength(2);
    expect((await store.listByState('SENDING')).items.map((record) => record.id)).toEqual([ids[1]]);
  });

  it('selects by time: since inclusive, before exclusive, newest first on request', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'a', 'a', 'a']);
    const page = await store.listByState('PENDING', { since: at(1000), before: at(3000) });
    expect(page.items.map((record) => record.id)).toEqual([ids[1], ids[2]]);
    expect(page.cursor).toBeUndefined();
    expect((await store.listByState('PENDING', { before: at(1000) })).items.map((record) => record.id)).toEqual([
      ids[0],
    ]);
    expect((await store.listByState('PENDING', { since: at(3000) })).items.map((record) => record.id)).toEqual([
      ids[3],
    ]);
    expect((await store.listByState('PENDING', { newestFirst: true })).items.map((record) => record.id)).toEqual(
      [...ids].reverse(),
    );
    expect((await store.listByState('PENDING', { since: at(3000), before: at(1000) })).items).toEqual([]);
  });

  it('refuses a cursor it did not make and a page size out of range', async () => {
    const { store } = await newTable(db);
    await expect(store.listByState('PENDING', { cursor: 'not-a-cursor' })).rejects.toThrow(
      new StoreError('invalid pagination cursor'),
    );
    const numeric = Buffer.from(JSON.stringify({ pk: { N: '1' } })).toString('base64url');
    await expect(store.listByState('PENDING', { cursor: numeric })).rejects.toThrow(
      new StoreError('invalid pagination cursor'),
    );
    await expect(store.listByState('PENDING', { limit: 0 })).rejects.toBeInstanceOf(StoreError);
  });
});

describe('listByRoute', () => {
  it('pages through one route in order of acceptance, whatever the state', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'b', 'a', 'a', 'b', 'a']);
    await store.claimMessage(ids[2] ?? '', { now: at(10_000) });

    const pages = await collect((cursor) => store.listByRoute('a', { limit: 3, ...(cursor ? { cursor } : {}) }));

    expect(pages.flat()).toEqual([ids[0], ids[2], ids[3], ids[5]]);
    const since = await store.listByRoute('a', { since: at(3000), newestFirst: true });
    expect(since.items.map((record) => record.id)).toEqual([ids[5], ids[3]]);
    // The index holds keys only; the listing reads the records, so it shows their current state.
    expect((await store.listByRoute('a')).items.map((record) => record.state)).toEqual([
      'PENDING',
      'SENDING',
      'PENDING',
      'PENDING',
    ]);
  });

  describe('over a keys-only index', () => {
    /** 5 webhooks of 42 messages on route `bulk`, a second apart, and one on another route. */
    const bulkTable = async () => {
      const table = await newTable(db);
      for (const n of [0, 1, 2, 3, 4]) {
        await table.store.acceptWebhook({
          route: 'bulk',
          dedupeKey: `b${n}`,
          windowSeconds: 60,
          messages: messages(42),
          now: at(n * 1000),
        });
      }
      await table.store.acceptWebhook({
        route: 'other',
        dedupeKey: 'o',
        windowSeconds: 60,
        messages: messages(5),
        now: at(500),
      });
      return table;
    };

    /** The ids in the order of the index itself, read raw. */
    const indexOrder = async (tableName: string, newestFirst = false): Promise<string[]> => {
      const ids: string[] = [];
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await db.client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: 'byRoute',
            KeyConditionExpression: '#route = :route',
            ExpressionAttributeNames: { '#route': 'route' },
            ExpressionAttributeValues: { ':route': { S: 'bulk' } },
            ScanIndexForward: !newestFirst,
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) {
          // Nothing but the table's and the index's keys is projected.
          expect(Object.keys(item).sort()).toEqual(['createdAt', 'pk', 'route', 'sk']);
          ids.push((item.pk?.S ?? '').replace(/^MSG#/, ''));
        }
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      return ids;
    };

    /**
     * A client that counts its BatchGetItem requests and can interfere with them. It reverses each
     * answer: DynamoDB returns a batch's items in no particular order.
     */
    const batchClient = (before?: (keys: number, call: number) => Promise<void>) => {
      const calls: number[] = [];
      const client = db.newClient();
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName !== 'BatchGetItemCommand') return await next(args);
          const input = args.input as { RequestItems: Record<string, { Keys: unknown[] }> };
          const keys = Object.values(input.RequestItems)[0]?.Keys.length ?? 0;
          calls.push(keys);
          await before?.(keys, calls.length);
          const result = await next(args);
          for (const items of Object.values((result.output as BatchGetItemCommandOutput).Responses ?? {}))
            items.reverse();
          return result;
        },
        { step: 'initialize', name: 'countBatchGets' },
      );
      return { client, calls };
    };

    it('keeps the index order across pages and reads the records in batches of at most 100', async () => {
      const table = await bulkTable();
      const expected = await indexOrder(table.tableName);
      expect(expected).toHaveLength(210);
      const { client, calls } = batchClient();
      const store = table.storeWith(client);

      const pages = await collect((cursor) => store.listByRoute('bulk', { limit: 150, ...(cursor ? { cursor } : {}) }));

      expect(pages.map((page) => page.length)).toEqual([150, 60]);
      expect(pages.flat()).toEqual(expected);
      expect(calls).toEqual([100, 50, 60]);
      const records = (await store.listByRoute('bulk', { limit: 1000 })).items;
      expect(records.map((record) => record.id)).toEqual(expected);
      expect(records.every((record) => record.route === 'bulk' && record.text.startsWith('message '))).toBe(true);
      const created = records.map((record) => record.createdAt);
      expect([...created].sort()).toEqual(created);

      const newest = await store.listByRoute('bulk', { limit: 1000, newestFirst: true, since: at(1000) });
      expect(newest.items.map((record) => record.id)).toEqual((await indexOrder(table.tableName, true)).slice(0, 168));
    });

    it('asks again for the keys DynamoDB leaves unprocessed, keeping the order', async () => {
      const table = await bulkTable();
      const expected = await indexOrder(table.tableName);
      const client = db.newClient();
      let first = true;
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName !== 'BatchGetItemCommand' || !first) return await next(args);
          first = false;
          // As under throttling: only part of the first request is served.
          const input = args.input as { RequestItems: Record<string, { Keys: unknown[]; ConsistentRead?: boolean }> };
          const [name, request] = Object.entries(input.RequestItems)[0] ?? ['', { Keys: [] }];
          const served = request.Keys.slice(0, 30);
          const result = await next({ ...args, input: { RequestItems: { [name]: { ...request, Keys: served } } } });
          const output = result.output as BatchGetItemCommandOutput;
          output.UnprocessedKeys = { [name]: { ...request, Keys: request.Keys.slice(30) } as never };
          return result;
        },
        { step: 'initialize', name: 'partialBatchGet' },
      );

      const page = await table.storeWith(client).listByRoute('bulk', { limit: 100 });

      expect(first).toBe(false);
      expect(page.items.map((record) => record.id)).toEqual(expected.slice(0, 100));
    });

    it('leaves out a record deleted between the index query and the read', async () => {
      const table = await bulkTable();
      const expected = await indexOrder(table.tableName);
      const gone = expected[3] ?? '';
      const { client } = batchClient(async (_, call) => {
        if (call === 1) {
          await db.client.send(
            new DeleteItemCommand({ TableName: table.tableName, Key: { pk: { S: `MSG#${gone}` }, sk: { S: 'MSG' } } }),
          );
        }
      });

      const page = await table.storeWith(client).listByRoute('bulk', { limit: 10 });

      expect(page.items.map((record) => record.id)).toEqual(expected.slice(0, 10).filter((id) => id !== gone));
      expect(page.cursor).toBeDefined();
    });
  });
});

describe('findStaleSending', () => {
  it('lists SENDING records claimed before the cut-off', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'a', 'a']);
    await store.claimMessage(ids[0] ?? '', { now: at(10_000) });
    await store.claimMessage(ids[1] ?? '', { now: at(50_000) });

    const stale = await store.findStaleSending({ olderThan: at(50_000) });

    expect(stale.items.map((record) => [record.id, record.claimToken !== undefined])).toEqual([[ids[0], true]]);
  });
});

describe('findDuePending', () => {
  it('lists PENDING records without a next attempt or whose next attempt has come', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'a', 'a']);
    for (const [n, id] of ids.slice(0, 2).entries()) {
      const record = await store.claimMessage(id, { now: at(10_000) });
      await store.settle(
        id,
        record?.claimToken ?? '',
        { state: 'PENDING', nextAttemptAt: at(60_000 * (n + 1)), lastError },
        { now: at(10_000) },
      );
    }

    const due = async (now: number, updatedBefore?: number) =>
      (
        await store.findDuePending({
          now: at(now),
          ...(updatedBefore === undefined ? {} : { updatedBefore: at(updatedBefore) }),
        })
      ).items
        .map((record) => record.id)
        .sort();

    expect(await due(59_999)).toEqual([ids[2]]);
    expect(await due(60_000)).toEqual([ids[0], ids[2]].sort());
    expect(await due(120_000)).toEqual([...ids].sort());
    // Leave fresh records to the stream-triggered sender.
    expect(await due(120_000, 2000)).toEqual([]);
  });

  it('lists a due record on the first page behind more than a page of records waiting for a later retry', async () => {
    const { store, tableName, rawItem } = await newTable(db);
    // One record sent back to PENDING until an hour from now by the store, then 209 copies of its
    // item (other ids, changed a ms apart) by batch writes: DynamoDB Local takes tens of ms a write.
    const waiting = 210;
    const [first] = await acceptEach(store, ['bulk']);
    const claimed = await store.claimMessage(first!, { now: at(1000) });
    await store.settle(
      first!,
      claimed!.claimToken!,
      { state: 'PENDING', nextAttemptAt: at(3_600_000), lastError },
      {
        now: at(1000),
      },
    );
    const item = await rawItem(`MSG#${first}`, 'MSG');
    const copies = Array.from({ length: waiting - 1 }, (_, n) => {
      const id = `${first!.slice(0, 20)}W${String(n).padStart(5, '0')}`;
      return {
        PutRequest: {
          Item: { ...item!, pk: { S: `MSG#${id}` }, id: { S: id }, updatedAt: { S: at(1001 + n).toISOString() } },
        },
      };
    });
    for (let start = 0; start < copies.length; start += 25) {
      let pending = copies.slice(start, start + 25);
      while (pending.length > 0) {
        const { UnprocessedItems } = await db.client.send(
          new BatchWriteItemCommand({ RequestItems: { [tableName]: pending } }),
        );
        pending = (UnprocessedItems?.[tableName] ?? []) as typeof pending;
      }
    }
    const {
      ids: [dueId],
    } = await store.acceptWebhook({
      route: 'alerts',
      dedupeKey: 'due',
      windowSeconds: 60,
      messages: [message()],
      now: at(5000),
    });

    const page = await store.findDuePending({ now: at(60_000), updatedBefore: at(50_000), limit: 200 });
    expect(page.items.map((record) => record.id)).toEqual([dueId]);
    // An hour later all are due, the longest due first.
    const later = await store.findDuePending({ now: at(3_600_000), limit: 200 });
    expect(later.items).toHaveLength(200);
    expect(later.items[0]?.id).toBe(dueId);
  });

  it('lists a due PENDING record written without dueAt (before the due index), after those the index lists', async () => {
    const { store, tableName } = await newTable(db);
    const [legacy, current] = await acceptEach(store, ['a', 'a']);
    await db.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: `MSG#${legacy}` }, sk: { S: 'MSG' } },
        UpdateExpression: 'REMOVE #dueAt',
        ExpressionAttributeNames: { '#dueAt': 'dueAt' },
      }),
    );
    const listed = await store.findDuePending({ now: at(60_000) });
    expect(listed.items.map((record) => record.id)).toEqual([current, legacy]);
  });
});

describe('listings that scan the table instead of reading its indexes (readIndexes: false, the local runtime)', () => {
  const scanning = async () => {
    const table = await newTable(db);
    const { createStore } = await import('../../../functions/store');
    return {
      ...table,
      scanner: createStore({ client: db.client, tableName: table.tableName, clock: () => at(0), readIndexes: false }),
    };
  };

  it('lists what the indexes list, in the same order, paged the same way', async () => {
    const { store, scanner } = await scanning();
    const ids = await acceptEach(store, ['a', 'b', 'a', 'a', 'b', 'a', 'a']);
    await store.claimMessage(ids[2]!, { now: at(20_000) });
    await store.reserveLimit({ route: 'a', messages: { max: 5, windowSeconds: 60 }, now: at(0) });

    for (const options of [
      {},
      { newestFirst: true },
      { since: at(3_000) },
      { before: at(5_000) },
      { since: at(1_000), before: at(6_000), newestFirst: true },
    ]) {
      expect(
        await collect((cursor) => scanner.listByRoute('a', { ...options, limit: 2, ...(cursor ? { cursor } : {}) })),
      ).toEqual(
        await collect((cursor) => store.listByRoute('a', { ...options, limit: 2, ...(cursor ? { cursor } : {}) })),
      );
      expect(
        (
          await collect((cursor) =>
            scanner.listByState('PENDING', { ...options, limit: 3, ...(cursor ? { cursor } : {}) }),
          )
        ).flat(),
      ).toEqual(
        (
          await collect((cursor) =>
            store.listByState('PENDING', { ...options, limit: 3, ...(cursor ? { cursor } : {}) }),
          )
        ).flat(),
      );
    }
    expect((await scanner.findStaleSending({ olderThan: at(30_000) })).items.map((record) => record.id)).toEqual([
      ids[2],
    ]);
    expect((await scanner.findDuePending({ now: at(30_000) })).items.map((record) => record.id)).toEqual(
      ids.filter((_, n) => n !== 2),
    );
  });

  it('shows each record once, in its current state, whatever the index holds', async () => {
    const { store, scanner, tableName } = await scanning();
    const ids = await acceptEach(store, ['a', 'a']);
    // An index entry left behind by a write that never finished: the record itself is gone.
    await db.client.send(
      new DeleteItemCommand({ TableName: tableName, Key: { pk: { S: `MSG#${ids[0]}` }, sk: { S: 'MSG' } } }),
    );
    expect((await scanner.listByRoute('a')).items.map((record) => record.id)).toEqual([ids[1]]);
    expect((await scanner.listByState('PENDING')).items.map((record) => [record.id, record.state])).toEqual([
      [ids[1], 'PENDING'],
    ]);
  });
});

describe('listRecent and summarizeRecords: every state at once', () => {
  const both = async () => {
    const table = await newTable(db);
    const { createStore } = await import('../../../functions/store');
    return {
      ...table,
      scanner: createStore({ client: db.client, tableName: table.tableName, clock: () => at(0), readIndexes: false }),
    };
  };

  it('lists records of every state newest change first, the same with indexes and with a scan', async () => {
    const { store, scanner } = await both();
    const ids = await acceptEach(store, ['a', 'b', 'a', 'c', 'b', 'a']);
    const claimed = await store.claimMessage(ids[0]!, { now: at(10_000) });
    await store.settle(
      ids[0]!,
      claimed!.claimToken!,
      { state: 'SENT', result: { deducted: 20, remainingBalance: 980, message: 'ok', senderId: 'X', recipients: [] } },
      { now: at(11_000) },
    );
    await store.reserveLimit({ route: 'a', messages: { max: 5, windowSeconds: 60 }, now: at(0) });

    const expected = [ids[0], ids[5], ids[4], ids[3], ids[2], ids[1]];
    for (const reader of [store, scanner]) {
      expect((await reader.listRecent()).map((record) => record.id)).toEqual(expected);
      expect((await reader.listRecent({ limit: 3 })).map((record) => record.id)).toEqual(expected.slice(0, 3));
      expect((await reader.listRecent({ since: at(3_000), before: at(11_000) })).map((record) => record.id)).toEqual([
        ids[5],
        ids[4],
        ids[3],
      ]);
      const full = (await reader.listRecent({ limit: 1 }))[0]!;
      expect(full).toMatchObject({ id: ids[0], state: 'SENT', text: 'm0', result: { remainingBalance: 980 } });
    }
  });

  it('summarises the records changed since a time: route, state, times and the amounts of a send, nothing more', async () => {
    const { store, scanner } = await both();
    const ids = await acceptEach(store, ['a', 'b', 'a']);
    const claimed = await store.claimMessage(ids[2]!, { now: at(10_000) });
    await store.settle(
      ids[2]!,
      claimed!.claimToken!,
      { state: 'SENT', result: { deducted: 40, remainingBalance: 960, message: 'ok', senderId: 'X', recipients: [] } },
      { now: at(12_000) },
    );
    for (const reader of [store, scanner]) {
      const summaries = (await reader.summarizeRecords({ since: at(1_000) })).sort((x, y) => (x.id < y.id ? -1 : 1));
      expect(summaries).toEqual([
        {
          id: ids[1],
          route: 'b',
          state: 'PENDING',
          createdAt: at(1_000).toISOString(),
          updatedAt: at(1_000).toISOString(),
        },
        {
          id: ids[2],
          route: 'a',
          state: 'SENT',
          createdAt: at(2_000).toISOString(),
          updatedAt: at(12_000).toISOString(),
          sentAt: at(12_000).toISOString(),
          deducted: 40,
          remainingBalance: 960,
        },
      ]);
    }
  });

  it("summarises the newest records of one state from the state index's entries alone, reading no record", async () => {
    const { tableName, store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'b', 'a', 'b', 'a']);
    for (const [n, id] of ids.slice(0, 4).entries()) {
      const claimed = await store.claimMessage(id, { now: at(10_000 + n * 1000) });
      await store.settle(
        id,
        claimed!.claimToken!,
        {
          state: 'SENT',
          result: { deducted: 20, remainingBalance: 1000 - 20 * n, message: 'ok', senderId: 'X', recipients: [] },
        },
        { now: at(20_000 + n * 1000) },
      );
    }
    for (const readIndexes of [true, false]) {
      const client = db.newClient();
      const commands: string[] = [];
      client.middlewareStack.add(
        (next, context) => async (args) => {
          commands.push(context.commandName ?? '');
          return await next(args);
        },
        { step: 'initialize', name: 'countCommands' },
      );
      const reader = createStore({ client, tableName, clock: () => T0, readIndexes });
      const newest = await reader.summarizeRecent({ state: 'SENT', since: at(21_000), limit: 2 });
      expect(newest).toEqual(
        [3, 2].map((n) => ({
          id: ids[n],
          route: n % 2 === 0 ? 'a' : 'b',
          state: 'SENT',
          createdAt: at(n * 1000).toISOString(),
          updatedAt: at(20_000 + n * 1000).toISOString(),
          sentAt: at(20_000 + n * 1000).toISOString(),
          deducted: 20,
          remainingBalance: 1000 - 20 * n,
        })),
      );
      expect(commands).toEqual(['QueryCommand']);
      expect(
        (await reader.summarizeRecent({ state: 'SENT', since: at(0), limit: 10 })).map((summary) => summary.id),
      ).toEqual([ids[3], ids[2], ids[1], ids[0]]);
    }
    await expect(store.summarizeRecent({ state: 'SENT', since: at(0), limit: 0 })).rejects.toThrow(StoreError);
  });

  it('tells when the newest record of each route was created, leaving out routes without records', async () => {
    const { store, scanner } = await both();
    await acceptEach(store, ['a', 'b', 'a', 'c']);
    for (const reader of [store, scanner]) {
      expect(Object.fromEntries(await reader.newestByRoute(['a', 'b', 'z']))).toEqual({
        a: at(2_000).toISOString(),
        b: at(1_000).toISOString(),
      });
    }
  });
});

describe('the state index', () => {
  it('holds what its queries read, never the text, the recipients or the history', async () => {
    const { store, tableName } = await newTable(db);
    const [id] = await acceptEach(store, ['a']);
    const record = await store.claimMessage(id!, { now: at(5000) });
    await store.settle(
      id!,
      record?.claimToken ?? '',
      {
        state: 'SENT',
        result: { deducted: 20, remainingBalance: 980, message: 'ok', senderId: 'RELAY', recipients: [] },
      },
      { now: at(6000) },
    );
    const { Items: entries = [] } = await db.client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: 'byStateSummary',
        KeyConditionExpression: '#state = :sent',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':sent': { S: 'SENT' } },
      }),
    );
    expect(entries).toHaveLength(1);
    expect(Object.keys(entries[0]!).sort()).toEqual([
      'createdAt',
      'id',
      'pk',
      'result',
      'route',
      'sentAt',
      'sk',
      'state',
      'updatedAt',
    ]);
    // Listings still return whole records, read from the table.
    const [listed] = (await store.listByState('SENT')).items;
    expect(listed?.history.map((change) => change.state)).toEqual(['PENDING', 'SENDING', 'SENT']);
    expect(listed?.text).toBe('m0');
  });

  it('holds no field of more than a few hundred bytes, whatever the service answered: a 30 KB answer stays in the record', async () => {
    const { store, tableName } = await newTable(db);
    const [id] = await acceptEach(store, ['a']);
    const record = await store.claimMessage(id!, { now: at(5000) });
    const recipients = Array.from({ length: 320 }, (_, n) => ({
      phoneNumber: `2557${String(n).padStart(8, '0')}`,
      status: 'queued ✓',
      messageId: `msg_${n}_${'x'.repeat(20)}`,
    }));
    const answer = {
      deducted: 20,
      remainingBalance: 980,
      message: 'é'.repeat(600),
      senderId: 'Ś'.repeat(40),
      recipients,
    };
    await store.settle(id!, record?.claimToken ?? '', { state: 'SENT', result: answer }, { now: at(6000) });
    const { Items: entries = [] } = await db.client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: TABLE.indexes.byState.name,
        KeyConditionExpression: '#state = :sent',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':sent': { S: 'SENT' } },
      }),
    );
    expect(entries).toHaveLength(1);
    // The JSON of the attribute values weighs more than DynamoDB's reckoning of them: an upper bound.
    const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
    const sizes = Object.fromEntries(Object.entries(entries[0]!).map(([name, value]) => [name, bytes(value)]));
    console.log(`state index entry of a SENT record with a ${bytes(recipients)} B answer: ${JSON.stringify(sizes)}`);
    expect(bytes(recipients)).toBeGreaterThan(25_000);
    expect(Math.max(...Object.values(sizes))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(bytes(entries[0])).toBeLessThan(1024);
    // The record itself keeps the whole answer, and reads it back as it was.
    const stored = await store.getMessage(id!);
    expect(stored?.result?.recipients).toEqual(recipients);
    expect(stored?.result).toMatchObject({ deducted: 20, remainingBalance: 980 });
  });

  it('reads only the newest records asked for, each once, across every state, with indexes and locally', async () => {
    const { tableName, store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'b', 'a', 'c', 'b', 'a', 'c', 'a', 'b', 'a']);
    // Three states: six PENDING, two SENDING, two SENT, each state's newest changed last.
    for (const [n, id] of [ids[0], ids[1], ids[2], ids[3]].entries()) {
      const claimed = await store.claimMessage(id!, { now: at(20_000 + n * 1000) });
      if (n < 2)
        await store.settle(
          id!,
          claimed!.claimToken!,
          {
            state: 'SENT',
            result: { deducted: 20, remainingBalance: 980, message: 'ok', senderId: 'X', recipients: [] },
          },
          { now: at(30_000 + n * 1000) },
        );
    }
    for (const readIndexes of [true, false]) {
      const client = db.newClient();
      const keysRead: string[] = [];
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'BatchGetItemCommand') {
            const { RequestItems } = args.input as { RequestItems: Record<string, { Keys: { pk: { S: string } }[] }> };
            keysRead.push(...(RequestItems[tableName]?.Keys ?? []).map((key) => key.pk.S));
          }
          return await next(args);
        },
        { step: 'initialize', name: 'countKeys' },
      );
      const reader = createStore({ client, tableName, clock: () => T0, readIndexes });
      const newest = await reader.listRecent({ limit: 3 });
      expect(newest.map((record) => [record.id, record.state])).toEqual([
        [ids[1], 'SENT'],
        [ids[0], 'SENT'],
        [ids[3], 'SENDING'],
      ]);
      expect(keysRead.sort()).toEqual([ids[0], ids[1], ids[3]].map((id) => `MSG#${id}`).sort());
    }
  });

  it('lists a record once when the index lists it twice (dynalite after a kill), without a BatchGetItem of duplicate keys', async () => {
    const { tableName } = await newTable(db);
    const client = db.newClient();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        // As dynalite's index after a kill between its writes: one record under two entries.
        const output = result.output as { Items?: Record<string, AttributeValue>[] };
        if (context.commandName === 'QueryCommand' && output.Items !== undefined && output.Items.length > 0)
          output.Items = [output.Items[0]!, ...output.Items];
        return result;
      },
      { step: 'initialize', name: 'twiceListed' },
    );
    const store = createStore({ client, tableName, clock: () => T0 });
    const ids = await acceptEach(store, ['a', 'b']);
    expect((await store.listByState('PENDING')).items.map((record) => record.id)).toEqual(ids);
    expect((await store.listRecent()).map((record) => record.id).sort()).toEqual([...ids].sort());
  });
});

describe('records this version cannot read (written by a newer version, read after a rollback)', () => {
  /**
   * Seven records of route `a`: four carry a value this version does not know (a notice, a history
   * state, a state, and a notice on a stale SENDING record), three are ordinary (two PENDING, one
   * stale SENDING).
   */
  const withUnknownValues = async (readIndexes: boolean) => {
    const table = await newTable(db);
    const reported: { id: string; message: string }[] = [];
    const store = createStore({
      client: db.client,
      tableName: table.tableName,
      clock: () => at(0),
      readIndexes,
      onUndecodable: ({ id, error }) => reported.push({ id, message: error.message }),
    });
    const ids = await acceptEach(table.store, ['a', 'a', 'a', 'a', 'a', 'a', 'a']);
    await table.store.claimMessage(ids[3]!, { now: at(10_000) });
    await table.store.claimMessage(ids[6]!, { now: at(10_000) });
    const update = async (id: string, name: string, expression: string, value: AttributeValue) =>
      await db.client.send(
        new UpdateItemCommand({
          TableName: table.tableName,
          Key: { pk: { S: `MSG#${id}` }, sk: { S: 'MSG' } },
          UpdateExpression: expression,
          ExpressionAttributeNames: { '#name': name },
          ExpressionAttributeValues: { ':value': value },
        }),
      );
    await update(ids[0]!, 'notice', 'SET #name = :value', { S: 'heartbeat-silent-v2' });
    await update(ids[1]!, 'history', 'SET #name = list_append(#name, :value)', {
      L: [{ M: { at: { S: at(500).toISOString() }, state: { S: 'ESCALATED' } } }],
    });
    await update(ids[2]!, 'state', 'SET #name = :value', { S: 'ESCALATED' });
    await update(ids[3]!, 'notice', 'SET #name = :value', { S: 'heartbeat-silent-v2' });
    return { store, ids, reported };
  };

  for (const readIndexes of [true, false]) {
    it(`leaves them out of every listing and reports each by id, the others listed as usual (readIndexes: ${readIndexes})`, async () => {
      const { store, ids, reported } = await withUnknownValues(readIndexes);
      const idsOf = (records: readonly MessageRecord[]) => records.map((record) => record.id).sort();

      expect(idsOf((await store.listByRoute('a')).items)).toEqual([ids[4], ids[5], ids[6]].sort());
      expect(idsOf((await store.listByState('PENDING')).items)).toEqual([ids[4], ids[5]].sort());
      expect(idsOf((await store.findDuePending({ now: at(60_000) })).items)).toEqual([ids[4], ids[5]].sort());
      expect(idsOf((await store.findStaleSending({ olderThan: at(200_000) })).items)).toEqual([ids[6]]);
      expect(idsOf(await store.listRecent())).toEqual([ids[4], ids[5], ids[6]].sort());
      // The newest two are a readable record and one left out: the next newest takes its place.
      expect((await store.listRecent({ limit: 2 })).map((record) => record.id)).toEqual([ids[6], ids[5]]);
      // The counts need no notice or history: only a state this version does not know is left out.
      expect((await store.summarizeRecords({ since: at(-1000) })).map((summary) => summary.id).sort()).toEqual(
        [ids[0], ids[1], ids[3], ids[4], ids[5], ids[6]].sort(),
      );

      expect(new Set(reported.map((report) => report.id))).toEqual(new Set([ids[0], ids[1], ids[2], ids[3]]));
      expect(reported.find((report) => report.id === ids[0])?.message).toBe(
        `item MSG#${ids[0]}: unknown notice heartbeat-silent-v2`,
      );
      expect(reported.find((report) => report.id === ids[1])?.message).toBe(
        `item MSG#${ids[1]}: unknown state ESCALATED in history`,
      );
      expect(reported.find((report) => report.id === ids[2])?.message).toBe(
        `item MSG#${ids[2]}: unknown state ESCALATED`,
      );
    });
  }

  it('names the record and the value when one is read by id', async () => {
    const { store, ids } = await withUnknownValues(true);
    await expect(store.getMessage(ids[0]!)).rejects.toThrow(
      new StoreError(`item MSG#${ids[0]}: unknown notice heartbeat-silent-v2`),
    );
  });
});
