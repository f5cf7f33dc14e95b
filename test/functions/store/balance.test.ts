import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { countRequests } from '../../helpers/requests';
import { at, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

describe('balance watch', () => {
  it('starts armed with nothing observed', async () => {
    const { store } = await newTable(db);
    expect(await store.getBalanceState()).toEqual({ armed: true });
  });

  it('lets exactly one of 10 concurrent observers below the threshold send the alert', async () => {
    const { store } = await newTable(db);
    await store.updateBalanceState({ balance: 500, threshold: 100, now: at(0) });

    const results = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        store.updateBalanceState({ balance: 99 - n, threshold: 100, now: at(1000) }),
      ),
    );

    expect(results.filter((result) => result.alert)).toHaveLength(1);
    expect(results.filter((result) => result.stale)).toEqual([]);
    expect(await store.getBalanceState()).toMatchObject({
      armed: false,
      lastCheckedAt: at(1000).toISOString(),
      lastAlertAt: at(1000).toISOString(),
    });
  });

  it('stays quiet while low, re-arms at the threshold, and alerts again on the next drop', async () => {
    const { store } = await newTable(db);
    const observe = async (balance: number, seconds: number) =>
      (await store.updateBalanceState({ balance, threshold: 100, now: at(seconds * 1000) })).alert;

    expect(await observe(50, 1)).toBe(true);
    expect(await observe(40, 2)).toBe(false);
    expect(await store.getBalanceState()).toEqual({
      armed: false,
      alerts: 1,
      lastBalance: 40,
      lastCheckedAt: at(2000).toISOString(),
      lastAlertAt: at(1000).toISOString(),
      // Set by the first observation and never moved: how long the forecast has data for.
      firstObservedAt: at(1000).toISOString(),
    });
    expect(await observe(100, 3)).toBe(false);
    expect((await store.getBalanceState()).armed).toBe(true);
    expect(await observe(99.5, 4)).toBe(true);
    expect((await store.getBalanceState()).alerts).toBe(2);
  });

  it('with disarm: disarms only the crossing whose notice was recorded, and never with disarm false', async () => {
    const { store } = await newTable(db);
    // A caller that saw the alert disarmed records no notice: it never disarms, even if re-armed since.
    expect(await store.updateBalanceState({ balance: 50, threshold: 100, now: at(1000), disarm: false })).toEqual({
      alert: false,
      stale: false,
    });
    expect(await store.getBalanceState()).toMatchObject({ armed: true, lastBalance: 50 });
    // Two callers recorded the notice of crossing 0: one disarms.
    const both = await Promise.all(
      [0, 0].map((crossing) =>
        store.updateBalanceState({ balance: 40, threshold: 100, now: at(2000), disarm: crossing }),
      ),
    );
    expect(both.map((update) => update.alert).sort()).toEqual([false, true]);
    await store.updateBalanceState({ balance: 500, threshold: 100, now: at(3000) });
    // A slow caller that read crossing 0 cannot disarm crossing 1, whose notice it did not record.
    expect((await store.updateBalanceState({ balance: 30, threshold: 100, now: at(4000), disarm: 0 })).alert).toBe(
      false,
    );
    expect(await store.getBalanceState()).toMatchObject({ armed: true, alerts: 1, lastBalance: 30 });
    expect((await store.updateBalanceState({ balance: 30, threshold: 100, now: at(5000), disarm: 1 })).alert).toBe(
      true,
    );
  });

  it('ignores an observation older than the stored one, so a late report cannot re-arm', async () => {
    const { store } = await newTable(db);
    await store.updateBalanceState({ balance: 50, threshold: 100, now: at(2000) });

    expect(await store.updateBalanceState({ balance: 500, threshold: 100, now: at(1000) })).toEqual({
      alert: false,
      stale: true,
    });
    expect(await store.getBalanceState()).toMatchObject({ armed: false, lastBalance: 50 });
    expect(await store.updateBalanceState({ balance: 10, threshold: 100, now: at(1500) })).toEqual({
      alert: false,
      stale: true,
    });
  });
});

describe('recordPrice', () => {
  it('keeps the last price beside the balance state, for every process to estimate with', async () => {
    const { store } = await newTable(db);
    await store.recordPrice({ creditsPerUnit: 20, now: at(0) });
    await store.updateBalanceState({ balance: 500, threshold: 100, now: at(1000) });
    await store.recordPrice({ creditsPerUnit: 18.5, now: at(2000) });
    expect(await store.getBalanceState()).toEqual({
      armed: true,
      lastBalance: 500,
      lastCheckedAt: at(1000).toISOString(),
      firstObservedAt: at(1000).toISOString(),
      creditsPerUnit: 18.5,
    });
  });

  it('writes the price item only when the price changed, not on every send at the price it knows', async () => {
    const { storeWith } = await newTable(db);
    const client = db.newClient();
    const requests = countRequests(client);
    const store = storeWith(client);
    await store.recordPrice({ creditsPerUnit: 20, now: at(0) });
    await store.recordPrice({ creditsPerUnit: 20, now: at(1000) });
    expect(requests.byCommand()).toEqual({ UpdateItem: 1 });
    await store.recordPrice({ creditsPerUnit: 18.5, now: at(2000) });
    expect(requests.byCommand()).toEqual({ UpdateItem: 2 });
    expect((await store.getBalanceState()).creditsPerUnit).toBe(18.5);

    // A price read counts as known too; another process's store writes what it has not seen.
    const other = storeWith(db.client);
    await other.recordPrice({ creditsPerUnit: 21, now: at(3000) });
    expect((await store.getBalanceState()).creditsPerUnit).toBe(21);
    requests.reset();
    await store.recordPrice({ creditsPerUnit: 21, now: at(4000) });
    expect(requests.total()).toBe(0);
    await store.recordPrice({ creditsPerUnit: 18.5, now: at(5000) });
    expect(requests.byCommand()).toEqual({ UpdateItem: 1 });
    expect((await other.getBalanceState()).creditsPerUnit).toBe(18.5);
  });

  it('refuses a price that cannot be one', async () => {
    const { store } = await newTable(db);
    await expect(store.recordPrice({ creditsPerUnit: 0 })).rejects.toThrow(/creditsPerUnit must be a number > 0/);
    await expect(store.recordPrice({ creditsPerUnit: Number.NaN })).rejects.toThrow(/creditsPerUnit/);
  });
});
