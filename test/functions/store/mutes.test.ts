import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MUTE_KNOWN_MS } from '../../../functions/core/defaults';
import { StoreError } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const HOUR = 3_600_000;

describe('muteRoute, getMute, unmuteRoute, listMutes', () => {
  it('keeps a mute in the table until it lapses by itself', async () => {
    const { store, rawItem } = await newTable(db);
    const mute = await store.muteRoute({ route: 'alerts', forSeconds: 7200, reason: ' db upgrade ', now: T0 });

    expect(mute).toEqual({
      route: 'alerts',
      until: at(2 * HOUR).toISOString(),
      reason: 'db upgrade',
      mutedAt: T0.toISOString(),
    });
    expect(await store.getMute({ route: 'alerts', now: at(2 * HOUR - 1) })).toEqual(mute);
    expect(await store.getMute({ route: 'alerts', now: at(2 * HOUR) })).toBeUndefined();
    expect(await store.getMute({ route: 'other', now: T0 })).toBeUndefined();
    const item = await rawItem('MUTES', 'ROUTE#alerts');
    expect(item?.kind?.S).toBe('mute');
    // TTL: a day after it lapses.
    expect(item?.expiresAt?.N).toBe(String(T0.getTime() / 1000 + 7200 + 86_400));
  });

  it('a second mute replaces the first; unmute ends it now and says whether one was in force', async () => {
    const { store } = await newTable(db);
    await store.muteRoute({ route: 'alerts', forSeconds: 600, reason: 'first', now: T0 });
    await store.muteRoute({ route: 'alerts', forSeconds: 3600, reason: 'second', now: at(60_000) });
    expect(await store.getMute({ route: 'alerts', now: at(700_000) })).toMatchObject({ reason: 'second' });

    expect(await store.unmuteRoute({ route: 'alerts', now: at(800_000) })).toBe(true);
    expect(await store.getMute({ route: 'alerts', now: at(800_000) })).toBeUndefined();
    expect(await store.unmuteRoute({ route: 'alerts', now: at(800_000) })).toBe(false);
    expect(await store.unmuteRoute({ route: 'never', now: at(800_000) })).toBe(false);
  });

  it('lists the mutes in force, by route, all or those asked for', async () => {
    const { store } = await newTable(db);
    await store.muteRoute({ route: 'b', forSeconds: 60, reason: 'short', now: T0 });
    await store.muteRoute({ route: 'a', forSeconds: 3600, reason: 'long', now: T0 });
    await store.muteRoute({ route: 'c', forSeconds: 3600, reason: 'not asked', now: T0 });

    expect((await store.listMutes({ routes: ['a', 'b', 'd'], now: at(1000) })).map((mute) => mute.route)).toEqual([
      'a',
      'b',
    ]);
    expect((await store.listMutes({ routes: ['a', 'b', 'd'], now: at(61_000) })).map((mute) => mute.route)).toEqual([
      'a',
    ]);
    expect(await store.listMutes({ routes: [], now: T0 })).toEqual([]);
    expect((await store.listMutes({ now: at(1000) })).map((mute) => mute.route)).toEqual(['a', 'b', 'c']);
  });

  it('refuses a mute of no time or of more than 30 days, and writes nothing', async () => {
    const { store, scan } = await newTable(db);
    for (const forSeconds of [0, -5, 1.5, 31 * 86_400]) {
      await expect(store.muteRoute({ route: 'alerts', forSeconds, reason: 'x' })).rejects.toThrow(StoreError);
    }
    expect(await scan()).toEqual([]);
  });
});

describe('reserveLimit: credits per calendar month', () => {
  // Dar es Salaam is UTC+3: its November starts at 2026-10-31T21:00Z.
  const NOVEMBER = {
    month: '2026-11',
    startsAt: Date.parse('2026-10-31T21:00:00Z'),
    endsAt: Date.parse('2026-11-30T21:00:00Z'),
  };
  const month = (maxPerMonth: number, estimate = 10) => ({ maxPerMonth, estimate, month: NOVEMBER });

  it('admits exactly the budget of 30 concurrent reservations and returns the month used', async () => {
    const { store, rawItem } = await newTable(db);
    const results = await Promise.all(
      Array.from({ length: 30 }, () => store.reserveLimit({ route: 'shop', monthCredits: month(100) })),
    );
    const allowed = results.filter((result) => result.allowed);
    expect(allowed).toHaveLength(10);
    expect(results.filter((result) => !result.allowed)).toEqual(
      Array(20).fill({ allowed: false, reason: 'month-credits', window: 'M#2026-11' }),
    );
    expect(
      allowed.map((result) => (result.allowed ? result.month?.reserved : undefined)).sort((a, b) => a! - b!),
    ).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    const item = await rawItem('LIMIT#shop', 'M#2026-11');
    expect([item?.credits?.N, item?.held?.N, item?.windowEndsAt?.N]).toEqual([
      '100',
      '20',
      String(NOVEMBER.endsAt / 1000),
    ]);
  });

  it('counts the credits actually spent too, and gives back the day it took when the month refuses', async () => {
    const { store, rawItem } = await newTable(db);
    await store.recordCreditsSpent({ route: 'shop', deducted: 95, day: false, month: NOVEMBER, now: T0 });
    expect(await rawItem('LIMIT#shop', 'D#2025-03-01')).toBeUndefined();
    const refused = await store.reserveLimit({
      route: 'shop',
      now: T0,
      credits: { maxPerDay: 1000, estimate: 10 },
      monthCredits: month(100),
    });
    expect(refused).toMatchObject({ allowed: false, reason: 'month-credits' });
    expect((await rawItem('LIMIT#shop', 'D#2025-03-01'))?.credits?.N).toBe('0');
  });

  it('marks the 80 % warning once of racing callers, and the next reservation reads it as warned', async () => {
    const { store } = await newTable(db);
    for (let n = 0; n < 8; n += 1) await store.reserveLimit({ route: 'shop', monthCredits: month(100) });
    const marks = await Promise.all(
      Array.from({ length: 6 }, () => store.markBudgetWarned({ route: 'shop', window: 'M#2026-11' })),
    );
    expect(marks.filter(Boolean)).toHaveLength(1);
    expect(await store.reserveLimit({ route: 'shop', monthCredits: month(100) })).toMatchObject({
      allowed: true,
      month: { reserved: 90, warned: true },
    });
    // No item, no mark: a month never reserved cannot be marked.
    expect(await store.markBudgetWarned({ route: 'shop', window: 'M#2026-12' })).toBe(false);
  });
});

