import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidMessageError,
  MAX_MESSAGES_PER_WEBHOOK,
  TooManyMessagesError,
  type AcceptResult,
} from '../../../functions/store';
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
    });

    const guard = await rawItem('DEDUPE#orders#delivery-1', 'DEDUPE');
    expect(guard?.messageIds?.L?.map((id) => id.S)).toEqual(result.ids);
    expect(guard?.status?.S).toBe('ACCEPTED');
    expect(guard?.windowEndsAt?.N).toBe(String(T0_SECONDS + 3600));
    expect(guard?.expiresAt?.N).toBe(String(T0_SECONDS + 3600));
    expect(kinds(await scan(), 'message')).toHaveLength(3);
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

  it(`accepts ${MAX_MESSAGES_PER_WEBHOOK} messages and refuses one more before writing anything`, async () => {
    const { store, scan } = await newTable(db);
    const many = await store.acceptWebhook({
      route: 'r',
      dedupeKey: 'max',
      windowSeconds: 60,
      messages: messages(MAX_MESSAGES_PER_WEBHOOK),
    });
    expect(many.ids).toHaveLength(MAX_MESSAGES_PER_WEBHOOK);

    const tooMany = store.acceptWebhook({
      route: 'r',
      dedupeKey: 'over',
      windowSeconds: 60,
      messages: messages(MAX_MESSAGES_PER_WEBHOOK + 1),
    });
    await expect(tooMany).rejects.toBeInstanceOf(TooManyMessagesError);
    await expect(tooMany).rejects.toMatchObject({ count: 100, max: 99 });
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
    ).rejects.toBeInstanceOf(InvalidMessageError);
    expect(await scan()).toEqual([]);
  });

  it('with a window of 0 never dedupes', async () => {
    const { store } = await newTable(db);
    const input = { route: 'r', dedupeKey: 'k', windowSeconds: 0, messages: [message()], now: T0 };
    const results: AcceptResult[] = [await store.acceptWebhook(input), await store.acceptWebhook(input)];
    expect(results.map((result) => result.outcome)).toEqual(['accepted', 'accepted']);
  });

  describe('an accept that died after placing its guard', () => {
    /** A client on the same server whose message puts fail, as if the Lambda died right then. */
    const crashingClient = () => {
      const client = db.newClient();
      client.middlewareStack.add(
        (next) => async (args) => {
          const input = args.input;
          if ('Item' in input && input.Item?.kind?.S === 'message') throw new Error('simulated crash');
          return await next(args);
        },
        { step: 'initialize', name: 'crashOnMessagePut' },
      );
      return client;
    };

    it('is completed by the redelivery, under the ids the guard holds, once', async () => {
      const table = await newTable(db);
      const input = { route: 'orders', dedupeKey: 'd', windowSeconds: 300, messages: messages(2), now: T0 };
      await expect(table.storeWith(crashingClient()).acceptWebhook(input)).rejects.toThrow('simulated crash');
      const guard = await table.rawItem('DEDUPE#orders#d', 'DEDUPE');
      expect(guard?.status?.S).toBe('ACCEPTING');
      expect(kinds(await table.scan(), 'message')).toEqual([]);

      const redelivery = await table.store.acceptWebhook({ ...input, now: at(30_000) });

      const guardIds = guard?.messageIds?.L?.map((id) => id.S);
      expect(redelivery).toEqual({ outcome: 'duplicate', ids: guardIds, recovered: 2 });
      const records = await Promise.all(redelivery.ids.map((id) => table.store.getMessage(id)));
      expect(records.map((record) => [record?.state, record?.text])).toEqual([
        ['PENDING', 'message 0'],
        ['PENDING', 'message 1'],
      ]);
      expect((await table.rawItem('DEDUPE#orders#d', 'DEDUPE'))?.status?.S).toBe('ACCEPTED');

      const third = await table.store.acceptWebhook({ ...input, now: at(31_000) });
      expect(third).toEqual({ outcome: 'duplicate', ids: guardIds, recovered: 0 });
      expect(kinds(await table.scan(), 'message')).toHaveLength(2);
    });

    it('writes each missing record once when many redeliveries race', async () => {
      const table = await newTable(db);
      const input = { route: 'orders', dedupeKey: 'd', windowSeconds: 300, messages: messages(3), now: T0 };
      await expect(table.storeWith(crashingClient()).acceptWebhook(input)).rejects.toThrow('simulated crash');

      const results = await Promise.all(Array.from({ length: 10 }, () => table.store.acceptWebhook(input)));

      expect(results.reduce((sum, result) => sum + (result.outcome === 'duplicate' ? result.recovered : 0), 0)).toBe(3);
      expect(kinds(await table.scan(), 'message')).toHaveLength(3);
    });
  });
});
