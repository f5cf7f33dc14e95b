import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createStore, type MessageStore, StoreError } from '../../../functions/store';
import { SPEND_WINDOW_MS } from '../../../functions/core/defaults';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { countRequests } from '../../helpers/requests';
import { T0, at, message, newTable, sentRecord } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** T0 is 10:00 UTC, so the hourly window runs 10:00–11:00 and the day 2025-03-01. */
const WINDOW = `W#${T0.getTime() / 1000}`;
const messagesLimit = { max: 5, windowSeconds: 3600 };

describe('reserveLimit: messages per window', () => {
  it('allows exactly max of 20 concurrent reservations in one window, holds the rest', async () => {
    const { store, rawItem } = await newTable(db);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        store.reserveLimit({ route: 'alerts', messages: messagesLimit, now: at(n * 1000) }),
      ),
    );

    expect(results.filter((result) => result.allowed)).toHaveLength(5);
    expect(results.filter((result) => !result.allowed)).toEqual(
      Array(15).fill({ allowed: false, reason: 'messages', window: WINDOW }),
    );
    const item = await rawItem('LIMIT#alerts', WINDOW);
    expect([item?.count?.N, item?.held?.N]).toEqual(['5', '15']);
    expect(item?.windowEndsAt?.N).toBe(String(T0.getTime() / 1000 + 3600));
    expect(item?.expiresAt?.N).toBe(String(T0.getTime() / 1000 + 3600 + 35 * 86_400));
  });

  it('starts afresh in the next window and keeps routes apart', async () => {
    const { store } = await newTable(db);
    const one = { max: 1, windowSeconds: 3600 };
    expect(await store.reserveLimit({ route: 'a', messages: one, now: at(0) })).toEqual({
      allowed: true,
      taken: { route: 'a', messages: WINDOW },
    });
    expect((await store.reserveLimit({ route: 'a', messages: one, now: at(HOUR - 1) })).allowed).toBe(false);
    expect((await store.reserveLimit({ route: 'b', messages: one, now: at(HOUR - 1) })).allowed).toBe(true);
    expect((await store.reserveLimit({ route: 'a', messages: one, now: at(HOUR) })).allowed).toBe(true);
  });

  it('holds everything at max 0', async () => {
    const { store } = await newTable(db);
    expect((await store.reserveLimit({ route: 'a', messages: { max: 0, windowSeconds: 60 } })).allowed).toBe(false);
  });

  it('refuses limits it cannot enforce', async () => {
    const { store } = await newTable(db);
    await expect(store.reserveLimit({ route: 'a', messages: { max: 1, windowSeconds: 0 } })).rejects.toBeInstanceOf(
      StoreError,
    );
    await expect(store.reserveLimit({ route: 'a', credits: { maxPerDay: 10, estimate: -1 } })).rejects.toBeInstanceOf(
      StoreError,
    );
  });
});

