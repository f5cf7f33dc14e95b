import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { machineZone } from '../../../functions/core/time-format';
import { mutedReason } from '../../../functions/relay/mutes';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import { bearer, harness, type Harness, SECRETS, TestClock, useRelayServers } from './support';

const servers = useRelayServers({});
const DAR = 'Africa/Dar_es_Salaam';
/** A time on the `ops` route's clock (Dar es Salaam) as the relay on this machine names it. */
const onRouteClock = (time: string): string => (machineZone() === DAR ? time : `${time} ${DAR}`);
let relay: Harness;

async function post(text: string) {
  return await relay.ingest('ops', JSON.stringify({ message: text }), {
    headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
  });
}

describe("a mute's reason", () => {
  const route = { config: { timeZone: DAR } } as const;
  const now = new Date('2026-12-04T16:00:00.000Z'); // 19:00 in Dar es Salaam
  const mute = { route: 'ops', until: '2026-12-04T18:06:00.000Z', reason: 'db upgrade', mutedAt: now.toISOString() };

  it("names the route's zone when the relay's clock is another (a UTC server, as on AWS)", () => {
    expect(mutedReason(route, mute, now, 'UTC')).toBe(`muted until 21:06 ${DAR}: db upgrade`);
    expect(mutedReason(route, { ...mute, until: '2026-12-05T06:00:00.000Z' }, now, 'Europe/Berlin')).toBe(
      `muted until 2026-12-05 09:00 ${DAR}: db upgrade`,
    );
  });

  it("leaves the zone out when the relay runs on the route's clock, and never says how soon", () => {
    expect(mutedReason(route, mute, now, DAR)).toBe('muted until 21:06: db upgrade');
    expect(mutedReason(route, { ...mute, reason: '', until: '2026-12-04T16:10:00.000Z' }, now, DAR)).toBe(
      'muted until 19:10',
    );
  });
});

describe('a muted route', () => {
  afterEach(() => {
    expectNoLeaks(relay.logger);
  });

  it('records its messages DROPPED with the reason in the route time zone, never sends them, and sends again once the mute lapses', async () => {
    // 09:00 UTC is 12:00 in Dar es Salaam; two hours later is 14:00 there.
    const clock = new TestClock(new Date('2026-11-26T09:00:00.000Z'));
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, clock });
    await relay.store.muteRoute({ route: 'ops', forSeconds: 2 * 3600, reason: 'db upgrade' });

    clock.advance(30 * 60_000);
    const muted = await post('disk full');
    expect(muted).toMatchObject({
      status: 200,
      outcome: 'dropped',
      reason: `muted until ${onRouteClock('14:00')}: db upgrade`,
    });
    const [id] = muted.ids;
    expect(await relay.record(id!)).toMatchObject({
      state: MessageState.Dropped,
      reason: `muted until ${onRouteClock('14:00')}: db upgrade`,
      text: 'disk full',
      to: ['255754111222'],
    });
    // A planned mute counts Muted, never Dropped (whose alarm means a fault).
    expect(relay.metrics.total('Muted', 'ops')).toBe(1);
    expect(relay.metrics.total('Dropped', 'ops')).toBe(0);
    expect(await sweep(relay.context)).toMatchObject({ sent: {} });

    // A restart keeps the mute: it is in the table.
    const restarted = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      clock,
      tableName: relay.tableName,
    });
    expect(
      await restarted.ingest('ops', JSON.stringify({ message: 'still muted' }), {
        headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
      }),
    ).toMatchObject({ outcome: 'dropped' });

    clock.advance(90 * 60_000);
    const after = await post('disk fine');
    expect(after.status).toBe(202);
    expect(await sendMessage(relay.context, after.ids[0]!)).toBe(SendOutcome.Sent);
    expect(await sweep(relay.context)).toMatchObject({ sent: {} });
    expect(servers.sandbox.messages().map((sent) => sent.message)).toEqual(['disk fine']);
  });

  it('drops a message accepted before the mute that is still waiting to be sent (a retry, a backlog)', async () => {
    const clock = new TestClock(new Date('2026-11-26T09:00:00.000Z'));
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, clock });
    const waiting = await post('queued before the mute');
    expect(waiting.status).toBe(202);
    clock.advance(60_000);
    await relay.store.muteRoute({ route: 'ops', forSeconds: 600, reason: 'maintenance' });

    expect(await sweep(relay.context)).toMatchObject({ sent: { dropped: 1 } });
    expect(await relay.record(waiting.ids[0]!)).toMatchObject({
      state: MessageState.Dropped,
      reason: `muted until ${onRouteClock('12:11')}: maintenance`,
    });
    expect(relay.metrics.total('Muted', 'ops')).toBe(1);
    expect(relay.metrics.total('Dropped', 'ops')).toBe(0);
    expect(servers.sandbox.messages()).toEqual([]);
  });

  it('unmuted, it sends at once; other routes were never muted', async () => {
    const clock = new TestClock(new Date('2026-11-26T09:00:00.000Z'));
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, clock });
    await relay.store.muteRoute({ route: 'ops', forSeconds: 3600, reason: '' });
    expect(await post('muted')).toMatchObject({ outcome: 'dropped', reason: `muted until ${onRouteClock('13:00')}` });
    const other = await relay.ingest('ops-alo', JSON.stringify({ message: 'other route' }), {
      headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
    });
    expect(other.status).toBe(202);
    expect(await relay.store.unmuteRoute({ route: 'ops' })).toBe(true);
    expect((await post('unmuted')).status).toBe(202);
  });
});
