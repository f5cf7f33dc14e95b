import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import { machineZone } from '../../../functions/core/time-format';
import { DIGEST } from '../../../functions/core/defaults';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import { bearer, harness, type Harness, OPS, SECRETS, T0, TestClock, useRelayServers } from './support';

/** The routes' zone as a stored reason names it: only when the relay's clock (this machine's) reads otherwise. */
const DAR_NAMED = machineZone() === 'Africa/Dar_es_Salaam' ? '' : ' Africa/Dar_es_Salaam';

const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const MINUTE = 60_000;
const AFTER_GRACE = DIGEST.graceMs + 1;

/** T0 is Monday 2025-06-02 11:00 in Dar es Salaam (08:00 UTC). */
const withWindows = (config: RelayConfigInput): RelayConfigInput => ({
  ...config,
  routes: {
    ...config.routes,
    orders: {
      source: 'generic',
      secret: 'generic-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      digest: { window: '10m' },
    },
    night: {
      source: 'generic',
      secret: 'generic-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      quietHours: { from: '10:30', to: '12:00', days: ['mon'] },
    },
    // A 90 s window; quiet hours start a minute after the first message.
    evening: {
      source: 'generic',
      secret: 'generic-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      digest: { window: '90s' },
      quietHours: { from: '11:01', to: '12:00', days: ['mon'] },
    },
    templated: {
      source: 'generic',
      secret: 'generic-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      digest: { window: '5m' },
      digestTemplate:
        '{{ route }}: {{ count }} between {{ first | date: "%H:%M" }} and {{ last | date: "%H:%M" }}, newest {{ messages | last }}',
    },
  },
});

async function post(on: Harness, route: string, text: string) {
  const response = await on.ingest(route, JSON.stringify({ message: text }), {
    headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
  });
  expect(response.status).toBe(202);
  return { id: (response.body['ids'] as string[])[0]!, body: response.body };
}