describe('reserveLimit: credits per day', () => {
  it('allows estimates up to the daily maximum, exactly, and starts afresh the next UTC day', async () => {
    const { store, rawItem } = await newTable(db);
    const credits = (estimate: number) => ({ maxPerDay: 10, estimate });
    expect((await store.reserveLimit({ route: 'a', credits: credits(4), now: at(0) })).allowed).toBe(true);
    expect((await store.reserveLimit({ route: 'a', credits: credits(6), now: at(1) })).allowed).toBe(true);
    expect(await store.reserveLimit({ route: 'a', credits: credits(1), now: at(2) })).toEqual({
      allowed: false,
      reason: 'credits',
      window: 'D#2025-03-01',
    });
    expect((await store.reserveLimit({ route: 'a', credits: credits(0), now: at(3) })).allowed).toBe(true);
    // 2025-03-02T00:00Z is 14 h after T0.
    expect((await store.reserveLimit({ route: 'a', credits: credits(10), now: at(14 * HOUR) })).allowed).toBe(true);
    expect((await store.reserveLimit({ route: 'a', credits: credits(11), now: at(15 * HOUR) })).allowed).toBe(false);

    const day = await rawItem('LIMIT#a', 'D#2025-03-01');
    expect([day?.credits?.N, day?.held?.N]).toEqual(['10', '1']);
  });

  it('allows at most the daily maximum under concurrency', async () => {
    const { store } = await newTable(db);
    const results = await Promise.all(
      Array.from({ length: 12 }, () => store.reserveLimit({ route: 'a', credits: { maxPerDay: 9, estimate: 2 } })),
    );
    expect(results.filter((result) => result.allowed)).toHaveLength(4);
  });

  it('releaseLimit gives back what a reservation took (count, day and month credits), so a send that never went out does not count', async () => {
    const { store, rawItem } = await newTable(db);
    const month = {
      month: '2025-03',
      startsAt: Date.parse('2025-03-01T00:00:00Z'),
      endsAt: Date.parse('2025-04-01T00:00:00Z'),
    };
    const limits = {
      messages: { max: 1, windowSeconds: 3600 },
      credits: { maxPerDay: 20, estimate: 20 },
      monthCredits: { maxPerMonth: 20, estimate: 20, month },
    };
    const first = await store.reserveLimit({ route: 'a', ...limits, now: at(0) });
    expect(first).toMatchObject({
      allowed: true,
      taken: {
        route: 'a',
        messages: WINDOW,
        day: { window: 'D#2025-03-01', credits: 20 },
        month: { window: 'M#2025-03', credits: 20 },
      },
    });
    expect((await store.reserveLimit({ route: 'a', ...limits, now: at(1) })).allowed).toBe(false);

    await store.releaseLimit(first.allowed ? first.taken : { route: 'a' });
    expect([
      (await rawItem('LIMIT#a', WINDOW))?.count?.N,
      (await rawItem('LIMIT#a', 'D#2025-03-01'))?.credits?.N,
      (await rawItem('LIMIT#a', 'M#2025-03'))?.credits?.N,
    ]).toEqual(['0', '0', '0']);
    expect((await store.reserveLimit({ route: 'a', ...limits, now: at(2) })).allowed).toBe(true);
    // A window whose item is gone is left alone: no item without its TTL is made.
    await store.releaseLimit({ route: 'b', messages: WINDOW, day: { window: 'D#2025-03-01', credits: 5 } });
    expect(await rawItem('LIMIT#b', WINDOW)).toBeUndefined();
  });

  it('gives the message back when the credit limit refuses after the count was taken', async () => {
    const { store, rawItem } = await newTable(db);
    const both = { messages: messagesLimit, credits: { maxPerDay: 3, estimate: 2 } };
    expect((await store.reserveLimit({ route: 'a', ...both, now: at(0) })).allowed).toBe(true);
    expect(await store.reserveLimit({ route: 'a', ...both, now: at(1) })).toMatchObject({
      allowed: false,
      reason: 'credits',
    });

    const window = await rawItem('LIMIT#a', WINDOW);
    expect([window?.count?.N, window?.held]).toEqual(['1', undefined]);
    expect((await rawItem('LIMIT#a', 'D#2025-03-01'))?.held?.N).toBe('1');
  });
});

describe('reserveLimit: credits per month', () => {
  const month = {
    month: '2025-03',
    startsAt: Date.parse('2025-03-01T00:00:00Z'),
    endsAt: Date.parse('2025-04-01T00:00:00Z'),
  };

  it("gives the message and the day's credits back when the month's credits refuse after both were taken", async () => {
    const { store, rawItem } = await newTable(db);
    const limits = {
      messages: messagesLimit,
      credits: { maxPerDay: 100, estimate: 20 },
      monthCredits: { maxPerMonth: 30, estimate: 20, month },
    };
    expect((await store.reserveLimit({ route: 'a', ...limits, now: at(0) })).allowed).toBe(true);
    expect(await store.reserveLimit({ route: 'a', ...limits, now: at(1) })).toMatchObject({
      allowed: false,
      reason: 'month-credits',
    });

    expect([
      (await rawItem('LIMIT#a', WINDOW))?.count?.N,
      (await rawItem('LIMIT#a', 'D#2025-03-01'))?.credits?.N,
      (await rawItem('LIMIT#a', 'M#2025-03'))?.credits?.N,
    ]).toEqual(['1', '20', '20']);
  });

  it("reports the month's use so far and whether its 80 % warning was marked, which the budget warning reads", async () => {
    const { store } = await newTable(db);
    const limits = { monthCredits: { maxPerMonth: 100, estimate: 30, month } };
    const first = await store.reserveLimit({ route: 'a', ...limits, now: at(0) });
    expect(first).toMatchObject({ allowed: true, month: { month: '2025-03', reserved: 30, max: 100, warned: false } });
    const second = await store.reserveLimit({ route: 'a', ...limits, now: at(1) });
    expect(second).toMatchObject({ allowed: true, month: { reserved: 60, warned: false } });

    expect(await store.markBudgetWarned({ route: 'a', window: 'M#2025-03', now: at(2) })).toBe(true);
    expect(await store.markBudgetWarned({ route: 'a', window: 'M#2025-03', now: at(3) })).toBe(false);
    expect(await store.reserveLimit({ route: 'a', ...limits, now: at(4) })).toMatchObject({
      allowed: true,
      month: { reserved: 90, warned: true },
    });
  });
});

