import { PutItemCommand, type PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RECORDS_PER_WEBHOOK, StoreError, type AcceptResult } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, kinds, message, messages, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const T0_SECONDS = T0.getTime() / 1000;

type RawItem = Record<string, { S?: string }>;

/**
 * A client on the same server that logs each command it sends (`TransactWriteItems DEDUPE MSG`,
 * `GetItem MSG`…). A transaction holding a message whose text `fails` picks, or an item whose key
 * `lost` picks, is cut short as a kill of the local store mid-transaction (or the accept written
 * before transactions) leaves it: the other puts are written, each with its condition, then the
 * call fails.
 */
const tracingClient = ({
  fails = () => false,
  lost = () => false,
}: {
  fails?: (text: string) => boolean;
  lost?: (pk: string) => boolean;
} = {}) => {
  const sent: string[] = [];
  const client = db.newClient();
  const isLost = (item: RawItem): boolean =>
    lost(item['pk']?.S ?? '') || (item['kind']?.S === 'message' && fails(item['text']?.S ?? ''));
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Item?: RawItem; Key?: RawItem; TransactItems?: { Put?: PutItemCommandInput }[] };
      const prefix = (item: RawItem | undefined): string => (item?.['pk']?.S ?? '').split('#')[0] ?? '';
      const command = context.commandName?.replace(/Command$/, '');
      if (input.TransactItems === undefined) {
        sent.push(`${command} ${prefix(input.Item ?? input.Key)}`);
        return await next(args);
      }
      const puts = input.TransactItems.map((item) => item.Put!);
      sent.push(`${command} ${puts.map((put) => prefix(put.Item as RawItem)).join(' ')}`);
      if (!puts.some((put) => isLost(put.Item as RawItem))) return await next(args);
      for (const put of puts) {
        if (isLost(put.Item as RawItem)) continue;
        const { ReturnValuesOnConditionCheckFailure: _, ...plain } = put;
        await db.client.send(new PutItemCommand(plain)).catch(() => undefined);
      }
      throw new Error('simulated crash');
    },
    { step: 'initialize', name: 'traceAndCrash' },
  );
  return { client, sent };
};