describe('digest windows', () => {
  it('defers every message of a window, the first included, and sends one digest SMS at its end', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    const first = await post(relay, 'orders', 'Order #1042 TZS 25,000');
    relay.clock.advance(MINUTE);
    const second = await post(relay, 'orders', 'Order #1043 TZS 12,500');
    relay.clock.advance(MINUTE);
    const third = await post(relay, 'orders', 'Order #1044 TZS 8,000');

    const closesAt = new Date(T0.getTime() + 10 * MINUTE).toISOString();
    expect(first.body['deferredUntil']).toBe(closesAt);
    for (const { id } of [first, second, third]) {
      expect(await relay.record(id)).toMatchObject({
        state: MessageState.Deferred,
        nextAttemptAt: closesAt,
        reason: `digest window until 11:10${DAR_NAMED}: goes out in the route's digest`,
      });
    }
    expect(relay.metrics.total('Deferred', 'orders')).toBe(3);

    // Still open, then ended but inside the grace: nothing yet.
    relay.clock.advance(5 * MINUTE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 0, sent: {} });
    relay.clock.now = new Date(Date.parse(closesAt) + 1);
    expect(await sweep(relay.context)).toMatchObject({ digests: 0 });
    relay.clock.now = new Date(Date.parse(closesAt) + AFTER_GRACE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 1, sent: { sent: 1 } });
    expect(await sweep(relay.context)).toMatchObject({ digests: 0, sent: {} });

    expect(
      servers.sandbox
        .messages()
        .map((message) => [message.message, message.recipients.map((recipient) => recipient.phoneNumber)]),
    ).toEqual([['3 messages in 10 min: Order #1042 TZS 25,000; Order #1043 TZS 12,500; Order #1044 TZS 8,000', [OPS]]]);
    const digest = (await relay.records('orders')).find((record) => record.digestOf !== undefined)!;
    expect(digest).toMatchObject({
      state: MessageState.Sent,
      to: [OPS],
      senderId: 'OPS',
      digestOf: [first.id, second.id, third.id],
      attempts: 1,
    });
    for (const { id } of [first, second, third]) {
      expect(await relay.record(id)).toMatchObject({
        state: MessageState.Digested,
        digestId: digest.id,
        reason: `sent in digest ${digest.id}`,
      });
    }

    // The next message opens the next window.
    const later = await post(relay, 'orders', 'Order #1045 TZS 1,000');
    expect(await relay.record(later.id)).toMatchObject({
      state: MessageState.Deferred,
      nextAttemptAt: new Date(relay.clock.now.getTime() + 10 * MINUTE).toISOString(),
    });
  });

  it('keeps the window across a restart: a new process joins it and one digest carries both sides', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    const before = await post(relay, 'orders', 'before the restart');
    // Another process on the same table, with its own clock: nothing of the window lives in memory.
    const restarted = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withWindows,
      tableName: relay.tableName,
      clock: new TestClock(new Date(T0.getTime() + 4 * MINUTE)),
    });
    const after = await post(restarted, 'orders', 'after the restart');
    expect((await restarted.record(after.id)).nextAttemptAt).toBe((await relay.record(before.id)).nextAttemptAt);

    restarted.clock.now = new Date(T0.getTime() + 10 * MINUTE + AFTER_GRACE);
    expect(await sweep(restarted.context)).toMatchObject({ digests: 1, sent: { sent: 1 } });
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual([
      '2 messages in 10 min: before the restart; after the restart',
    ]);
    expectNoLeaks(restarted.logger);
  });

  it('records exactly one digest when two sweepers race for the same window', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    const ids = [];
    for (let i = 1; i <= 6; i += 1) {
      ids.push((await post(relay, 'orders', `order ${i}`)).id);
      relay.clock.advance(1000);
    }
    const end = new Date(T0.getTime() + 10 * MINUTE + AFTER_GRACE);
    const other = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withWindows,
      tableName: relay.tableName,
      clock: new TestClock(end),
    });
    relay.clock.now = end;

    const reports = await Promise.all([
      sweep(relay.context),
      sweep(other.context),
      sweep(relay.context),
      sweep(other.context),
    ]);
    expect(reports.reduce((sum, report) => sum + report.digests, 0)).toBe(1);
    const digests = (await relay.records('orders')).filter((record) => record.digestOf !== undefined);
    expect(digests).toHaveLength(1);
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual([
      '6 messages in 10 min: order 1; order 2; order 3; order 4; order 5; order 6',
    ]);
    for (const id of ids)
      expect(await relay.record(id)).toMatchObject({ state: MessageState.Digested, digestId: digests[0]!.id });
    expectNoLeaks(other.logger);
  });

  it('sends a record written after its window was digested in the next digest, never in none', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    const on = await post(relay, 'orders', 'on time');
    const until = (await relay.record(on.id)).nextAttemptAt!;
    relay.clock.now = new Date(Date.parse(until) + AFTER_GRACE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 1 });
    // A straggler of the same window (an accept that outlived its time-out), written afterwards.
    const late = await relay.store.acceptWebhook({
      route: 'orders',
      dedupeKey: randomUUID(),
      windowSeconds: 60,
      now: new Date(Date.parse(until) - 1000),
      messages: [
        {
          index: 0,
          part: 1,
          parts: 1,
          text: 'late',
          to: [OPS],
          encoding: 'GSM-7',
          characters: 4,
          segments: 1,
          delivery: 'at-most-once',
          state: MessageState.Deferred,
          reason: 'digest window',
          nextAttemptAt: new Date(until),
        },
      ],
    });
    // The first sweep finds the window digested without it and moves it to the next millisecond's window; the next sends that.
    await sweep(relay.context);
    await sweep(relay.context);
    expect(await relay.record(late.ids[0]!)).toMatchObject({ state: MessageState.Digested });
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual(['on time', 'late']);
  });

  it('still sends the deferred records of a route whose digest was removed from the config meanwhile', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    await post(relay, 'orders', 'Order #7');
    relay.clock.advance(1000);
    await post(relay, 'orders', 'Order #8');
    const withoutDigest = (config: RelayConfigInput): RelayConfigInput => {
      const routes = withWindows(config).routes;
      const { digest: _removed, ...orders } = routes['orders']!;
      return { ...config, routes: { ...routes, orders } };
    };
    const restarted = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withoutDigest,
      tableName: relay.tableName,
      clock: new TestClock(new Date(T0.getTime() + 10 * MINUTE + AFTER_GRACE)),
    });
    expect(await sweep(restarted.context)).toMatchObject({ digests: 1, sent: { sent: 1 } });
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual([
      '2 messages until 11:10: Order #7; Order #8',
    ]);
    expectNoLeaks(restarted.logger);
  });

  it('renders the route digestTemplate with count, messages, first, last and route in the route zone', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    await post(relay, 'templated', 'disk 91%');
    relay.clock.advance(2 * MINUTE);
    await post(relay, 'templated', 'disk 97%');
    relay.clock.now = new Date(T0.getTime() + 5 * MINUTE + AFTER_GRACE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 1, sent: { sent: 1 } });
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual([
      'templated: 2 between 11:00 and 11:02, newest disk 97%',
    ]);
  });

  it('fits a long digest into one SMS', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    for (let i = 0; i < 12; i += 1) {
      await post(relay, 'orders', `Order #${1042 + i} TZS ${(25 + i) * 1000}`);
      relay.clock.advance(1000);
    }
    relay.clock.now = new Date(T0.getTime() + 10 * MINUTE + AFTER_GRACE);
    await sweep(relay.context);
    const [sms] = servers.sandbox.messages();
    expect(sms!.message.length).toBeLessThanOrEqual(160);
    expect(sms!.message).toMatch(/^12 messages in 10 min: Order #1042 TZS 25000; Order #1043 TZS 26000; .*\.\.\.$/);
  });
});

