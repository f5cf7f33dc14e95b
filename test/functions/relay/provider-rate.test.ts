import { afterEach, describe, expect, it, vi } from 'vitest';
import { SENDER_CONCURRENCY, STREAM } from '../../../functions/core/defaults';
import {
  localSendConcurrency,
  PROVIDER_RATE,
  sendsInFlight,
  streamParallelization,
} from '../../../functions/core/provider-rate';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { takeSendSlot } from '../../../functions/relay/provider-rate';
import { Lane, laneRate } from '../../../functions/core/lanes';
import { MessageState } from '../../../functions/store';
import { alertBody, bearer, type Harness, harness, SECRETS, TestClock, useRelayServers } from './support';

/**
 * `provider.maxPerSecond` held across two senders (two relay contexts, as two Lambda containers)
 * on one table, against a sandbox that answers 429 past the same rate.
 */
const servers = useRelayServers({ balance: 100_000, rate: 1 }, { balance: 100_000 });
const MAX_PER_SECOND = 3;
/**
 * The sandbox's own limit: one more than the relay's, as the docs advise (the relay counts sends
 * started in each second; one started at a second's very end may reach the service in the next).
 */
const SERVICE_PER_SECOND = MAX_PER_SECOND + 1;
/** A bulk route's burst: at the bulk lane's share of the rate it takes 3 s, within a send's wait for a slot. */
const BURST = 6;

/** The wall clock: the rate's seconds are real ones (`now` follows each read, for the ingest's receipt time). */
class WallClock extends TestClock {
  public override readonly read = (): Date => {
    this.now = new Date();
    return this.now;
  };
}

async function twoSenders(maxPerSecond: number | undefined): Promise<[Harness, Harness]> {
  const clock = new WallClock(new Date());
  const config = (c: Parameters<NonNullable<Parameters<typeof harness>[0]['config']>>[0]) => ({
    ...c,
    provider: { ...c.provider, ...(maxPerSecond === undefined ? {} : { maxPerSecond }) },
  });
  const first = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, clock, config });
  const second = await harness({
    db: servers.db,
    baseUrl: servers.sandbox.baseUrl,
    clock,
    config,
    tableName: first.tableName,
    client: servers.db.newClient(),
  });
  return [first, second];
}

const rateLimit = async (method: 'POST' | 'DELETE', maxPerSecond?: number): Promise<void> => {
  const answer = await fetch(`${servers.sandbox.baseUrl}/_sandbox/rate-limit`, {
    method,
    ...(maxPerSecond === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ maxPerSecond }) }),
  });
  expect(answer.status).toBe(200);
};

afterEach(async () => {
  await rateLimit('DELETE');
});

async function burst(senders: readonly Harness[], route: string): Promise<{ ids: string[]; outcomes: SendOutcome[] }> {
  const ids: string[] = [];
  for (let count = 0; count < BURST; count += 1) {
    const response = await senders[0]!.ingest(route, alertBody(), { headers: bearer(SECRETS.alertsToken) });
    ids.push((response.body['ids'] as string[])[0]!);
  }
  servers.sandbox.clearRequests();
  const outcomes = await Promise.all(ids.map((id, index) => sendMessage(senders[index % 2]!.context, id)));
  return { ids, outcomes };
}

describe('provider.maxPerSecond', () => {
  it(`holds ${MAX_PER_SECOND} SMS/s across two senders: a burst of ${BURST} is all sent, never answered 429 by a service taking ${SERVICE_PER_SECOND}`, async () => {
    await rateLimit('POST', SERVICE_PER_SECOND);
    const senders = await twoSenders(MAX_PER_SECOND);
    const { outcomes } = await burst(senders, 'alerts');
    expect(outcomes).toEqual(Array(BURST).fill(SendOutcome.Sent));
    const statuses = servers.sandbox.requests().filter((request) => request.path === '/v1/sms/send');
    expect(statuses.map((request) => request.status)).toEqual(Array(BURST).fill(200));
    // Spread at the bulk lane's share of the rate: 6 at 2 a second start at least 2 s apart, first to
    // last. The sandbox stamps each SMS when it arrives, which is later than its start by the trip; on a
    // busy machine the first one's trip can be the longer, so one share of a second is allowed for it.
    // Sent all at once they would arrive within a few milliseconds.
    const times = servers.sandbox
      .messages()
      .slice(-BURST)
      .map(({ at }) => Date.parse(at));
    const spreadMs = Math.max(...times) - Math.min(...times);
    const startsSpreadMs = (BURST / laneRate(Lane.Bulk, MAX_PER_SECOND) - 1) * 1_000;
    expect(spreadMs).toBeGreaterThanOrEqual(startsSpreadMs - 1_000 / MAX_PER_SECOND);
    console.log(`maxPerSecond ${MAX_PER_SECOND}: ${BURST} SMS from two senders over ${spreadMs} ms, no 429`);
  });

  it('without it, a burst meets the service’s 429s: each is retried after its Retry-After, none UNKNOWN (at-most-once route)', async () => {
    // A service taking one a second: on a busy machine the burst's six sends can reach it over more
    // than a second, but never over six.
    await rateLimit('POST', 1);
    const senders = await twoSenders(undefined);
    const { ids, outcomes } = await burst(senders, 'alerts');
    expect(outcomes.filter((outcome) => outcome === SendOutcome.Retrying).length).toBeGreaterThan(0);
    expect(outcomes).not.toContain(SendOutcome.Unknown);
    for (const [index, id] of ids.entries()) {
      const record = await senders[0].record(id);
      if (outcomes[index] === SendOutcome.Retrying)
        expect(record).toMatchObject({
          state: MessageState.Pending,
          lastError: expect.objectContaining({ status: 429, delivery: 'not-sent' }),
        });
    }
    expect((await senders[0].store.getCircuit()).openedAt).toBeUndefined();
  });
});

