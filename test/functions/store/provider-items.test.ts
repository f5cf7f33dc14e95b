import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessageState } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { at, message, newTable, T0 } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const fail = (provider?: string) => ({
  threshold: 1,
  firstProbeAt: () => at(1_000),
  error: 'server-error 503',
  now: at(0),
  ...(provider === undefined ? {} : { provider }),
});

describe('each provider has its own circuit and balance items', () => {
  it('keeps main on the circuit key it always had, and another provider under PROVIDER#<name>', async () => {
    const { store, rawItem } = await newTable(db);
    await store.circuit.failed(fail());
    await store.circuit.failed(fail('at'));
    expect(await rawItem('CIRCUIT', 'SMS-SERVICE')).toBeDefined();
    expect(await rawItem('CIRCUIT', 'PROVIDER#at')).toBeDefined();
  });

  it('opens one provider circuit without touching another', async () => {
    const { store } = await newTable(db);
    expect((await store.circuit.failed(fail())).opened).toBe(true);
    expect((await store.getCircuit()).openedAt).toBe(at(0).toISOString());
    expect(await store.getCircuit('at')).toEqual({ failures: 0, probes: 0 });
    await store.circuit.open({ until: at(60_000), by: 'asha', provider: 'at' });
    expect((await store.getCircuit('at')).openedBy).toBe('asha');
    await store.circuit.close();
    expect((await store.getCircuit()).openedAt).toBeUndefined();
    expect((await store.getCircuit('at')).openedAt).toBe(T0.toISOString());
  });

  it('keeps main on the balance key it always had, another provider under PROVIDER#<name>, each with its own alert', async () => {
    const { store, rawItem } = await newTable(db);
    expect(await store.updateBalanceState({ balance: 5, threshold: 10 })).toEqual({ alert: true, stale: false });
    expect(await store.updateBalanceState({ balance: 5, threshold: 10, provider: 'at' })).toEqual({
      alert: true,
      stale: false,
    });
    await store.rebaseCredit({ balance: 500, basis: 0, provider: 'at' });
    expect((await store.getBalanceState()).lastBalance).toBe(5);
    expect(await store.getBalanceState('at')).toMatchObject({ lastBalance: 5, projected: 500 });
    expect((await store.getBalanceState()).projected).toBeUndefined();
    expect(await rawItem('BALANCE', 'STATE')).toBeDefined();
    expect(await rawItem('BALANCE', 'PROVIDER#at')).toBeDefined();
  });

  it('reserves credit from the named provider only', async () => {
    const { store } = await newTable(db);
    await store.rebaseCredit({ balance: 100, basis: 0 });
    await store.rebaseCredit({ balance: 3, basis: 0, provider: 'at' });
    expect(await store.reserveCredit({ estimate: 5, floor: 0, token: 't1', provider: 'at' })).toMatchObject({
      reserved: false,
    });
    expect(await store.reserveCredit({ estimate: 5, floor: 0, token: 't1' })).toMatchObject({
      reserved: true,
      projected: 95,
    });
  });

  it('keeps the provider of an attempt on the record and its history, and the failover it was', async () => {
    const { store } = await newTable(db);
    const { ids } = await store.acceptWebhook({
      route: 'orders',
      dedupeKey: 'd',
      windowSeconds: 60,
      messages: [message({ delivery: 'at-least-once' })],
      now: T0,
    });
    const id = ids[0]!;
    const first = await store.claimMessage(id, { now: at(1) });
    const failedOver = await store.settle(
      id,
      first!.claimToken!,
      {
        state: MessageState.Pending,
        nextAttemptAt: at(2),
        lastError: { name: 'SmsServiceError', delivery: 'maybe-sent', message: 'time-out' },
        attempt: { provider: 'at', failoverFrom: 'main', failoverReason: 'unreachable' },
      },
      { now: at(1) },
    );
    expect(failedOver).toMatchObject({ provider: 'at', failoverFrom: 'main', failoverReason: 'unreachable' });
    expect(failedOver.history.at(-1)).toMatchObject({ state: MessageState.Pending, provider: 'at' });

    const second = await store.claimMessage(id, { now: at(3) });
    const sent = await store.settle(
      id,
      second!.claimToken!,
      {
        state: MessageState.Sent,
        result: { deducted: 1, remainingBalance: 9, message: '', senderId: '', recipients: [] },
        attempt: { provider: 'main' },
      },
      { now: at(3) },
    );
    expect(sent.provider).toBe('main');
    expect(sent.failoverFrom).toBeUndefined();
    expect(sent.failoverReason).toBeUndefined();
    expect((await store.getMessage(id))?.history.at(-1)).toMatchObject({ state: MessageState.Sent, provider: 'main' });
  });
});
