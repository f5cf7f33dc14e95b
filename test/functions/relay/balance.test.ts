import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { checkBalance } from '../../../functions/relay/balance';
import { NOTICE_ROUTE } from '../../../functions/relay/ports';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { MessageState } from '../../../functions/store';
import { countItemTraffic } from '../../helpers/requests';
import { expectNoLeaks } from './leaks';
import { bearer, harness, type Harness, ONCALL, SECRETS, useRelayServers } from './support';

const servers = useRelayServers({ rate: 1 });
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

async function withBalanceWatch(client = servers.db.client): Promise<Harness> {
  relay = await harness({
    db: servers.db,
    baseUrl: servers.sandbox.baseUrl,
    client,
    config: (config) => ({ ...config, balance: { threshold: 100, notify: ['0712345678'] } }),
  });
  return relay;
}

async function sendOne(): Promise<SendOutcome> {
  relay.clock.advance(1_000);
  const response = await relay.ingest('ops', JSON.stringify({ message: 'Nightly backup failed' }), {
    headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
  });
  return await sendMessage(relay.context, (response.body['ids'] as string[])[0]!);
}

const notices = async () => await relay.records(NOTICE_ROUTE);

describe('the low-balance notice', () => {
  it('is recorded once when a send leaves the balance below the threshold, and re-armed by a top-up', async () => {
    await withBalanceWatch();
    servers.sandbox.setBalance(102);

    expect(await sendOne()).toBe(SendOutcome.Sent); // 101
    expect(await sendOne()).toBe(SendOutcome.Sent); // 100: at the threshold is not below it
    expect(await notices()).toHaveLength(0);
    expect(await sendOne()).toBe(SendOutcome.Sent); // 99
    expect(await sendOne()).toBe(SendOutcome.Sent); // 98

    const [notice, ...more] = await notices();
    expect(more).toHaveLength(0);
    expect(notice).toMatchObject({
      state: MessageState.Pending,
      to: [ONCALL],
      senderId: 'SMSRELAY',
      delivery: 'at-most-once',
      // The relay has seen 3 seconds of spend: far too little to tell how long 99 credits last.
      text: 'sms-relay: SMS balance is 99, below the threshold of 100. Too little spend seen to forecast how long it lasts. Top up soon.',
    });

    // The notice is an SMS like any other, sent by the sender.
    expect(await sendMessage(relay.context, notice!.id)).toBe(SendOutcome.Sent);
    expect(servers.sandbox.messages().at(-1)).toMatchObject({ phoneNumbers: [ONCALL], message: notice!.text });

    relay.clock.advance(1_000);
    expect(await checkBalance(relay.context)).toMatchObject({
      balance: 97,
      alerted: false,
      threshold: 100,
      currency: 'TZS',
    });
    expect(await notices()).toHaveLength(1);

    servers.sandbox.setBalance(500);
    relay.clock.advance(1_000);
    expect(await checkBalance(relay.context)).toMatchObject({ balance: 500, alerted: false });
    expect(await relay.store.getBalanceState()).toMatchObject({ armed: true, lastBalance: 500 });

    servers.sandbox.setBalance(50);
    relay.clock.advance(1_000);
    expect(await checkBalance(relay.context)).toMatchObject({ balance: 50, alerted: true });
    relay.clock.advance(1_000);
    expect(await checkBalance(relay.context)).toMatchObject({ balance: 50, alerted: false });
    expect(await notices()).toHaveLength(2);
    expect(relay.metrics.points.filter((point) => point.name === 'RemainingBalance')).toEqual(
      expect.arrayContaining([
        { name: 'RemainingBalance', value: 500 },
        { name: 'RemainingBalance', value: 50 },
      ]),
    );
  });

  it('is not lost when recording it fails (a store error): the alert stays armed and the next observation records it, once', async () => {
    await withBalanceWatch();
    servers.sandbox.setBalance(99);
    const failing: Harness = {
      ...relay,
      context: {
        ...relay.context,
        store: { ...relay.store, recordNotice: async () => Promise.reject(new Error('throttled')) },
      },
    };
    await expect(checkBalance(failing.context)).rejects.toThrow('throttled');
    expect(await relay.store.getBalanceState()).toMatchObject({ armed: true });
    expect(await notices()).toHaveLength(0);

    relay.clock.advance(1_000);
    expect(await checkBalance(relay.context)).toMatchObject({ balance: 99, alerted: true });
    expect(await checkBalance(relay.context)).toMatchObject({ balance: 99, alerted: false });
    expect(await notices()).toEqual([
      expect.objectContaining({
        text: expect.stringMatching(/^sms-relay: SMS balance is TZS 99, below the threshold of 100\./),
      }),
    ]);
  });

  it('is recorded when a send is refused for want of balance, with the balance actually left', async () => {
    await withBalanceWatch();
    // Not enough for one SMS at a rate of 1, and not zero either.
    servers.sandbox.setBalance(0.5);

    expect(await sendOne()).toBe(SendOutcome.Parked);

    const [notice, ...more] = await notices();
    expect(more).toHaveLength(0);
    // At 1 credit per SMS, 0.5 cannot pay for one: no forecast, the account is empty.
    expect(notice?.text).toBe(
      'sms-relay: SMS balance is TZS 0.5: not enough for one SMS. The account is empty; top up now.',
    );
  });

  it('forecasts the days left from the spend over the time actually observed', async () => {
    await withBalanceWatch();
    servers.sandbox.setBalance(1_000);
    expect(await sendOne()).toBe(SendOutcome.Sent); // first observation: 999
    // Two days later, 9 more SMS at 1 credit: 10 credits over 2 days observed is 5 a day.
    relay.clock.advance(2 * 86_400_000 - 10_000);
    for (let n = 0; n < 9; n += 1) expect(await sendOne()).toBe(SendOutcome.Sent);
    servers.sandbox.setBalance(95);
    relay.clock.advance(1_000);
    expect(await checkBalance(relay.context)).toMatchObject({ balance: 95, alerted: true, daysLeft: 19 });
    const [notice] = await notices();
    expect(notice?.text).toBe(
      'sms-relay: SMS balance is TZS 95, below the threshold of 100. At the recent spend it lasts about 19 days. Top up soon.',
    );
  });

  it('recorded by a send, says how long the balance lasts at the rate the balance watch last forecast', async () => {
    await withBalanceWatch();
    servers.sandbox.setBalance(1_000);
    await checkBalance(relay.context); // first observation
    relay.clock.advance(2 * 86_400_000 - 10_000);
    for (let n = 0; n < 10; n += 1) expect(await sendOne()).toBe(SendOutcome.Sent);
    // The watch's run: 10 credits over 2 days is 5 a day, kept for the sends.
    relay.clock.advance(1_000);
    expect(await checkBalance(relay.context)).toMatchObject({ balance: 990, alerted: false });
    expect((await relay.store.getBalanceState()).spendPerDay).toBeCloseTo(5, 1);

    servers.sandbox.setBalance(96);
    expect(await sendOne()).toBe(SendOutcome.Sent); // 95
    expect((await notices()).map((notice) => notice.text)).toEqual([
      'sms-relay: SMS balance is 95, below the threshold of 100. At the recent spend it lasts about 19 days. Top up soon.',
    ]);
  });

  it('is recorded by the balance watch when the spend cannot be read, without a forecast', async () => {
    await withBalanceWatch();
    servers.sandbox.setBalance(90);
    const failing = {
      ...relay.store,
      recentSpend: async () =>
        await Promise.reject(Object.assign(new Error('throttled'), { name: 'ThrottlingException' })),
    };

    expect(await checkBalance({ ...relay.context, store: failing })).toMatchObject({ balance: 90, alerted: true });
    expect((await notices()).map((notice) => notice.text)).toEqual([
      'sms-relay: SMS balance is TZS 90, below the threshold of 100. Too little spend seen to forecast how long it lasts. Top up soon.',
    ]);
    expect(relay.logger.lines).toContainEqual({
      level: 'warn',
      message: 'spend not read: no forecast this time',
      attributes: { error: 'ThrottlingException' },
    });
  });

  it('leaves the balance state unwritten by sends while the alert stays armed, and re-arms on a top-up', async () => {
    const client = servers.db.newClient();
    const traffic = countItemTraffic(client);
    await withBalanceWatch(client);
    servers.sandbox.setBalance(1_000);
    expect(await sendOne()).toBe(SendOutcome.Sent); // this process's first observation: written
    traffic.reset();
    for (let n = 0; n < 5; n += 1) expect(await sendOne()).toBe(SendOutcome.Sent);
    expect(traffic.writesTo('BALANCE', 'STATE')).toBe(0);

    // Below the threshold: the crossing is written once, the sends after it write nothing.
    servers.sandbox.setBalance(99);
    for (let n = 0; n < 3; n += 1) expect(await sendOne()).toBe(SendOutcome.Sent);
    expect(traffic.writesTo('BALANCE', 'STATE')).toBe(1);
    expect(await notices()).toHaveLength(1);

    // A top-up seen by a send re-arms the alert: a change, so written.
    servers.sandbox.setBalance(5_000);
    expect(await sendOne()).toBe(SendOutcome.Sent);
    expect(traffic.writesTo('BALANCE', 'STATE')).toBe(2);
    expect(await relay.store.getBalanceState()).toMatchObject({ armed: true, lastBalance: 4_999 });
  });

  it('is dropped as stale, never sent, when it goes out after the balance is back above the threshold', async () => {
    await withBalanceWatch();
    servers.sandbox.setBalance(0.5);
    expect(await sendOne()).toBe(SendOutcome.Parked);
    const [notice] = await notices();
    // The notice itself is refused too (402) and parks beside the message.
    expect(await sendMessage(relay.context, notice!.id)).toBe(SendOutcome.Parked);

    servers.sandbox.setBalance(5_000);
    relay.clock.advance(1_000);
    expect(await relay.store.requeue(notice!.id, { from: MessageState.Parked })).toBeDefined();
    relay.clock.advance(1_000);
    expect(await sendMessage(relay.context, notice!.id)).toBe(SendOutcome.Dropped);

    expect(await relay.record(notice!.id)).toMatchObject({
      state: MessageState.Dropped,
      reason: 'stale: the balance is back at 5000, not below the threshold of 100',
    });
    expect(servers.sandbox.messages()).toHaveLength(0);
    expect(await relay.store.getBalanceState()).toMatchObject({ armed: true, lastBalance: 5_000 });
  });

  it('is stale at exactly the threshold: "below the threshold" is what it says', async () => {
    await withBalanceWatch();
    servers.sandbox.setBalance(0.5);
    expect(await sendOne()).toBe(SendOutcome.Parked);
    const [notice] = await notices();
    expect(await sendMessage(relay.context, notice!.id)).toBe(SendOutcome.Parked);
    servers.sandbox.setBalance(100);
    relay.clock.advance(1_000);
    expect(await relay.store.requeue(notice!.id, { from: MessageState.Parked })).toBeDefined();
    relay.clock.advance(1_000);
    expect(await sendMessage(relay.context, notice!.id)).toBe(SendOutcome.Dropped);
    expect(servers.sandbox.messages()).toHaveLength(0);
  });

  it('still goes out when it is sent while the balance is below the threshold', async () => {
    await withBalanceWatch();
    servers.sandbox.setBalance(101);
    expect(await sendOne()).toBe(SendOutcome.Sent);
    expect(await sendOne()).toBe(SendOutcome.Sent);
    const [notice] = await notices();
    expect(await sendMessage(relay.context, notice!.id)).toBe(SendOutcome.Sent);
    expect(servers.sandbox.messages().at(-1)).toMatchObject({ message: notice!.text });
  });

  it('is not recorded without a threshold; the balance is still published', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    servers.sandbox.setBalance(3);

    expect(await checkBalance(relay.context)).toEqual({
      balance: 3,
      threshold: undefined,
      alerted: false,
      currency: 'TZS',
    });
    expect(await notices()).toHaveLength(0);
    // BalanceReadFailed 0: a run that read the balance, which the watch's missing-data alarm counts.
    expect(relay.metrics.points).toEqual([
      { name: 'BalanceReadFailed', value: 0 },
      { name: 'RemainingBalance', value: 3 },
    ]);
  });
});

