import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { countRequests } from '../../helpers/requests';
import { at, newTable, sentRecord } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** T0 is 2025-03-01 10:00 UTC. */
describe('limitUsage', () => {
  it('reads zeros for a route with nothing reserved or spent, and the window only when its length is given', async () => {
    const { store, scan } = await newTable(db);
    const day = { reserved: 0, spent: 0, held: 0, day: '2025-03-01' };

    expect(await store.limitUsage({ route: 'alerts', now: at(0) })).toEqual({ day });
    expect(await store.limitUsage({ route: 'alerts', messagesWindowSeconds: 3600, now: at(30 * 60_000) })).toEqual({
      messages: {
        used: 0,
        held: 0,
        windowStartsAt: '2025-03-01T10:00:00.000Z',
        windowEndsAt: '2025-03-01T11:00:00.000Z',
      },
      day,
    });
    expect(await scan()).toEqual([]);
  });

  it('reads the messages reserved and held in the current window and the credits reserved, spent and held today', async () => {
    const { store } = await newTable(db);
    for (let n = 0; n < 3; n += 1)
      await store.reserveLimit({ route: 'alerts', messages: { max: 2, windowSeconds: 3600 }, now: at(n * 1000) });
    for (let n = 0; n < 3; n += 1)
      await store.reserveLimit({ route: 'alerts', credits: { maxPerDay: 10, estimate: 4 }, now: at(n * 1000) });
    await sentRecord(store, { route: 'alerts', deducted: 3, now: at(5000) });
    await sentRecord(store, { route: 'alerts', deducted: 4.5, now: at(6000) });

    expect(await store.limitUsage({ route: 'alerts', messagesWindowSeconds: 3600, now: at(10_000) })).toEqual({
      messages: {
        used: 2,
        held: 1,
        windowStartsAt: '2025-03-01T10:00:00.000Z',
        windowEndsAt: '2025-03-01T11:00:00.000Z',
      },
      day: { reserved: 8, spent: 7.5, held: 1, day: '2025-03-01' },
    });
    // The next window and the next day start from zero.
    expect(
      (await store.limitUsage({ route: 'alerts', messagesWindowSeconds: 3600, now: at(HOUR) })).messages,
    ).toMatchObject({ used: 0, held: 0, windowStartsAt: '2025-03-01T11:00:00.000Z' });
    expect((await store.limitUsage({ route: 'alerts', now: at(14 * HOUR) })).day).toEqual({
      reserved: 0,
      spent: 0,
      held: 0,
      day: '2025-03-02',
    });
  });

  it('counts the spend of a route without limits', async () => {
    const { store } = await newTable(db);
    await sentRecord(store, { route: 'orders', deducted: 2, now: at(0) });
    expect(await store.limitUsage({ route: 'orders', now: at(1000) })).toEqual({
      day: { reserved: 0, spent: 2, held: 0, day: '2025-03-01' },
    });
  });

  it("adds up today's spend from the summaries a caller holds, the same figure without scanning the records again", async () => {
    const { store, storeWith } = await newTable(db);
    await sentRecord(store, { route: 'orders', deducted: 2, now: at(0) });
    await sentRecord(store, { route: 'orders', deducted: 3, now: at(1000) });
    await sentRecord(store, { route: 'alerts', deducted: 7, now: at(1000) });
    const changedToday = await store.summarizeRecords({ since: at(-DAY) });

    const client = db.newClient();
    const requests = countRequests(client);
    const counted = storeWith(client);
    const read = await counted.limitUsage({ route: 'orders', now: at(2000) });
    expect(read.day.spent).toBe(5);
    requests.reset();
    const withSummaries = await counted.limitUsage({ route: 'orders', now: at(2000), changedToday });
    expect(withSummaries).toEqual(read);
    // Only the day's limit item is read: the sent records are not queried or scanned again.
    expect(requests.byCommand()).toEqual({ GetItem: 1 });
  });

  it('refuses a window it could not have keyed', async () => {
    const { store } = await newTable(db);
    for (const seconds of [0, 1.5, -60]) {
      await expect(store.limitUsage({ route: 'alerts', messagesWindowSeconds: seconds })).rejects.toBeInstanceOf(
        StoreError,
      );
    }
  });
});

describe('spendByDay', () => {
  it('gives one entry per UTC day, oldest first, 0 for days without sends, for that route only', async () => {
    const { store } = await newTable(db);
    await sentRecord(store, { route: 'a', deducted: 9, now: at(-5 * DAY) });
    await sentRecord(store, { route: 'a', deducted: 4, now: at(-2 * DAY) });
    await sentRecord(store, { route: 'a', deducted: 2, now: at(0) });
    await sentRecord(store, { route: 'a', deducted: 3, now: at(HOUR) });
    await sentRecord(store, { route: 'b', deducted: 100, now: at(0) });
    await sentRecord(store, { route: 'a', deducted: 1, now: at(DAY) });
    // A window item in the same partition is not a day.
    await store.reserveLimit({ route: 'a', messages: { max: 5, windowSeconds: 60 }, now: at(0) });

    expect(await store.spendByDay({ route: 'a', days: 4, now: at(DAY) })).toEqual([
      { day: '2025-02-27', credits: 4 },
      { day: '2025-02-28', credits: 0 },
      { day: '2025-03-01', credits: 5 },
      { day: '2025-03-02', credits: 1 },
    ]);
    expect(await store.spendByDay({ route: 'a', days: 1, now: at(DAY) })).toEqual([{ day: '2025-03-02', credits: 1 }]);
    expect(await store.spendByDay({ route: 'c', days: 2, now: at(0) })).toEqual([
      { day: '2025-02-28', credits: 0 },
      { day: '2025-03-01', credits: 0 },
    ]);
  });

  it('does not count credits reserved but not spent', async () => {
    const { store } = await newTable(db);
    await store.reserveLimit({ route: 'a', credits: { maxPerDay: 10, estimate: 4 }, now: at(0) });
    expect(await store.spendByDay({ route: 'a', days: 1, now: at(0) })).toEqual([{ day: '2025-03-01', credits: 0 }]);
  });

  it('looks back at most the 35 days the items are kept', async () => {
    const { store } = await newTable(db);
    expect(await store.spendByDay({ route: 'a', days: 35, now: at(0) })).toHaveLength(35);
    for (const days of [0, 36, 1.5]) {
      await expect(store.spendByDay({ route: 'a', days, now: at(0) })).rejects.toBeInstanceOf(StoreError);
    }
  });
});