describe('acceptWebhook', () => {
  it('writes one PENDING record per message and a guard holding their ids', async () => {
    const { store, scan, rawItem } = await newTable(db);
    const result = await store.acceptWebhook({
      route: 'orders',
      dedupeKey: 'delivery-1',
      windowSeconds: 3600,
      messages: messages(3),
      now: T0,
    });

    expect(result.outcome).toBe('accepted');
    expect(result.ids).toHaveLength(3);
    const records = await Promise.all(result.ids.map((id) => store.getMessage(id)));
    expect(records.map((record) => [record?.state, record?.index, record?.text, record?.attempts])).toEqual([
      ['PENDING', 0, 'message 0', 0],
      ['PENDING', 1, 'message 1', 0],
      ['PENDING', 2, 'message 2', 0],
    ]);
    expect(records[0]).toMatchObject({
      route: 'orders',
      dedupeKey: 'delivery-1',
      to: ['255712345678'],
      delivery: 'at-most-once',
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
      expiresAt: T0_SECONDS + 90 * 86_400,
      history: [{ at: T0.toISOString(), state: 'PENDING' }],
    });

    const guard = await rawItem('DEDUPE#orders#delivery-1', 'DEDUPE');
    expect(guard?.messageIds?.L?.map((id) => id.S)).toEqual(result.ids);
    expect(guard?.windowEndsAt?.N).toBe(String(T0_SECONDS + 3600));
    expect(guard?.expiresAt?.N).toBe(String(T0_SECONDS + 3600));
    // When the records' TTL may take them, so that a late duplicate does not write them again.
    expect(guard?.recordsExpireAt?.N).toBe(String(T0_SECONDS + 90 * 86_400));
    expect(guard?.status).toBeUndefined();
    expect(kinds(await scan(), 'message')).toHaveLength(3);
  });

  it('keeps critical on a message its source calls critical (on a normal route): the critical lane, read back as written', async () => {
    const { store, rawItem } = await newTable(db);
    const result = await store.acceptWebhook({
      route: 'og',
      dedupeKey: 'alias-1',
      windowSeconds: 3600,
      messages: [message({ critical: true }), message({ index: 1, text: 'P3' })],
      priority: 'normal',
      now: T0,
    });
    const [critical, normal] = await Promise.all(result.ids.map((id) => store.getMessage(id)));
    expect(critical).toMatchObject({ critical: true, lane: 'critical' });
    expect(normal?.lane).toBe('bulk');
    expect(normal).not.toHaveProperty('critical');
    expect((await rawItem(`MSG#${result.ids[0]}`, 'MSG'))?.['critical']).toEqual({ BOOL: true });
  });

  it('writes the guard and the messages in one transaction: one request, nothing else', async () => {
    const table = await newTable(db);
    const { client, sent } = tracingClient();
    await table
      .storeWith(client)
      .acceptWebhook({ route: 'orders', dedupeKey: 'd', windowSeconds: 60, messages: messages(3) });
    expect(sent).toEqual(['TransactWriteItems DEDUPE MSG MSG MSG']);
  });

  it('answers a duplicate after reading the records of the guard, writing nothing when all exist', async () => {
    const table = await newTable(db);
    const input = { route: 'orders', dedupeKey: 'd', windowSeconds: 60, messages: messages(2), now: T0 };
    const first = await table.store.acceptWebhook(input);
    const before = await table.scan();
    const { client, sent } = tracingClient();

    const second = await table.storeWith(client).acceptWebhook({ ...input, now: at(1000) });

    expect(second).toEqual({ outcome: 'duplicate', ids: first.ids, recovered: 0 });
    // The refusal carries the guard (ALL_OLD): no read of it.
    expect(sent).toEqual(['TransactWriteItems DEDUPE MSG MSG', 'GetItem MSG', 'GetItem MSG']);
    expect(await table.scan()).toEqual(before);
  });

  it('answers a second delivery within the window with the earlier ids and writes nothing', async () => {
    const { store, scan } = await newTable(db);
    const input = { route: 'orders', dedupeKey: 'd', windowSeconds: 60, messages: messages(2) };
    const first = await store.acceptWebhook({ ...input, now: T0 });
    const before = await scan();

    const second = await store.acceptWebhook({ ...input, now: at(59_999) });

    expect(second).toEqual({ outcome: 'duplicate', ids: first.ids, recovered: 0 });
    expect(await scan()).toEqual(before);
  });

  it('accepts the same key again once the window has ended, although TTL has not removed the guard', async () => {
    const { store, scan } = await newTable(db);
    const input = { route: 'orders', dedupeKey: 'd', windowSeconds: 60, messages: messages(1) };
    const first = await store.acceptWebhook({ ...input, now: T0 });

    const again = await store.acceptWebhook({ ...input, now: at(60_000) });

    expect(again.outcome).toBe('accepted');
    expect(again.ids[0]).not.toBe(first.ids[0]);
    expect(kinds(await scan(), 'message')).toHaveLength(2);
    // And the new guard is the one that dedupes from now on.
    const third = await store.acceptWebhook({ ...input, now: at(61_000) });
    expect(third).toEqual({ outcome: 'duplicate', ids: again.ids, recovered: 0 });
  });

  it('keeps routes apart: the same dedupe key on another route is another webhook', async () => {
    const { store } = await newTable(db);
    const a = await store.acceptWebhook({ route: 'a', dedupeKey: 'k', windowSeconds: 60, messages: messages(1) });
    const b = await store.acceptWebhook({ route: 'b', dedupeKey: 'k', windowSeconds: 60, messages: messages(1) });
    expect([a.outcome, b.outcome]).toEqual(['accepted', 'accepted']);
  });

  it('accepts exactly one of 20 concurrent deliveries of the same key, and all report its ids', async () => {
    const { store, scan } = await newTable(db);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        store.acceptWebhook({ route: 'orders', dedupeKey: 'same', windowSeconds: 60, messages: messages(3), now: T0 }),
      ),
    );

    const accepted = results.filter((result) => result.outcome === 'accepted');
    expect(accepted).toHaveLength(1);
    const ids = accepted[0]?.ids;
    for (const result of results) expect(result.ids).toEqual(ids);
    const records = kinds(await scan(), 'message');
    expect(records.map((item) => item.id?.S).sort()).toEqual([...(ids ?? [])].sort());
  });

  it('records DROPPED messages with their reason, alongside pending ones', async () => {
    const { store } = await newTable(db);
    const result = await store.acceptWebhook({
      route: 'orders',
      dedupeKey: 'd',
      windowSeconds: 60,
      messages: [message({ index: 0 }), message({ index: 1, to: [], state: 'DROPPED', reason: 'no valid recipient' })],
    });
    const [pending, dropped] = await Promise.all(result.ids.map((id) => store.getMessage(id)));
    expect(pending?.state).toBe('PENDING');
    expect(dropped).toMatchObject({ state: 'DROPPED', reason: 'no valid recipient', to: [] });
    // A dropped record is final: no sender can claim it.
    expect(await store.claimMessage(result.ids[1] ?? '')).toBeUndefined();
  });

  it(`accepts ${MAX_RECORDS_PER_WEBHOOK} messages and refuses one more before writing anything`, async () => {
    const { store, scan } = await newTable(db);
    const many = await store.acceptWebhook({
      route: 'r',
      dedupeKey: 'max',
      windowSeconds: 60,
      messages: messages(MAX_RECORDS_PER_WEBHOOK),
    });
    expect(many.ids).toHaveLength(MAX_RECORDS_PER_WEBHOOK);

    const tooMany = store.acceptWebhook({
      route: 'r',
      dedupeKey: 'over',
      windowSeconds: 60,
      messages: messages(MAX_RECORDS_PER_WEBHOOK + 1),
    });
    await expect(tooMany).rejects.toThrow(
      new StoreError(
        `one webhook may record at most ${MAX_RECORDS_PER_WEBHOOK} messages, got ${MAX_RECORDS_PER_WEBHOOK + 1}`,
      ),
    );
    expect(kinds(await scan(), 'dedupe')).toHaveLength(1);
  });

  it.each([
    ['no messages', { messages: [] }],
    ['a recipient that is not 255 + 9 digits', { messages: [message({ to: ['0712345678'] })] }],
    ['a pending message without recipients', { messages: [message({ to: [] })] }],
    ['a dropped message without a reason', { messages: [message({ state: 'DROPPED' })] }],
    ['a message created in another state', { messages: [message({ state: 'SENT' as 'PENDING' })] }],
    ['a route containing #', { route: 'a#b' }],
    ['a fractional window', { windowSeconds: 1.5 }],
  ])('refuses %s without writing', async (_, override) => {
    const { store, scan } = await newTable(db);
    await expect(
      store.acceptWebhook({ route: 'r', dedupeKey: 'k', windowSeconds: 60, messages: [message()], ...override }),
    ).rejects.toBeInstanceOf(StoreError);
    expect(await scan()).toEqual([]);
  });

  it('with a window of 0 never dedupes', async () => {
    const { store } = await newTable(db);
    const input = { route: 'r', dedupeKey: 'k', windowSeconds: 0, messages: [message()], now: T0 };
    const results: AcceptResult[] = [await store.acceptWebhook(input), await store.acceptWebhook(input)];
    expect(results.map((result) => result.outcome)).toEqual(['accepted', 'accepted']);
  });

  describe('an accept that died after placing its guard (a kill of the local store mid-transaction, or written before transactions)', () => {
    const guardIds = async (table: {
      rawItem: (pk: string, sk: string) => Promise<Record<string, { L?: { S?: string }[] }> | undefined>;
    }) => (await table.rawItem('DEDUPE#orders#d', 'DEDUPE'))?.messageIds?.L?.map((id) => id.S ?? '') ?? [];

    it('is completed by the redelivery, under the ids the guard holds, once', async () => {
      const table = await newTable(db);
      const input = { route: 'orders', dedupeKey: 'd', windowSeconds: 300, messages: messages(2), now: T0 };
      const crashing = tracingClient({ fails: () => true });
      await expect(table.storeWith(crashing.client).acceptWebhook(input)).rejects.toThrow('simulated crash');
      expect(kinds(await table.scan(), 'message')).toEqual([]);
      const ids = await guardIds(table);
      expect(ids).toHaveLength(2);

      const redelivery = await table.store.acceptWebhook({ ...input, now: at(30_000) });

      expect(redelivery).toEqual({ outcome: 'duplicate', ids, recovered: 2 });
      const records = await Promise.all(redelivery.ids.map((id) => table.store.getMessage(id)));
      expect(records.map((record) => [record?.state, record?.text])).toEqual([
        ['PENDING', 'message 0'],
        ['PENDING', 'message 1'],
      ]);

      const third = await table.store.acceptWebhook({ ...input, now: at(31_000) });
      expect(third).toEqual({ outcome: 'duplicate', ids, recovered: 0 });
      expect(kinds(await table.scan(), 'message')).toHaveLength(2);
    });

    it('when one message write failed, the redelivery writes that one only and leaves the others as they are', async () => {
      const table = await newTable(db);
      const input = { route: 'orders', dedupeKey: 'd', windowSeconds: 300, messages: messages(3), now: T0 };
      const crashing = tracingClient({ fails: (text) => text === 'message 1' });
      await expect(table.storeWith(crashing.client).acceptWebhook(input)).rejects.toThrow('simulated crash');
      const ids = await guardIds(table);
      const [first, , last] = await Promise.all(ids.map((id) => table.store.getMessage(id)));
      expect([first?.text, last?.text]).toEqual(['message 0', 'message 2']);
      // The sender may already have claimed a record that was written: the redelivery must not touch it.
      await table.store.claimMessage(ids[0] ?? '', { now: at(1000) });
      const { client, sent } = tracingClient();

      const redelivery = await table.storeWith(client).acceptWebhook({ ...input, now: at(30_000) });

      expect(redelivery).toEqual({ outcome: 'duplicate', ids, recovered: 1 });
      expect(sent.filter((command) => command === 'PutItem MSG')).toHaveLength(1);
      const records = await Promise.all(ids.map((id) => table.store.getMessage(id)));
      expect(records.map((record) => [record?.id, record?.state, record?.text, record?.createdAt])).toEqual([
        [ids[0], 'SENDING', 'message 0', T0.toISOString()],
        [ids[1], 'PENDING', 'message 1', at(30_000).toISOString()],
        [ids[2], 'PENDING', 'message 2', T0.toISOString()],
      ]);
      expect(kinds(await table.scan(), 'message')).toHaveLength(3);
    });

    it('writes each missing record once when many redeliveries race', async () => {
      const table = await newTable(db);
      const input = { route: 'orders', dedupeKey: 'd', windowSeconds: 300, messages: messages(3), now: T0 };
      await expect(table.storeWith(tracingClient({ fails: () => true }).client).acceptWebhook(input)).rejects.toThrow(
        'simulated crash',
      );

      const results = await Promise.all(Array.from({ length: 10 }, () => table.store.acceptWebhook(input)));

      expect(results.reduce((sum, result) => sum + (result.outcome === 'duplicate' ? result.recovered : 0), 0)).toBe(3);
      expect(kinds(await table.scan(), 'message')).toHaveLength(3);
    });

    it('completes a partly written accept exactly once when many redeliveries race', async () => {
      const table = await newTable(db);
      const input = { route: 'orders', dedupeKey: 'd', windowSeconds: 300, messages: messages(4), now: T0 };
      const crashing = tracingClient({ fails: (text) => text === 'message 1' || text === 'message 3' });
      await expect(table.storeWith(crashing.client).acceptWebhook(input)).rejects.toThrow('simulated crash');
      const ids = await guardIds(table);

      const results = await Promise.all(
        Array.from({ length: 12 }, (_, n) => table.store.acceptWebhook({ ...input, now: at(10_000 + n) })),
      );

      for (const result of results) expect(result).toMatchObject({ outcome: 'duplicate', ids });
      expect(results.reduce((sum, result) => sum + (result.outcome === 'duplicate' ? result.recovered : 0), 0)).toBe(2);
      const records = kinds(await table.scan(), 'message');
      expect(records.map((item) => item.id?.S).sort()).toEqual([...ids].sort());
      expect(records.map((item) => item.text?.S).sort()).toEqual(['message 0', 'message 1', 'message 2', 'message 3']);
    });

    it('is not completed once its records could have expired: a rewritten record would be sent again', async () => {
      const table = await newTable(db);
      // A window longer than the retention: the guard outlives its records.
      const input = {
        route: 'orders',
        dedupeKey: 'd',
        windowSeconds: 3 * 86_400,
        retentionDays: 1,
        messages: messages(1),
        now: T0,
      };
      await expect(table.storeWith(tracingClient({ fails: () => true }).client).acceptWebhook(input)).rejects.toThrow(
        'simulated crash',
      );
      const ids = await guardIds(table);

      const late = await table.store.acceptWebhook({ ...input, now: at(86_400_000) });
      expect(late).toEqual({ outcome: 'duplicate', ids, recovered: 0 });
      expect(kinds(await table.scan(), 'message')).toEqual([]);

      const inTime = await table.store.acceptWebhook({ ...input, now: at(86_399_000) });
      expect(inTime).toEqual({ outcome: 'duplicate', ids, recovered: 1 });
    });
  });
});