describe('quiet hours', () => {
  it('defers what arrives in quiet hours to their end, then sends one digest; after them messages go at once', async () => {
    // 11:00 local, inside 10:30–12:00 on a Monday.
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    const a = await post(relay, 'night', 'backup failed');
    relay.clock.advance(20 * MINUTE);
    const b = await post(relay, 'night', 'backup failed again');
    const end = '2025-06-02T09:00:00.000Z';
    expect(await relay.record(a.id)).toMatchObject({
      state: MessageState.Deferred,
      nextAttemptAt: end,
      reason: `quiet hours until 12:00${DAR_NAMED}: goes out in the route's digest`,
    });
    expect((await relay.record(b.id)).nextAttemptAt).toBe(end);
    expect(await sweep(relay.context)).toMatchObject({ digests: 0, sent: {} });

    relay.clock.now = new Date(Date.parse(end) + AFTER_GRACE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 1, sent: { sent: 1 } });
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual([
      '2 messages since 10:30: backup failed; backup failed again',
    ]);

    // 12:00 and after: not quiet, so sent on its own (PENDING).
    const c = await post(relay, 'night', 'backup ok');
    expect((await relay.record(c.id)).state).toBe(MessageState.Pending);
  });
});

describe('digest windows and quiet hours together', () => {
  it('sends a window that ends inside quiet hours in the quiet period digest, at its end', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    // 11:00: not quiet yet, so it opens a 90 s window; the window would end at 11:01:30, a quiet time.
    const first = await post(relay, 'evening', 'backup started');
    const quietEnd = '2025-06-02T09:00:00.000Z'; // 12:00 in Dar es Salaam
    expect(first.body['deferredUntil']).toBe(quietEnd);
    expect(await relay.record(first.id)).toMatchObject({
      state: MessageState.Deferred,
      nextAttemptAt: quietEnd,
      reason: `digest window, then quiet hours until 12:00${DAR_NAMED}: goes out in the route's digest`,
    });
    relay.clock.advance(MINUTE);
    const second = await post(relay, 'evening', 'backup finished');
    expect((await relay.record(second.id)).nextAttemptAt).toBe(quietEnd);

    // Where the window would have ended, and well into quiet hours: nothing.
    relay.clock.now = new Date(T0.getTime() + 90_000 + AFTER_GRACE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 0, sent: {} });
    relay.clock.now = new Date(T0.getTime() + 30 * MINUTE);
    const third = await post(relay, 'evening', 'backup verified');
    expect(await sweep(relay.context)).toMatchObject({ digests: 0, sent: {} });
    expect(servers.sandbox.messages()).toEqual([]);

    relay.clock.now = new Date(Date.parse(quietEnd) + AFTER_GRACE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 1, sent: { sent: 1 } });
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual([
      '3 messages since 11:01: backup started; backup finished; backup verified',
    ]);
    for (const { id } of [first, second, third]) expect((await relay.record(id)).state).toBe(MessageState.Digested);
  });
});

describe('a muted route', () => {
  it('drops the records of a digest due while it is muted, with the mute reason, and sends nothing then or after the mute', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWindows });
    const window = [await post(relay, 'orders', 'Order #1042'), await post(relay, 'orders', 'Order #1043')];
    const quiet = await post(relay, 'night', 'backup failed');
    // Both routes muted after their messages were deferred, until 12:30 (after both windows end).
    for (const route of ['orders', 'night'])
      await relay.store.muteRoute({ route, forSeconds: 90 * 60, reason: 'db upgrade', now: relay.clock.now });

    relay.clock.now = new Date(T0.getTime() + 10 * MINUTE + AFTER_GRACE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 0, sent: {} });
    relay.clock.now = new Date(Date.parse('2025-06-02T09:00:00.000Z') + AFTER_GRACE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 0, sent: {} });
    for (const { id } of [...window, quiet])
      expect(await relay.record(id)).toMatchObject({
        state: MessageState.Dropped,
        reason: `muted until 12:30${DAR_NAMED}: db upgrade`,
      });
    expect(relay.metrics.total('Muted', 'orders')).toBe(2);
    expect(relay.metrics.total('Muted', 'night')).toBe(1);
    expect(relay.metrics.total('Dropped', 'orders') + relay.metrics.total('Dropped', 'night')).toBe(0);

    // Dropped, not held: the end of the mute sends nothing.
    relay.clock.now = new Date(T0.getTime() + 2 * 60 * MINUTE);
    expect(await sweep(relay.context)).toMatchObject({ digests: 0, sent: {} });
    expect(servers.sandbox.messages()).toEqual([]);
    expect((await relay.records('orders')).filter((record) => record.digestOf !== undefined)).toEqual([]);
  });
});
