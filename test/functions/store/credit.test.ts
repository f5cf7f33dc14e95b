import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

/** Claim tokens in the order reservations were asked for; `oldest()` names the first not settled yet. */
let issued: string[] = [];
let settledCount = 0;
const t = (): string => {
  const token = `token-${issued.length}`;
  issued.push(token);
  return token;
};
const oldest = (): string => issued[settledCount++] ?? 'token-none';

beforeEach(() => {
  issued = [];
  settledCount = 0;
});

describe('projected balance (balance.reserve under concurrency)', () => {
  it('reserves nothing before a balance was observed, and a settlement does not invent one', async () => {
    const { store } = await newTable(db);
    expect(await store.reserveCredit({ estimate: 20, floor: 200, token: t() })).toEqual({
      reserved: false,
      projected: undefined,
    });
    expect(await store.reserveCredit({ estimate: 20, token: t() })).toEqual({ reserved: false, projected: undefined });
    await store.settleCredit({ token: oldest(), estimate: 20, charged: 20 });
    expect((await store.getBalanceState()).projected).toBeUndefined();
  });

  it('lets exactly as many of 30 concurrent senders through as the balance pays above the reserve', async () => {
    const { store } = await newTable(db);
    expect(await store.rebaseCredit({ balance: 400, basis: 0 })).toBe(true);

    const taken = await Promise.all(
      Array.from({ length: 30 }, () => store.reserveCredit({ estimate: 20, floor: 200, token: t() })),
    );

    expect(taken.filter((result) => result.reserved)).toHaveLength(10);
    expect(taken.filter((result) => !result.reserved).every((result) => result.projected === 200)).toBe(true);
    expect(await store.getBalanceState()).toMatchObject({ projected: 200 });
  });

  it('takes a critical send whatever is left, so the normal ones see it', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 210, basis: 0 });
    expect(await store.reserveCredit({ estimate: 20, token: t() })).toMatchObject({ reserved: true, projected: 190 });
    expect(await store.reserveCredit({ estimate: 20, floor: 0, token: t() })).toMatchObject({
      reserved: true,
      projected: 170,
    });
    expect(await store.reserveCredit({ estimate: 20, floor: 200, token: t() })).toEqual({
      reserved: false,
      projected: 170,
    });
  });

  it('corrects the estimate with the actual cost, gives back what certainly was not sent, keeps what may have been', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 1_000, basis: 0 });
    for (let n = 0; n < 3; n += 1) await store.reserveCredit({ estimate: 20, floor: 200, token: t() });
    expect((await store.getBalanceState()).projected).toBe(940);

    await store.settleCredit({ token: oldest(), estimate: 20, charged: 40 }); // two segments after all
    await store.settleCredit({ token: oldest(), estimate: 20, charged: 0 }); // 401, a refused request: not sent
    await store.settleCredit({ token: oldest(), estimate: 20, charged: 20 }); // a time-out: may have been sent

    expect(await store.getBalanceState()).toMatchObject({ projected: 940, charged: 60 });
  });

  it('rebases on a balance read: sends settled since the read began are subtracted, sends in flight keep their estimate', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 400, basis: 0 });
    await store.reserveCredit({ estimate: 20, floor: 200, token: t() }); // A
    await store.reserveCredit({ estimate: 20, floor: 200, token: t() }); // B
    await store.reserveCredit({ estimate: 20, floor: 200, token: t() }); // C, still in flight at the end
    // A balance read begins (basis read first); the service has charged nothing yet and says 400.
    const before = (await store.getBalanceState()).charged ?? 0;
    // A and B are charged and settled before the read's answer is written.
    await store.settleCredit({ token: oldest(), estimate: 20, charged: 20 });
    await store.settleCredit({ token: oldest(), estimate: 20, charged: 20 });
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
    await store.reserveCredit({ estimate: 20, floor: 200, token: t() });
    const before = (await store.getBalanceState()).charged ?? 0;
    // Charged at the service before the read answered (380), settled after the read began.
    await store.settleCredit({ token: oldest(), estimate: 20, charged: 20 });
    await store.rebaseCredit({ balance: 380, basis: before });
    expect((await store.getBalanceState()).projected).toBe(360);
    // The next read sets it right.
    await store.rebaseCredit({ balance: 380, basis: (await store.getBalanceState()).charged ?? 0 });
    expect((await store.getBalanceState()).projected).toBe(380);
  });

  it("takes a send's answer as proof only where it proves the projection wrong: a top-up raises it, credit spent elsewhere lowers it", async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 1_000, basis: 0 });
    const reserve = async () => {
      const token = t();
      const taken = await store.reserveCredit({ estimate: 20, floor: 200, token });
      if (!taken.reserved) throw new Error('expected a reservation');
      return { token, estimate: 20, basis: taken.basis };
    };
    // As projected: nothing moves.
    await store.observeSentCredit({ balance: 980, deducted: 20, reservation: await reserve() });
    expect((await store.getBalanceState()).projected).toBe(980);
    // Topped up by 5,000 in the dashboard; another send (B) is in flight when A's answer comes.
    const a = await reserve();
    await reserve(); // B
    await store.observeSentCredit({ balance: 5_960, deducted: 20, reservation: a });
    expect((await store.getBalanceState()).projected).toBe(5_940); // B's estimate still taken
    // 500 spent from the dashboard: the next answer shows it.
    await store.observeSentCredit({ balance: 5_420, deducted: 20, reservation: await reserve() });
    expect((await store.getBalanceState()).projected).toBe(5_420);
  });

  it('never raises the projection above what is left, whatever order the answers of concurrent sends arrive in', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { store } = await newTable(db);
      await store.rebaseCredit({ balance: 400, basis: 0 });
      let balance = 400;
      const sends = await Promise.all(
        Array.from({ length: 10 }, () => store.reserveCredit({ estimate: 20, token: t() })),
      );
      // The service charges them in turn; their answers are observed in a shuffled order.
      const answers = sends.map((taken, index) => {
        if (!taken.reserved) throw new Error('expected a reservation');
        balance -= 20;
        return { reservation: { token: issued[index]!, estimate: 20, basis: taken.basis }, remaining: balance };
      });
      await Promise.all(
        [...answers]
          .sort(() => Math.random() - 0.5)
          .map(async ({ reservation, remaining }) => {
            await store.observeSentCredit({ balance: remaining, deducted: 20, reservation });
            expect((await store.getBalanceState()).projected).toBeLessThanOrEqual(200);
          }),
      );
      expect((await store.getBalanceState()).projected).toBe(200);
    }
  });

  it('settles a reservation once, and the sweeper keeps the one of a sender that stopped as maybe sent', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 1_000, basis: 0 });
    await store.reserveCredit({ estimate: 20, floor: 200, token: 'sent' });
    await store.reserveCredit({ estimate: 30, floor: 200, token: 'died' });
    await store.settleCredit({ token: 'sent', estimate: 20, charged: 0 });
    await store.settleCredit({ token: 'sent', estimate: 20, charged: 0 }); // again: counted once
    expect(await store.getBalanceState()).toMatchObject({ projected: 970, charged: 0 });

    await store.keepStaleCredit({ token: 'died' });
    await store.keepStaleCredit({ token: 'died' });
    await store.keepStaleCredit({ token: 'never-reserved' });
    expect(await store.getBalanceState()).toMatchObject({ projected: 970, charged: 30 });
    // The next read then counts it by what the balance shows: here it was not charged after all.
    await store.rebaseCredit({ balance: 1_000, basis: 30 });
    expect((await store.getBalanceState()).projected).toBe(1_000);
  });

  it('refuses amounts that are not finite numbers, changing nothing', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 400, basis: 0 });
    await expect(store.reserveCredit({ estimate: Number.NaN, floor: 200, token: t() })).rejects.toThrow(StoreError);
    await expect(store.reserveCredit({ estimate: -5, token: t() })).rejects.toThrow(StoreError);
    await expect(
      store.settleCredit({ token: oldest(), estimate: 20, charged: Number.POSITIVE_INFINITY }),
    ).rejects.toThrow(StoreError);
    await expect(store.rebaseCredit({ balance: Number.NaN, basis: 0 })).rejects.toThrow(StoreError);
    expect((await store.getBalanceState()).projected).toBe(400);
  });
});
