import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, kinds, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const DAY_MS = 86_400_000;

describe('balance readings', () => {
  it('lists readings oldest first whatever the order they were recorded in, keeping two of the same millisecond', async () => {
    const { store } = await newTable(db);
    await store.recordBalanceReading({ balance: 70, currency: 'TZS', now: at(3000) });
    await store.recordBalanceReading({ balance: 90, currency: 'TZS', now: at(1000) });
    await store.recordBalanceReading({ balance: 80, now: at(2000) });
    await store.recordBalanceReading({ balance: 80, now: at(2000) });

    expect(await store.listBalanceReadings({ since: T0, now: at(5000) })).toEqual([
      { at: at(1000).toISOString(), balance: 90, currency: 'TZS' },
      { at: at(2000).toISOString(), balance: 80 },
      { at: at(2000).toISOString(), balance: 80 },
      { at: at(3000).toISOString(), balance: 70, currency: 'TZS' },
    ]);
  });

  it('returns the readings from since to now, both included', async () => {
    const { store } = await newTable(db);
    for (const [offset, balance] of [
      [1000, 10],
      [2000, 20],
      [3000, 30],
      [4000, 40],
    ] as const) {
      await store.recordBalanceReading({ balance, now: at(offset) });
    }
    const balances = async (since: number, now: number) =>
      (await store.listBalanceReadings({ since: at(since), now: at(now) })).map((reading) => reading.balance);

    expect(await balances(2000, 3000)).toEqual([20, 30]);
    expect(await balances(2001, 10_000)).toEqual([30, 40]);
    expect(await balances(5000, 10_000)).toEqual([]);
  });

  it('keeps each reading 35 days, after which it is no longer listed even before TTL deletes it', async () => {
    const { store, scan } = await newTable(db);
    await store.recordBalanceReading({ balance: 12.5, currency: 'TZS', now: T0 });

    const [item, ...more] = kinds(await scan(), 'balance-reading');
    expect(more).toHaveLength(0);
    expect(item).toMatchObject({
      pk: { S: 'BALANCE#READINGS' },
      balance: { N: '12.5' },
      expiresAt: { N: String(T0.getTime() / 1000 + 35 * 86_400) },
    });
    expect(item?.sk?.S).toMatch(new RegExp(`^${T0.toISOString()}#[0-9a-f]{8}$`));
    expect(await store.listBalanceReadings({ since: T0, now: at(35 * DAY_MS - 1000) })).toHaveLength(1);
    expect(await store.listBalanceReadings({ since: T0, now: at(35 * DAY_MS) })).toEqual([]);
  });

  it('refuses a balance that is not a finite number', async () => {
    const { store, scan } = await newTable(db);
    await expect(store.recordBalanceReading({ balance: Number.NaN })).rejects.toBeInstanceOf(StoreError);
    expect(await scan()).toEqual([]);
  });
});
