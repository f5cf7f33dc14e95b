import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

describe('projected balance (balance.reserve under concurrency)', () => {
  it('reserves nothing before a balance was observed, and a settlement does not invent one', async () => {
    const { store } = await newTable(db);
    expect(await store.reserveCredit({ estimate: 20, floor: 200 })).toEqual({ reserved: false, projected: undefined });
    expect(await store.reserveCredit({ estimate: 20 })).toEqual({ reserved: false, projected: undefined });
    await store.settleCredit({ estimate: 20, charged: 20 });
    expect((await store.getBalanceState()).projected).toBeUndefined();
  });

  it('lets exactly as many of 30 concurrent senders through as the balance pays above the reserve', async () => {
    const { store } = await newTable(db);
    expect(await store.rebaseCredit({ balance: 400, basis: 0 })).toBe(true);

    const taken = await Promise.all(Array.from({ length: 30 }, () => store.reserveCredit({ estimate: 20, floor: 200 })));

    expect(taken.filter((result) => result.reserved)).toHaveLength(10);
    expect(taken.filter((result) => !result.reserved).every((result) => result.projected === 200)).toBe(true);
    expect(await store.getBalanceState()).toMatchObject({ projected: 200 });
  });

  it('takes a critical send whatever is left, so the normal ones see it', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 210, basis: 0 });
    expect(await store.reserveCredit({ estimate: 20 })).toMatchObject({ reserved: true, projected: 190 });
    expect(await store.reserveCredit({ estimate: 20, floor: 0 })).toMatchObject({ reserved: true, projected: 170 });
    expect(await store.reserveCredit({ estimate: 20, floor: 200 })).toEqual({ reserved: false, projected: 170 });
  });

  it('corrects the estimate with the actual cost, gives back what certainly was not sent, keeps what may have been', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 1_000, basis: 0 });
    for (let n = 0; n < 3; n += 1) await store.reserveCredit({ estimate: 20, floor: 200 });
    expect((await store.getBalanceState()).projected).toBe(940);

    await store.settleCredit({ estimate: 20, charged: 40 }); // two segments after all
    await store.settleCredit({ estimate: 20, charged: 0 }); // 401, a refused request: not sent
    await store.settleCredit({ estimate: 20, charged: 20 }); // a time-out: may have been sent

    expect(await store.getBalanceState()).toMatchObject({ projected: 940, charged: 60 });
  });

  it('rebases on a balance read: sends settled since the read began are subtracted, sends in flight keep their estimate', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 400, basis: 0 });
    await store.reserveCredit({ estimate: 20, floor: 200 }); // A
    await store.reserveCredit({ estimate: 20, floor: 200 }); // B
    await store.reserveCredit({ estimate: 20, floor: 200 }); // C, still in flight at the end
    // A balance read begins (basis read first); the service has charged nothing yet and says 400.
    const before = (await store.getBalanceState()).charged ?? 0;
    // A and B are charged and settled before the read's answer is written.
    await store.settleCredit({ estimate: 20, charged: 20 });
    await store.settleCredit({ estimate: 20, charged: 20 });
    expect(await store.rebaseCredit({ balance: 400, basis: before })).toBe(true);
    // 400 - A - B - C in flight: the read could not show A and B, and they are not forgotten.
    expect((await store.getBalanceState()).projected).toBe(340);

    // A read that began later knows more; one that began earlier is then ignored.
    const later = (await store.getBalanceState()).charged ?? 0;
    expect(await store.rebaseCredit({ balance: 5_360, basis: later })).toBe(true); // a top-up of 5,000
    expect((await store.getBalanceState()).projected).toBe(5_340);
    expect(await store.rebaseCredit({ balance: 360, basis: before })).toBe(false);
    expect((await store.getBalanceState()).projected).toBe(5_340);
  });

  it('errs on the side of parking when a send the read already shows is settled after the read began', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 400, basis: 0 });
    await store.reserveCredit({ estimate: 20, floor: 200 });
    const before = (await store.getBalanceState()).charged ?? 0;
    // Charged at the service before the read answered (380), settled after the read began.
    await store.settleCredit({ estimate: 20, charged: 20 });
    await store.rebaseCredit({ balance: 380, basis: before });
    expect((await store.getBalanceState()).projected).toBe(360);
    // The next read sets it right.
    await store.rebaseCredit({ balance: 380, basis: (await store.getBalanceState()).charged ?? 0 });
    expect((await store.getBalanceState()).projected).toBe(380);
  });

  it('lowers, never raises, the projected balance to a send\'s remainingBalance', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 1_000, basis: 0 });
    await store.reserveCredit({ estimate: 20, floor: 200 });
    await store.settleCredit({ estimate: 20, charged: 20 });
    expect(await store.capCredit({ balance: 980 })).toBe(false);
    expect(await store.capCredit({ balance: 5_000 })).toBe(false); // a top-up is only taken from a read
    expect(await store.capCredit({ balance: 480 })).toBe(true); // 500 spent from the dashboard
    expect((await store.getBalanceState()).projected).toBe(480);
  });

  it('refuses amounts that are not finite numbers, changing nothing', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 400, basis: 0 });
    await expect(store.reserveCredit({ estimate: Number.NaN, floor: 200 })).rejects.toThrow(InvalidArgumentError);
    await expect(store.reserveCredit({ estimate: -5 })).rejects.toThrow(InvalidArgumentError);
    await expect(store.settleCredit({ estimate: 20, charged: Number.POSITIVE_INFINITY })).rejects.toThrow(InvalidArgumentError);
    await expect(store.rebaseCredit({ balance: Number.NaN, basis: 0 })).rejects.toThrow(InvalidArgumentError);
    expect((await store.getBalanceState()).projected).toBe(400);
  });
});