describe('acceptWebhook with a replay key (the signed body of a sender whose delivery id is not signed)', () => {
  const accept = (
    store: Awaited<ReturnType<typeof newTable>>['store'],
    dedupeKey: string,
    replayKey: string,
    count = 1,
  ) =>
    store.acceptWebhook({
      route: 'github',
      dedupeKey,
      replayKey,
      windowSeconds: 3600,
      messages: messages(count),
      now: T0,
    });

  it('answers the same body under a fresh delivery id as a duplicate of the first accept', async () => {
    const { store, scan } = await newTable(db);
    const first = await accept(store, 'delivery-1', 'body-a');
    const replay = await accept(store, 'delivery-2', 'body-a');

    expect(replay).toEqual({ outcome: 'duplicate', ids: first.ids, recovered: 0 });
    expect((await scan()).filter((item) => item['kind']?.S === 'message')).toHaveLength(1);
  });

  it("leaves no guard under the replay's own delivery id: a later genuine delivery with that id is accepted", async () => {
    const { store, scan } = await newTable(db);
    const first = await accept(store, 'delivery-100', 'body-a');
    for (const id of ['delivery-101', 'delivery-102', 'delivery-103']) {
      expect(await accept(store, id, 'body-a')).toEqual({ outcome: 'duplicate', ids: first.ids, recovered: 0 });
    }
    const guards = kinds(await scan(), 'dedupe').map((item) => item['pk']?.S);
    expect(guards.sort()).toEqual(['DEDUPE#github#body-a', 'DEDUPE#github#delivery-100']);

    for (const [n, id] of ['delivery-101', 'delivery-102', 'delivery-103'].entries()) {
      const genuine = await accept(store, id, `body-${n}`);
      expect(genuine.outcome).toBe('accepted');
      expect(genuine.ids).not.toEqual(first.ids);
    }
    expect(kinds(await scan(), 'message')).toHaveLength(4);
  });

  it('a replay racing a genuine delivery under the same fresh id never makes the genuine one a duplicate', async () => {
    for (let round = 0; round < 10; round += 1) {
      const { store } = await newTable(db);
      const first = await accept(store, 'delivery-100', 'body-a');
      const [replay, genuine] = await Promise.all([
        accept(store, 'delivery-101', 'body-a'),
        accept(store, 'delivery-101', 'body-b'),
      ]);
      expect(replay).toEqual({ outcome: 'duplicate', ids: first.ids, recovered: 0 });
      expect(genuine.outcome).toBe('accepted');
      expect(await accept(store, 'delivery-101', 'body-b')).toMatchObject({ outcome: 'duplicate', ids: genuine.ids });
    }
  });

  it('keeps a redelivery re-signed with another body a duplicate of its delivery id, and its body too', async () => {
    const { store, scan } = await newTable(db);
    const first = await accept(store, 'delivery-1', 'body-a');
    expect(await accept(store, 'delivery-1', 'body-a2')).toMatchObject({ outcome: 'duplicate', ids: first.ids });
    expect(await accept(store, 'delivery-9', 'body-a2')).toMatchObject({ outcome: 'duplicate', ids: first.ids });
    expect(kinds(await scan(), 'message')).toHaveLength(1);
  });

  it('keeps a genuine redelivery (same id, same body) a duplicate, and two different deliveries apart', async () => {
    const { store } = await newTable(db);
    const first = await accept(store, 'delivery-1', 'body-a');
    expect(await accept(store, 'delivery-1', 'body-a')).toMatchObject({ outcome: 'duplicate', ids: first.ids });
    expect((await accept(store, 'delivery-3', 'body-c')).outcome).toBe('accepted');
  });

  it('asks one transaction of both guards and the records; a replay is refused by it whole and only reads the records', async () => {
    const table = await newTable(db);
    const { client, sent } = tracingClient();
    const traced = table.storeWith(client);
    const first = await accept(traced, 'delivery-1', 'body-a');
    expect(sent).toEqual(['TransactWriteItems DEDUPE DEDUPE MSG']);
    sent.length = 0;

    expect(await accept(traced, 'delivery-2', 'body-a')).toEqual({
      outcome: 'duplicate',
      ids: first.ids,
      recovered: 0,
    });
    expect(sent).toEqual(['TransactWriteItems DEDUPE DEDUPE MSG', 'GetItem MSG']);
    expect(await table.rawItem('DEDUPE#github#delivery-2', 'DEDUPE')).toBeUndefined();
  });

  it('points the guard of a new body under an accepted id at that accept, with one put after the refused transaction', async () => {
    const table = await newTable(db);
    const { client, sent } = tracingClient();
    const first = await accept(table.store, 'delivery-1', 'body-a');

    expect(await accept(table.storeWith(client), 'delivery-1', 'body-a2')).toEqual({
      outcome: 'duplicate',
      ids: first.ids,
      recovered: 0,
    });
    expect(sent).toEqual(['TransactWriteItems DEDUPE DEDUPE MSG', 'PutItem DEDUPE', 'GetItem MSG']);
    const guard = await table.rawItem('DEDUPE#github#body-a2', 'DEDUPE');
    expect([guard?.owner?.S, guard?.deliveryKey?.S]).toEqual([first.ids[0], 'delivery-1']);
    expect(kinds(await table.scan(), 'message')).toHaveLength(1);
  });

  it('lets exactly one of many concurrent replays under different ids through', async () => {
    const { store } = await newTable(db);
    const results = await Promise.all(Array.from({ length: 8 }, (_, n) => accept(store, `delivery-${n}`, 'body-a', 2)));

    const accepted = results.filter((result) => result.outcome === 'accepted');
    expect(accepted).toHaveLength(1);
    for (const result of results) expect(result.ids).toEqual(accepted[0]!.ids);
  });

  it('completes an accept that died between its two guards when the same delivery comes again, not when a replay does', async () => {
    const table = await newTable(db);
    // Only the body's guard was written (the transaction's first put), as a kill right after it leaves it.
    const { client } = tracingClient({ lost: (pk) => pk !== 'DEDUPE#github#body-a' });
    await expect(
      table.storeWith(client).acceptWebhook({
        route: 'github',
        dedupeKey: 'delivery-1',
        replayKey: 'body-a',
        windowSeconds: 3600,
        messages: messages(1),
        now: T0,
      }),
    ).rejects.toThrow('simulated crash');

    const replay = await accept(table.store, 'delivery-2', 'body-a');
    expect(replay).toMatchObject({ outcome: 'duplicate', recovered: 1 });
    expect(await table.rawItem('DEDUPE#github#delivery-2', 'DEDUPE')).toBeUndefined();
    const retry = await accept(table.store, 'delivery-1', 'body-a');
    expect(retry).toEqual({ outcome: 'duplicate', ids: replay.ids, recovered: 0 });
    expect((await table.rawItem('DEDUPE#github#delivery-1', 'DEDUPE'))?.owner?.S).toBe(replay.ids[0]);
    expect(kinds(await table.scan(), 'message')).toHaveLength(1);
  });

  it('completes an accept that died after its guards, when the sender retries the same delivery', async () => {
    const { client } = tracingClient({ fails: (text) => text === 'message 0' });
    const table = await newTable(db);
    const crashing = table.storeWith(client);
    await expect(
      crashing.acceptWebhook({
        route: 'github',
        dedupeKey: 'delivery-1',
        replayKey: 'body-a',
        windowSeconds: 3600,
        messages: messages(1),
        now: T0,
      }),
    ).rejects.toThrow('simulated crash');

    const retry = await accept(table.store, 'delivery-1', 'body-a');
    expect(retry).toMatchObject({ outcome: 'duplicate', recovered: 1 });
    expect(await table.store.getMessage(retry.ids[0]!)).toMatchObject({ state: 'PENDING', text: 'message 0' });
  });
});