describe('the sender concurrency that follows provider.maxPerSecond', () => {
  it(`keeps ⌈maxPerSecond × ${PROVIDER_RATE.assumedSendSeconds} s⌉ sends in flight: stream batches per shard of ${SENDER_CONCURRENCY}, and the local queue as one shard`, () => {
    expect(streamParallelization(undefined)).toBe(STREAM.parallelizationFactor);
    expect(localSendConcurrency(undefined)).toBe(STREAM.parallelizationFactor * SENDER_CONCURRENCY);
    expect(sendsInFlight(1)).toBe(1);
    expect([1, 5, 8, 9, 40, 80, 500].map(streamParallelization)).toEqual([1, 1, 1, 2, 5, 10, 10]);
    expect([1, 5, 40].map(localSendConcurrency)).toEqual([4, 4, 20]);
  });
});

describe("a bulk send's slot in its second", () => {
  /** `maxPerSecond: 8`: the bulk lane takes 6 a second, slot n in the n-th eighth of the second (125 ms). */
  async function bulkSender(offsetMs: number): Promise<{ relay: Harness; clock: TestClock; epochSecond: number }> {
    const epochSecond = Math.floor(Date.now() / 1_000);
    const clock = new TestClock(new Date(epochSecond * 1_000 + offsetMs));
    const relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      clock,
      config: (c) => ({ ...c, provider: { ...c.provider, maxPerSecond: 8 } }),
    });
    return { relay, clock, epochSecond };
  }

  it('goes at once when no send took the earlier slots of the second: it takes the slot of the present moment instead of giving up the second', async () => {
    // 700 ms in: the sixth eighth of the second; slots 1 to 5 went unused.
    const { relay, epochSecond } = await bulkSender(700);
    await takeSendSlot(relay.context, Lane.Bulk);
    expect(await relay.store.takeRateSlot({ epochSecond, maxPerSecond: 100 })).toBe(7);
  });

  it('after the bulk share of the second, waits for the next second without taking a slot of this one', async () => {
    // 800 ms in: past the bulk lane's 6 eighths.
    const { relay, clock, epochSecond } = await bulkSender(800);
    let got = false;
    const waiting = takeSendSlot(relay.context, Lane.Bulk).then(() => {
      got = true;
    });
    await vi.waitFor(async () => {
      // The critical lane still has every slot of this second: the bulk send took none.
      expect(await relay.store.takeRateSlot({ epochSecond, maxPerSecond: 100 })).toBe(1);
    });
    expect(got).toBe(false);
    clock.now = new Date((epochSecond + 1) * 1_000);
    await waiting;
    expect(await relay.store.takeRateSlot({ epochSecond: epochSecond + 1, maxPerSecond: 100 })).toBe(2);
  });
});

describe('the lanes share provider.maxPerSecond', () => {
  it('keeps the slots above the bulk share of a second for the critical lane: a bulk send waits for the next second, an alert goes', async () => {
    const second = Math.floor(Date.now() / 1_000) * 1_000;
    const clock = new TestClock(new Date(second));
    const relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      clock,
      config: (c) => ({ ...c, provider: { ...c.provider, maxPerSecond: 8 } }),
    });
    expect([laneRate(Lane.Bulk, 8), laneRate(Lane.Critical, 8)]).toEqual([6, 8]);

    await Promise.all(Array.from({ length: 6 }, async () => await takeSendSlot(relay.context, Lane.Bulk)));
    let bulkGot = false;
    const bulk = takeSendSlot(relay.context, Lane.Bulk).then(() => {
      bulkGot = true;
    });
    await takeSendSlot(relay.context, Lane.Critical);
    await takeSendSlot(relay.context, Lane.Critical);
    // Every slot of the second is taken: 6 bulk, 2 critical; the seventh bulk send is still waiting.
    expect(await relay.store.takeRateSlot({ epochSecond: second / 1_000, maxPerSecond: 100 })).toBe(9);
    expect(bulkGot).toBe(false);

    clock.advance(1_000);
    await bulk;
    expect(await relay.store.takeRateSlot({ epochSecond: second / 1_000 + 1, maxPerSecond: 100 })).toBe(2);
  });

  it('gives the bulk lane one slot a second at the lowest rates, where there is no share to keep', () => {
    expect([1, 2, 3, 4, 20].map((rate) => laneRate(Lane.Bulk, rate))).toEqual([1, 1, 2, 3, 15]);
  });
});