describe('held summaries', () => {
  it('lists finished windows with held messages until one sweeper marks the summary sent', async () => {
    const { store } = await newTable(db);
    const one = { max: 1, windowSeconds: 3600 };
    for (let n = 0; n < 4; n += 1) await store.reserveLimit({ route: 'a', messages: one, now: at(n) });
    // A window with no holds never needs a summary.
    await store.reserveLimit({ route: 'a', messages: one, now: at(HOUR) });

    expect(await store.heldSummaryDue({ route: 'a', now: at(HOUR - 1) })).toEqual([]);
    const due = await store.heldSummaryDue({ route: 'a', now: at(HOUR) });
    expect(due).toEqual([
      {
        route: 'a',
        window: WINDOW,
        limit: 'messages',
        startsAt: T0.toISOString(),
        endsAt: at(HOUR).toISOString(),
        held: 3,
      },
    ]);

    const marks = await Promise.all(
      Array.from({ length: 10 }, () => store.markSummarySent({ route: 'a', window: WINDOW, now: at(HOUR + 5000) })),
    );
    expect(marks.filter(Boolean)).toHaveLength(1);
    expect(await store.heldSummaryDue({ route: 'a', now: at(2 * HOUR) })).toEqual([]);
  });

  it('refuses to mark a window that is still open or held nothing', async () => {
    const { store } = await newTable(db);
    await store.reserveLimit({ route: 'a', messages: { max: 0, windowSeconds: 3600 }, now: at(0) });
    expect(await store.markSummarySent({ route: 'a', window: WINDOW, now: at(HOUR - 1) })).toBe(false);
    expect(await store.markSummarySent({ route: 'a', window: 'W#0000000000', now: at(HOUR) })).toBe(false);
    expect(await store.markSummarySent({ route: 'a', window: WINDOW, now: at(HOUR) })).toBe(true);
  });

  it('lists credit days that held messages once the day is over', async () => {
    const { store } = await newTable(db);
    await store.reserveLimit({ route: 'a', credits: { maxPerDay: 1, estimate: 2 }, now: at(0) });
    expect(await store.heldSummaryDue({ route: 'a', now: at(13 * HOUR) })).toEqual([]);
    expect(await store.heldSummaryDue({ route: 'a', now: at(14 * HOUR) })).toEqual([
      {
        route: 'a',
        window: 'D#2025-03-01',
        limit: 'credits',
        startsAt: '2025-03-01T00:00:00.000Z',
        endsAt: '2025-03-02T00:00:00.000Z',
        held: 1,
      },
    ]);
  });
});

type SpendRecord = Parameters<MessageStore['recordSpend']>[0];

/** Counts the spends (at once, as concurrent senders do) and writes them: each resolves once written. */
const spendAll = async (store: MessageStore, ...spends: readonly SpendRecord[]): Promise<void> => {
  const counted = spends.map(async (spend) => await store.recordSpend(spend));
  await store.flushSpend();
  await Promise.all(counted);
};