describe('recordNotice', () => {
  it("records the relay's own SMS as a PENDING message that says which notice it is, once per key", async () => {
    const { store } = await newTable(db);
    const first = await store.recordNotice({
      kind: 'held-summary',
      route: 'alerts',
      key: 'messages:W#1',
      message: message({ text: 'held' }),
      now: T0,
    });
    const again = await store.recordNotice({
      kind: 'held-summary',
      route: 'alerts',
      key: 'messages:W#1',
      message: message({ text: 'held' }),
      now: T0,
    });
    const other = await store.recordNotice({
      kind: 'low-balance',
      route: '_relay',
      key: T0.toISOString(),
      message: message({ text: 'low' }),
      now: T0,
    });

    expect(first.outcome).toBe('accepted');
    expect(again).toMatchObject({ outcome: 'duplicate', ids: first.ids });
    expect(await store.getMessage(first.ids[0]!)).toMatchObject({
      state: 'PENDING',
      notice: 'held-summary',
      route: 'alerts',
      text: 'held',
    });
    expect(await store.getMessage(other.ids[0]!)).toMatchObject({ notice: 'low-balance', route: '_relay' });
  });

  it('records a handoff SMS once per schedule and shift start, at-least-once, and reads it back as a handoff', async () => {
    const { store } = await newTable(db);
    const handoff = message({
      text: 'You are on call for ops until 2026-12-07 09:00 (Africa/Dar_es_Salaam)',
      delivery: 'at-least-once',
    });
    const key = 'ops:2026-11-30T06:00:00.000Z';
    const runs = await Promise.all(
      [0, 1].map(
        async () => await store.recordNotice({ kind: 'handoff', route: '_relay', key, message: handoff, now: T0 }),
      ),
    );
    const next = await store.recordNotice({
      kind: 'handoff',
      route: '_relay',
      key: 'ops:2026-12-07T06:00:00.000Z',
      message: handoff,
      now: T0,
    });

    expect(runs.map((run) => run.outcome).sort()).toEqual(['accepted', 'duplicate']);
    expect(runs[0]!.ids).toEqual(runs[1]!.ids);
    expect(await store.getMessage(runs[0]!.ids[0]!)).toMatchObject({
      state: 'PENDING',
      notice: 'handoff',
      route: '_relay',
      delivery: 'at-least-once',
    });
    expect(next.outcome).toBe('accepted');
    expect(next.ids).not.toEqual(runs[0]!.ids);
  });
});
