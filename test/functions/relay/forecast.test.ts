import { BatchWriteItemCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { checkBalance, forecastBalance } from '../../../functions/relay/balance';
import { NOTICE_ROUTE } from '../../../functions/relay/ports';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { MessageState, TABLE } from '../../../functions/store';
import { countItemTraffic } from '../../helpers/requests';
import { expectNoLeaks } from './leaks';
import { bearer, harness, type Harness, SECRETS, useRelayServers } from './support';

const servers = useRelayServers({ rate: 1 });
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const DAY_MS = 86_400_000;
const SENT_RECORDS = 200_000;
const BATCH = 25;

/*
 * In `npm run test:aws`, against DynamoDB Local, where the issue measured the records: writing
 * 200,000 of them to dynalite costs minutes of CPU on a shared 2-core machine. The behaviour it
 * proves at volume is covered at small scale by balance.test.ts in `npm test`.
 */

/**
 * `count` SENT records spread over the seven days before `now`, one credit each, written as the
 * sender leaves them (state, route, times and the service's answer, which the state index holds),
 * by batch writes: what adding up the sent records read. Returns what each UTC day spent.
 */
async function writeSentRecords(count: number, now: Date): Promise<Map<string, number>> {
  const perDay = new Map<string, number>();
  const requests: WriteRequest[] = [];
  for (let n = 0; n < count; n += 1) {
    const at = new Date(now.getTime() - 1_000 - Math.floor((n / count) * 7 * DAY_MS)).toISOString();
    const id = randomUUID();
    perDay.set(at.slice(0, 10), (perDay.get(at.slice(0, 10)) ?? 0) + 1);
    requests.push({
      PutRequest: {
        Item: {
          [TABLE.partitionKey]: { S: `MSG#${id}` },
          [TABLE.sortKey]: { S: 'MSG' },
          kind: { S: 'message' },
          id: { S: id },
          route: { S: 'ops' },
          state: { S: MessageState.Sent },
          createdAt: { S: at },
          updatedAt: { S: at },
          sentAt: { S: at },
          result: { M: { deducted: { N: '1' }, remainingBalance: { N: '5000' } } },
        },
      },
    });
  }
  const batches: WriteRequest[][] = [];
  for (let start = 0; start < requests.length; start += BATCH) batches.push(requests.slice(start, start + BATCH));
  const lanes = Array.from({ length: 8 }, async () => {
    for (let batch = batches.pop(); batch !== undefined; batch = batches.pop()) {
      let pending = batch;
      while (pending.length > 0) {
        const answer = await servers.db.client.send(
          new BatchWriteItemCommand({ RequestItems: { [relay.tableName]: pending } }),
        );
        pending = answer.UnprocessedItems?.[relay.tableName] ?? [];
      }
    }
  });
  await Promise.all(lanes);
  return perDay;
}

describe('the days-left forecast with 200,000 SENT records', () => {
  it('reads at most 10 items, never from a send, and the low-balance notice is recorded once', async () => {
    const client = servers.db.newClient();
    const traffic = countItemTraffic(client);
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      client,
      config: (config) => ({ ...config, balance: { threshold: 100, notify: ['0712345678'] } }),
    });
    const now = relay.clock.now;
    const weekAgo = new Date(now.getTime() - 7 * DAY_MS);
    // A relay observed for a week, whose senders counted every credit of those records as they went.
    await relay.store.updateBalanceState({ balance: 210_000, threshold: 100, now: weekAgo });
    await relay.store.startSpendCount(weekAgo);
    const perDay = await writeSentRecords(SENT_RECORDS, now);
    const counted = [...perDay].map(
      async ([day, credits]) =>
        await relay.store.recordSpend({ deducted: credits, now: new Date(`${day}T12:00:00.000Z`) }),
    );
    await relay.store.flushSpend();
    await Promise.all(counted);
    const inLastSevenDays = [...perDay].filter(([day]) => day > weekAgo.toISOString().slice(0, 10));
    const spent = inLastSevenDays.reduce((sum, [, credits]) => sum + credits, 0);

    // A send that takes the balance below the threshold records the notice, reading no spend.
    servers.sandbox.setBalance(100);
    traffic.reset();
    relay.clock.advance(1_000);
    const response = await relay.ingest('ops', JSON.stringify({ message: 'Nightly backup failed' }), {
      headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
    });
    expect(await sendMessage(relay.context, (response.body['ids'] as string[])[0]!)).toBe(SendOutcome.Sent);
    const fromTheSend = traffic.itemsRead();

    // The balance watch forecasts: the day counters, whatever the volume.
    traffic.reset();
    relay.clock.advance(1_000);
    const check = await checkBalance(relay.context);
    const fromTheWatch = traffic.itemsRead();
    traffic.reset();
    const forecast = await forecastBalance(relay.store, 99, weekAgo.toISOString(), relay.clock.now);
    const fromOneForecast = traffic.itemsRead();
    process.stdout.write(
      `forecast over ${SENT_RECORDS} SENT records: ${fromOneForecast} items read by one forecast, ${fromTheWatch} by the balance watch's run, ${fromTheSend} by the send that crossed the threshold; ${JSON.stringify(forecast)}\n`,
    );

    expect(fromOneForecast).toBeLessThanOrEqual(10);
    expect(fromTheWatch).toBeLessThanOrEqual(10);
    // The send reads records and balance state, never the spend: a handful of single items.
    expect(fromTheSend).toBeLessThanOrEqual(10);
    expect(forecast.spent).toBe(spent + 1);
    expect(forecast.perDay).toBeCloseTo((spent + 1) / 7, 0);
    expect(check).toMatchObject({ balance: 99, alerted: false });
    const notices = await relay.records(NOTICE_ROUTE);
    expect(notices).toEqual([
      expect.objectContaining({
        text: 'sms-relay: SMS balance is 99, below the threshold of 100. Too little spend seen to forecast how long it lasts. Top up soon.',
      }),
    ]);
    // The watch kept its rate: the next crossing a send records says how long the balance lasts.
    expect((await relay.store.getBalanceState()).spendPerDay).toBeCloseTo((spent + 1) / 7, 0);
  }, 600_000);
});
