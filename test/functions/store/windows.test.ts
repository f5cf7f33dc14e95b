import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessageState, StoreError } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, message, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const MINUTE = 60_000;
const deferred = (until: Date, text = 'Order #42') =>
  message({ text, state: MessageState.Deferred, reason: 'digest window', nextAttemptAt: until });

describe('openDigestWindow', () => {
  it('opens one window for 20 concurrent first messages, all of which join it', async () => {
    const { store } = await newTable(db);
    const ends = await Promise.all(
      Array.from({ length: 20 }, (_, n) => store.openDigestWindow({ route: 'orders', windowSeconds: 600, now: at(n) })),
    );
    expect(new Set(ends.map((end) => end.toISOString())).size).toBe(1);
    // Whichever opened it, it opened at one of their times, and every one of them joined it.
    expect(ends[0]!.getTime()).toBeGreaterThanOrEqual(at(10 * MINUTE).getTime());
    expect(ends[0]!.getTime()).toBeLessThan(at(10 * MINUTE + 20).getTime());
  });

  it('opens the next window once the last one has closed; a store in another process sees the same window', async () => {
    const { store, storeWith } = await newTable(db);
    expect(await store.openDigestWindow({ route: 'orders', windowSeconds: 600, now: T0 })).toEqual(at(10 * MINUTE));
    // A "restart": a new store on the same table.
    const restarted = storeWith(db.client);
    expect(await restarted.openDigestWindow({ route: 'orders', windowSeconds: 600, now: at(9 * MINUTE) })).toEqual(
      at(10 * MINUTE),
    );
    expect(await restarted.openDigestWindow({ route: 'orders', windowSeconds: 600, now: at(10 * MINUTE) })).toEqual(
      at(20 * MINUTE),
    );
    // Another route has its own window.
    expect(await store.openDigestWindow({ route: 'alerts', windowSeconds: 60, now: at(10 * MINUTE) })).toEqual(
      at(11 * MINUTE),
    );
  });

  it('refuses a window that is not a whole number of seconds above 0', async () => {
    const { store } = await newTable(db);
    await expect(store.openDigestWindow({ route: 'orders', windowSeconds: 0 })).rejects.toThrow(StoreError);
  });
});

describe('DEFERRED records', () => {
  it('are created with the end of their window, listed once it has passed, and moved to DIGESTED once', async () => {
    const { store } = await newTable(db);
    const until = at(10 * MINUTE);
    const { ids } = await store.acceptWebhook({
      route: 'orders',
      dedupeKey: 'a',
      windowSeconds: 60,
      now: T0,
      messages: [deferred(until, 'one')],
    });
    const { ids: other } = await store.acceptWebhook({
      route: 'alerts',
      dedupeKey: 'b',
      windowSeconds: 60,
      now: T0,
      messages: [deferred(until, 'two')],
    });
    expect(await store.getMessage(ids[0]!)).toMatchObject({
      state: MessageState.Deferred,
      nextAttemptAt: until.toISOString(),
      history: [{ state: MessageState.Deferred }],
    });

    expect(await store.findDueDeferred({ route: 'orders', now: at(10 * MINUTE - 1), limit: 10 })).toEqual([]);
    const due = await store.findDueDeferred({ route: 'orders', now: until, limit: 10 });
    expect(due.map((record) => record.id)).toEqual(ids);

    const marked = await Promise.all([
      store.markDigested(ids[0]!, { digestId: 'D1', until: until.toISOString(), now: until }),
      store.markDigested(ids[0]!, { digestId: 'D2', until: until.toISOString(), now: until }),
    ]);
    expect(marked.filter((record) => record !== undefined)).toHaveLength(1);
    const record = await store.getMessage(ids[0]!);
    expect(record).toMatchObject({ state: MessageState.Digested });
    expect(record?.nextAttemptAt).toBeUndefined();
    expect(await store.findDueDeferred({ route: 'orders', now: until, limit: 10 })).toEqual([]);
    expect((await store.findDueDeferred({ route: 'alerts', now: until, limit: 10 })).map((r) => r.id)).toEqual(other);
  });

  it('refuses a DEFERRED record without the end of its window', async () => {
    const { store } = await newTable(db);
    await expect(
      store.acceptWebhook({
        route: 'orders',
        dedupeKey: 'a',
        windowSeconds: 60,
        messages: [message({ state: MessageState.Deferred, reason: 'quiet' })],
      }),
    ).rejects.toThrow('a deferred message needs a reason and the end of its window');
  });

  it('moves a record to another window only from the window it is in', async () => {
    const { store } = await newTable(db);
    const until = at(MINUTE).toISOString();
    const { ids } = await store.acceptWebhook({
      route: 'orders',
      dedupeKey: 'a',
      windowSeconds: 60,
      now: T0,
      messages: [deferred(at(MINUTE))],
    });
    const next = at(MINUTE + 1).toISOString();
    expect(
      await Promise.all([
        store.moveToWindow(ids[0]!, { from: until, to: next }),
        store.moveToWindow(ids[0]!, { from: until, to: next }),
      ]),
    ).toEqual(expect.arrayContaining([true, false]));
    expect((await store.getMessage(ids[0]!))?.nextAttemptAt).toBe(next);
  });

  it('drops a record of a muted route once, with the reason, only from the window it is in', async () => {
    const { store } = await newTable(db);
    const until = at(MINUTE);
    const { ids } = await store.acceptWebhook({
      route: 'orders',
      dedupeKey: 'a',
      windowSeconds: 60,
      now: T0,
      messages: [deferred(until, 'one'), deferred(until, 'two')],
    });
    const reason = 'muted until 14:30: db upgrade';
    // Another window's drop leaves it alone; of two racing sweepers one drops it.
    expect(
      await store.dropDeferred(ids[1]!, { until: at(2 * MINUTE).toISOString(), reason, now: until }),
    ).toBeUndefined();
    const dropped = await Promise.all([
      store.dropDeferred(ids[0]!, { until: until.toISOString(), reason, now: until }),
      store.dropDeferred(ids[0]!, { until: until.toISOString(), reason, now: until }),
    ]);
    expect(dropped.filter((record) => record !== undefined)).toHaveLength(1);
    const record = await store.getMessage(ids[0]!);
    expect(record).toMatchObject({
      state: MessageState.Dropped,
      reason,
      history: [{ state: MessageState.Deferred }, { state: MessageState.Dropped, reason }],
    });
    expect(record?.nextAttemptAt).toBeUndefined();
    expect((await store.findDueDeferred({ route: 'orders', now: until, limit: 10 })).map((due) => due.id)).toEqual([
      ids[1],
    ]);
  });
});