describe('spend', () => {
  it('sums what all routes spent over the last 7 UTC days, today included, from one counter a day', async () => {
    const { store, rawItem } = await newTable(db);
    await spendAll(store, { deducted: 100, now: at(-7 * DAY) });
    await spendAll(store, { deducted: 1.5, now: at(-6 * DAY) }, { deducted: 2, now: at(-1 * DAY) });
    // Concurrent senders all count.
    await spendAll(store, { deducted: 3, now: at(0) }, { deducted: 4, now: at(1) });
    await spendAll(store, { deducted: 1000, now: at(DAY) });

    expect(await store.spendLastDays(7, T0)).toBe(10.5);
    expect(await store.spendLastDays(1, T0)).toBe(7);
    expect(await rawItem('SPEND', 'D#2025-03-01')).toMatchObject({ credits: { N: '7' }, sends: { N: '2' } });
    // Counted since the first send this table counted.
    expect(await store.recentSpend(7, T0)).toMatchObject({ spent: 10.5, countedSince: at(-7 * DAY).toISOString() });
  });

  it('counts each route apart in the same day counters: the spend per route and day, zeros for days without sends', async () => {
    const { store } = await newTable(db);
    await spendAll(store, { deducted: 2, route: 'alerts', now: at(-DAY) });
    await spendAll(
      store,
      { deducted: 3, route: 'alerts', now: at(0) },
      { deducted: 4.5, route: 'orders-eu', now: at(1) },
      { deducted: 1, now: at(2) },
    );

    const { days, spent } = await store.recentSpend(3, T0);
    expect(spent).toBe(10.5);
    expect(days).toEqual([
      { day: '2025-02-27', credits: 0, routes: {} },
      { day: '2025-02-28', credits: 2, routes: { alerts: 2 } },
      { day: '2025-03-01', credits: 8.5, routes: { alerts: 3, 'orders-eu': 4.5 } },
    ]);
  });

  it("adds the sends one process counts within a window in one update per UTC day, each route's credits in it, written at the flush and not before", async () => {
    const { storeWith, rawItem } = await newTable(db);
    const client = db.newClient();
    const requests = countRequests(client);
    // A window that does not end during the test, however slow the machine: the flush writes it.
    const store = storeWith(client, { spendWindowMs: 600_000 });
    await spendAll(store, { deducted: 1, route: 'alerts', now: at(0) });
    requests.reset();
    // T0 is 10:00 UTC: 14 hours on is the next day. One after another, as a trickle's sends come.
    const counted: Promise<void>[] = [];
    for (let index = 0; index < 6; index += 1) {
      counted.push(store.recordSpend({ deducted: 0.1, route: index % 2 === 0 ? 'alerts' : 'orders', now: at(index) }));
      await Promise.resolve();
    }
    counted.push(
      store.recordSpend({ deducted: 2, now: at(7) }),
      store.recordSpend({ deducted: 5, route: 'alerts', now: at(14 * HOUR) }),
      store.recordSpend({ deducted: 0.2, route: 'orders', now: at(14 * HOUR + 1) }),
    );
    // Counted, not written: the window is open.
    await new Promise((resolve) => setImmediate(resolve));
    expect(requests.byCommand()).toEqual({});
    await store.flushSpend();
    await Promise.all(counted);
    expect(requests.byCommand()).toEqual({ UpdateItem: 2 });
    expect(await rawItem('SPEND', 'D#2025-03-01')).toMatchObject({
      credits: { N: '3.6' },
      sends: { N: '8' },
      'credits:alerts': { N: '1.3' },
      'credits:orders': { N: '0.3' },
    });
    expect(await rawItem('SPEND', 'D#2025-03-02')).toMatchObject({
      credits: { N: '5.2' },
      sends: { N: '2' },
      'credits:alerts': { N: '5' },
      'credits:orders': { N: '0.2' },
    });
  });

  it(`writes a window's spend when the window ends (${SPEND_WINDOW_MS} ms), with no flush`, async () => {
    const { store, rawItem } = await newTable(db);
    const counted = [store.recordSpend({ deducted: 2, now: at(0) }), store.recordSpend({ deducted: 3, now: at(1) })];
    await vi.waitFor(
      async () => expect(await rawItem('SPEND', 'D#2025-03-01')).toMatchObject({ credits: { N: '5' } }),
      {
        timeout: 10 * SPEND_WINDOW_MS,
        interval: 50,
      },
    );
    await Promise.all(counted);
  });

  it('keeps the counter exact over windows, flushes and sends counted while a write is under way: every credit once', async () => {
    const { store, rawItem } = await newTable(db);
    const counted: Promise<void>[] = [];
    let expected = 0;
    for (let round = 0; round < 5; round += 1) {
      for (let index = 0; index < 20; index += 1) {
        counted.push(store.recordSpend({ deducted: 0.25, route: 'alerts', now: at(round * 10 + index) }));
        expected += 0.25;
      }
      // A flush under way while more are counted: they go in the next write, not lost, not twice.
      const flushing = store.flushSpend();
      counted.push(store.recordSpend({ deducted: 1, route: 'orders', now: at(round * 10 + 9) }));
      expected += 1;
      await flushing;
    }
    await store.flushSpend();
    await Promise.all(counted);
    expect(await rawItem('SPEND', 'D#2025-03-01')).toMatchObject({
      credits: { N: String(expected) },
      sends: { N: '105' },
      'credits:alerts': { N: '25' },
      'credits:orders': { N: '5' },
    });
  });

  it("reads what this process counted and has not written yet: a read writes the open window first, other stores' of the table too", async () => {
    const { storeWith } = await newTable(db);
    // Windows that do not end during the test: only the read's flush can write them.
    const store = storeWith(db.client, { spendWindowMs: 600_000 });
    const sweeps = storeWith(db.newClient(), { spendWindowMs: 600_000 });
    const counted = [store.recordSpend({ deducted: 2, now: at(0) }), sweeps.recordSpend({ deducted: 3, now: at(1) })];
    expect(await store.spendLastDays(1, T0)).toBe(5);
    await Promise.all(counted);
  });

  it('counts from the first balance watch run when no send was counted yet (an upgrade of a table with sends)', async () => {
    const { store } = await newTable(db);
    expect(await store.recentSpend(7, T0)).toMatchObject({ spent: 0 });
    expect((await store.recentSpend(7, T0)).countedSince).toBeUndefined();
    await store.startSpendCount(at(-2 * DAY));
    await spendAll(store, { deducted: 5, now: at(-DAY) });
    expect(await store.recentSpend(7, T0)).toMatchObject({ spent: 5, countedSince: at(-2 * DAY).toISOString() });
  });

  it("spendByDay reads a route's sent records the same through the state index and, locally, by a scan", async () => {
    const { store, tableName } = await newTable(db);
    await sentRecord(store, { route: 'a', deducted: 2, now: at(-1 * DAY) });
    await sentRecord(store, { route: 'b', deducted: 3, now: at(0) });
    // A record not sent is no spend.
    await store.acceptWebhook({
      route: 'a',
      dedupeKey: 'pending',
      windowSeconds: 60,
      messages: [message()],
      now: at(0),
    });
    const scanning = createStore({ client: db.client, tableName, clock: () => T0, readIndexes: false });
    expect(await store.spendByDay({ route: 'a', days: 2, now: T0 })).toEqual([
      { day: '2025-02-28', credits: 2 },
      { day: '2025-03-01', credits: 0 },
    ]);
    expect(await scanning.spendByDay({ route: 'a', days: 2, now: T0 })).toEqual(
      await store.spendByDay({ route: 'a', days: 2, now: T0 }),
    );
  });

  it('counts on a credits-limited route the spend its counter holds, written only there', async () => {
    const { store, rawItem } = await newTable(db);
    await store.recordCreditsSpent({ route: 'shop', deducted: 20, now: at(0) });
    expect((await rawItem('LIMIT#shop', 'D#2025-03-01'))?.spent?.N).toBe('20');
    // Only the limit item: the day's total across routes is the sender's to count (recordSpend).
    expect(await rawItem('SPEND', 'D#2025-03-01')).toBeUndefined();
  });

  it('refuses look-backs longer than spend items are kept', async () => {
    const { store } = await newTable(db);
    await expect(store.spendLastDays(36)).rejects.toBeInstanceOf(StoreError);
  });
});

describe('reserveLimit: credits per day against what was actually spent', () => {
  it('holds a reservation once the credits spent that day leave no room, whatever the estimates said', async () => {
    const { store } = await newTable(db);
    const credits = (estimate: number) => ({ maxPerDay: 25, estimate });
    expect((await store.reserveLimit({ route: 'shop', credits: credits(1), now: at(0) })).allowed).toBe(true);
    await store.recordCreditsSpent({ route: 'shop', deducted: 20, now: at(1) });

    // Reserved 1 + 4 = 5 of 25, but 20 were spent: a 10-credit send no longer fits.
    expect((await store.reserveLimit({ route: 'shop', credits: credits(4), now: at(2) })).allowed).toBe(true);
    expect(await store.reserveLimit({ route: 'shop', credits: credits(10), now: at(3) })).toMatchObject({
      allowed: false,
      reason: 'credits',
    });
    expect((await store.reserveLimit({ route: 'shop', credits: credits(5), now: at(4) })).allowed).toBe(true);
    // The next UTC day starts afresh.
    expect((await store.reserveLimit({ route: 'shop', credits: credits(10), now: at(DAY) })).allowed).toBe(true);
  });
});