describe('balance readings', () => {
  it('keeps every read of the balance watch, and none of a send', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    servers.sandbox.setBalance(300);
    await checkBalance(relay.context);
    const first = relay.clock.now.toISOString();
    expect(await sendOne()).toBe(SendOutcome.Sent); // 299, on the SENT record only
    relay.clock.advance(60_000);
    await checkBalance(relay.context);

    expect(await relay.store.listBalanceReadings({ since: new Date(0) })).toEqual([
      { at: first, balance: 300, currency: 'TZS' },
      { at: relay.clock.now.toISOString(), balance: 299, currency: 'TZS' },
    ]);
  });

  it('logs a warning and goes on with the watch when the reading cannot be kept', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: (config) => ({ ...config, balance: { threshold: 100, notify: ['0712345678'] } }),
    });
    servers.sandbox.setBalance(50);
    const failing = {
      ...relay.store,
      recordBalanceReading: async () =>
        await Promise.reject(
          Object.assign(new Error('throughput exceeded'), { name: 'ProvisionedThroughputExceededException' }),
        ),
    };

    expect(await checkBalance({ ...relay.context, store: failing })).toMatchObject({ balance: 50, alerted: true });
    expect(relay.logger.lines).toContainEqual({
      level: 'warn',
      message: 'balance reading not recorded',
      attributes: { error: 'ProvisionedThroughputExceededException' },
    });
    expect(await notices()).toHaveLength(1);
    expect(await relay.store.listBalanceReadings({ since: new Date(0) })).toEqual([]);
  });
});