describe('heartbeat', () => {
  it('writes the last seen time at most once per interval, whoever writes', async () => {
    const { store } = await newTable(db);
    expect(await store.touchHeartbeat({ route: 'watchdog', intervalMs: 60_000, now: T0 })).toBe(true);
    const racing = await Promise.all(
      Array.from({ length: 5 }, () => store.touchHeartbeat({ route: 'watchdog', intervalMs: 60_000, now: at(30_000) })),
    );
    expect(racing.filter(Boolean)).toHaveLength(0);
    expect(await store.touchHeartbeat({ route: 'watchdog', intervalMs: 60_000, now: at(60_000) })).toBe(true);
    expect(await store.getHeartbeat('watchdog')).toEqual({ lastSeenAt: at(60_000).toISOString() });
  });

  it('one of racing sweepers reports a silence, none when a webhook came after it, one reports the return', async () => {
    const { store } = await newTable(db);
    await store.touchHeartbeat({ route: 'watchdog', intervalMs: 60_000, now: T0 });
    const since = T0.toISOString();
    const silent = await Promise.all(
      Array.from({ length: 4 }, () => store.heartbeat.silent({ route: 'watchdog', since, now: at(8 * 60_000) })),
    );
    expect(silent.filter(Boolean)).toHaveLength(1);
    expect(await store.heartbeat.silentNotified({ route: 'watchdog', since })).toBe(true);
    expect(await store.getHeartbeat('watchdog')).toMatchObject({ silentSince: since, silentNotified: true });

    await store.touchHeartbeat({ route: 'watchdog', intervalMs: 60_000, now: at(47 * 60_000) });
    const seenAt = at(47 * 60_000).toISOString();
    const back = await Promise.all(
      Array.from({ length: 4 }, () => store.heartbeat.back({ route: 'watchdog', since, seenAt })),
    );
    expect(back.filter(Boolean)).toHaveLength(1);
    expect(await store.getHeartbeat('watchdog')).toEqual({ lastSeenAt: seenAt, backSince: since, backSeenAt: seenAt });
    expect(await store.heartbeat.backNotified({ route: 'watchdog', since })).toBe(true);
    expect(await store.heartbeat.backNotified({ route: 'watchdog', since })).toBe(false);
    expect(await store.getHeartbeat('watchdog')).toEqual({ lastSeenAt: seenAt });
  });

  it('does not report a silence that a webhook has already ended', async () => {
    const { store } = await newTable(db);
    await store.touchHeartbeat({ route: 'watchdog', intervalMs: 60_000, now: T0 });
    await store.touchHeartbeat({ route: 'watchdog', intervalMs: 60_000, now: at(9 * 60_000) });
    expect(await store.heartbeat.silent({ route: 'watchdog', since: T0.toISOString(), now: at(9 * 60_000) })).toBe(
      false,
    );
  });

  it('arms a route never heard from once, keeping the first time', async () => {
    const { store } = await newTable(db);
    await store.armHeartbeat({ route: 'watchdog', now: T0 });
    await store.armHeartbeat({ route: 'watchdog', now: at(60_000) });
    expect(await store.getHeartbeat('watchdog')).toEqual({ armedAt: T0.toISOString() });
  });
});

describe('the mute a process read', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is kept for MUTE_KNOWN_MS: a mute set by another process applies after it, one set through this store at once', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-26T10:00:00Z') });
    const { store: ingest, storeWith } = await newTable(db);
    const cli = storeWith(db.client);
    expect(await ingest.getMute({ route: 'alerts', now: T0 })).toBeUndefined();

    // Another process (the CLI against a deployed stack) mutes the route.
    await cli.muteRoute({ route: 'alerts', forSeconds: 3600, reason: 'db upgrade', now: T0 });
    vi.advanceTimersByTime(MUTE_KNOWN_MS - 1);
    expect(await ingest.getMute({ route: 'alerts', now: T0 })).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(await ingest.getMute({ route: 'alerts', now: T0 })).toMatchObject({ reason: 'db upgrade' });
    // The sweeper's consistent read never takes the kept one.
    await cli.unmuteRoute({ route: 'alerts', now: at(30_000) });
    expect(await ingest.getMute({ route: 'alerts', now: at(30_000), consistent: true })).toBeUndefined();

    // Through this store (the local runtime, the console): at once, both ways.
    await ingest.unmuteRoute({ route: 'alerts', now: at(60_000) });
    expect(await ingest.getMute({ route: 'alerts', now: at(60_000) })).toBeUndefined();
    await ingest.muteRoute({ route: 'alerts', forSeconds: 600, reason: 'again', now: at(60_000) });
    expect(await ingest.getMute({ route: 'alerts', now: at(60_000) })).toMatchObject({ reason: 'again' });
    // Whether the kept mute is in force is judged by the caller's clock.
    expect(await ingest.getMute({ route: 'alerts', now: at(60_000 + 600_000) })).toBeUndefined();
  });
});
