import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { at, newTable, sentRecord } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const fail = (threshold = 3, now = at(0)) => ({
  threshold,
  firstProbeAt: (probes: number) => at(1_000 * (probes + 1)),
  error: 'server-error 503',
  now,
});

describe('the SMS service circuit item', () => {
  it('reads as closed with no failures when the table has none', async () => {
    const { store } = await newTable(db);
    expect(await store.getCircuit()).toEqual({ failures: 0, probes: 0 });
  });

  it('opens at the threshold of failures in a row, once, for exactly one of several failing senders', async () => {
    const { store, storeWith } = await newTable(db);
    const other = storeWith(db.newClient());
    expect(await store.circuit.failed(fail())).toMatchObject({ opened: false, state: { failures: 1 } });
    const results = await Promise.all([
      store.circuit.failed(fail()),
      other.circuit.failed(fail()),
      other.circuit.failed(fail()),
      store.circuit.failed(fail()),
    ]);
    expect(results.filter((result) => result.opened)).toHaveLength(1);
    expect(await other.getCircuit()).toEqual({
      failures: 5,
      probes: 0,
      openedAt: at(0).toISOString(),
      nextProbeAt: at(1_000).toISOString(),
      lastError: 'server-error 503',
      lastFailureAt: at(0).toISOString(),
    });
  });

  it('counts a failure after a message was settled SENT (in the same millisecond as the last failure too) as the first of a new row, and one with none since as one more in a row', async () => {
    const { store } = await newTable(db);
    await store.circuit.failed(fail(3, at(0)));
    await store.circuit.failed(fail(3, at(10)));
    expect(await store.getCircuit()).toMatchObject({ failures: 2, lastFailureAt: at(10).toISOString() });

    await sentRecord(store, { route: 'alerts', deducted: 1, now: at(20) });
    expect(await store.circuit.failed(fail(3, at(30)))).toMatchObject({ opened: false, state: { failures: 1 } });
    expect(await store.circuit.failed(fail(3, at(40)))).toMatchObject({ opened: false, state: { failures: 2 } });
    // A send settled in the same millisecond as the last failure may have come after it: a new row.
    await sentRecord(store, { route: 'alerts', deducted: 1, now: at(40) });
    expect(await store.circuit.failed(fail(3, at(50)))).toMatchObject({ opened: false, state: { failures: 1 } });
    await store.circuit.failed(fail(3, at(60)));
    const third = await store.circuit.failed(fail(3, at(70)));
    expect(third).toMatchObject({ opened: true, state: { failures: 3, openedAt: at(70).toISOString() } });
  });

  it("with several providers, adds a provider's failure whatever was settled SENT since: another provider may have sent it", async () => {
    const { store } = await newTable(db);
    const failOf = (now: Date) => ({ ...fail(3, now), provider: 'at', sentRecordsAreItsSuccesses: false });
    await store.circuit.failed(failOf(at(0)));
    await sentRecord(store, { route: 'alerts', deducted: 1, now: at(10) });
    expect(await store.circuit.failed(failOf(at(20)))).toMatchObject({ opened: false, state: { failures: 2 } });
    expect(await store.circuit.failed(failOf(at(30)))).toMatchObject({ opened: true, state: { failures: 3 } });
    expect(await store.getCircuit()).toEqual({ failures: 0, probes: 0 });
  });
  it('lets exactly one trial send through while on probation; a trial given back or past its lease lets the next one go', async () => {
    const { store, storeWith } = await newTable(db);
    const other = storeWith(db.newClient());
    for (let count = 0; count < 3; count += 1) await store.circuit.failed(fail());
    // Open: no trial.
    expect(await store.circuit.claimTrial({ leaseUntil: at(20_000), now: at(1_000) })).toBe(false);
    await store.circuit.succeeded({ probation: 2, now: at(1_000) });
    expect(await store.getCircuit()).toMatchObject({ probationSince: at(1_000).toISOString(), failures: 2 });
    const claims = await Promise.all(
      [store, other, store, other, store, other, store, other].map((each) =>
        each.circuit.claimTrial({ leaseUntil: at(20_000), now: at(1_500) }),
      ),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await other.circuit.claimTrial({ leaseUntil: at(40_000), now: at(19_999) })).toBe(false);
    // Given back: the next send is the trial.
    expect(await store.circuit.releaseTrial({ leaseUntil: at(20_000) })).toBe(true);
    expect(await other.circuit.claimTrial({ leaseUntil: at(40_000), now: at(2_000) })).toBe(true);
    // Its sender stopped: once the lease has passed another may try.
    expect(await store.circuit.claimTrial({ leaseUntil: at(60_000), now: at(40_000) })).toBe(true);
    // A failure on probation opens it again.
    expect(await store.circuit.failed(fail(3, at(41_000)))).toMatchObject({ opened: true });
    const reopened = await store.getCircuit();
    expect(reopened.probationSince).toBeUndefined();
    expect(reopened.trialUntil).toBeUndefined();
  });

  it('a send that goes through ends the probation', async () => {
    const { store } = await newTable(db);
    for (let count = 0; count < 3; count += 1) await store.circuit.failed(fail());
    await store.circuit.succeeded({ probation: 2, now: at(1_000) });
    expect(await store.circuit.succeeded()).toEqual({});
    expect(await store.getCircuit()).toMatchObject({ failures: 0, probes: 0 });
    expect((await store.getCircuit()).probationSince).toBeUndefined();
    expect(await store.circuit.claimTrial({ leaseUntil: at(20_000), now: at(2_000) })).toBe(false);
  });

  it('is opened by hand until a time (sends answering do not close it) and closed by hand at once', async () => {
    const { store } = await newTable(db);
    const opened = await store.circuit.open({ until: at(1_800_000), by: 'sms-relay circuit open', now: at(0) });
    expect(opened).toMatchObject({
      openedAt: at(0).toISOString(),
      nextProbeAt: at(1_800_000).toISOString(),
      openedBy: 'sms-relay circuit open',
    });
    expect(await store.circuit.succeeded()).toEqual({});
    expect((await store.getCircuit()).openedAt).toBe(at(0).toISOString());
    expect(await store.circuit.claimProbe({ leaseUntil: at(20_000), now: at(1_000) })).toBeUndefined();
    // Opening again keeps since when it is open, with the new end.
    await store.circuit.open({ until: at(60_000), by: 'console', now: at(5_000) });
    expect(await store.getCircuit()).toMatchObject({
      openedAt: at(0).toISOString(),
      nextProbeAt: at(60_000).toISOString(),
    });
    expect(await store.circuit.close()).toMatchObject({ openedAt: at(0).toISOString(), openedBy: 'console' });
    expect(await store.getCircuit()).toEqual({ failures: 0, probes: 0 });
  });

  it('gives a probe lease back only when it is still the lease taken', async () => {
    const { store } = await newTable(db);
    for (let count = 0; count < 3; count += 1) await store.circuit.failed(fail());
    await store.circuit.claimProbe({ leaseUntil: at(20_000), now: at(1_000) });
    expect(await store.circuit.releaseProbe({ leaseUntil: at(19_000), now: at(2_000) })).toBe(false);
    expect(await store.circuit.releaseProbe({ leaseUntil: at(20_000), now: at(2_000) })).toBe(true);
    expect(await store.getCircuit()).toMatchObject({ nextProbeAt: at(2_000).toISOString() });
  });

  it('lets one caller probe at a time, and only once the probe is due', async () => {
    const { store, storeWith } = await newTable(db);
    const other = storeWith(db.newClient());
    for (let count = 0; count < 3; count += 1) await store.circuit.failed(fail());
    expect(await store.circuit.claimProbe({ leaseUntil: at(20_000), now: at(500) })).toBeUndefined();
    const claims = await Promise.all(
      [store, other, store, other].map((each) => each.circuit.claimProbe({ leaseUntil: at(20_000), now: at(1_000) })),
    );
    expect(claims.filter((claim) => claim !== undefined)).toHaveLength(1);
    // A prober that stopped: the lease passes and another may probe.
    expect(await other.circuit.claimProbe({ leaseUntil: at(40_000), now: at(19_999) })).toBeUndefined();
    expect(await other.circuit.claimProbe({ leaseUntil: at(40_000), now: at(20_000) })).toMatchObject({
      openedAt: at(0).toISOString(),
    });
  });

  it('counts a failed probe and moves the next one out', async () => {
    const { store } = await newTable(db);
    for (let count = 0; count < 3; count += 1) await store.circuit.failed(fail());
    const claimed = await store.circuit.claimProbe({ leaseUntil: at(20_000), now: at(1_000) });
    expect(
      await store.circuit.probeFailed({ openedAt: claimed!.openedAt!, nextProbeAt: at(5_000), error: 'refused' }),
    ).toBe(true);
    expect(await store.getCircuit()).toMatchObject({
      probes: 1,
      nextProbeAt: at(5_000).toISOString(),
      lastError: 'refused',
    });
    // A probe of an opening that is over changes nothing.
    expect(
      await store.circuit.probeFailed({ openedAt: at(-1).toISOString(), nextProbeAt: at(9_000), error: 'refused' }),
    ).toBe(false);
  });

  it('closes on a success for exactly one caller; a send resets everything, a probe leaves it on probation', async () => {
    const { store, storeWith } = await newTable(db);
    const other = storeWith(db.newClient());
    for (let count = 0; count < 3; count += 1) await store.circuit.failed(fail());
    const closes = await Promise.all([
      store.circuit.succeeded({ probation: 2 }),
      other.circuit.succeeded({ probation: 2 }),
    ]);
    expect(closes.filter((close) => close.closed !== undefined)).toEqual([
      { closed: expect.objectContaining({ openedAt: at(0).toISOString(), failures: 3 }) },
    ]);
    expect(await store.getCircuit()).toMatchObject({ failures: 2, probes: 1 });
    expect((await store.getCircuit()).openedAt).toBeUndefined();
    // On probation: the next failure re-opens it, the first probe at the backoff reached (1 probe counted).
    expect(await store.circuit.failed(fail(3, at(60_000)))).toMatchObject({
      opened: true,
      state: { openedAt: at(60_000).toISOString(), nextProbeAt: at(2_000).toISOString() },
    });
    expect(await store.circuit.succeeded()).toMatchObject({
      closed: expect.objectContaining({ openedAt: at(60_000).toISOString() }),
    });
    expect(await store.getCircuit()).toMatchObject({ failures: 0, probes: 0 });
    expect(await store.circuit.succeeded()).toEqual({});
  });
});
