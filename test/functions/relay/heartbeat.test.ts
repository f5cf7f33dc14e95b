import { afterEach, describe, expect, it } from 'vitest';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import { alertBody, bearer, harness, type Harness, OPS, SECRETS, TestClock, useRelayServers } from './support';

const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const MINUTE = 60_000;

type Config = Parameters<NonNullable<Parameters<typeof harness>[0]['config']>>[0];
/** Alertmanager's always-firing Watchdog alert: never texted itself, only watched. */
const withWatchdog = (config: Config): Config => ({
  ...config,
  routes: {
    ...config.routes,
    watchdog: {
      source: 'alertmanager',
      secret: 'alerts-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      when: 'false',
      heartbeat: { every: '5m', grace: '2m' },
    },
  },
});

const heartbeat = async (target: Harness) =>
  await target.ingest('watchdog', alertBody(), { headers: bearer(SECRETS.alertsToken) });

describe("the dead-man's switch", () => {
  it('sends one SMS when the route goes silent for every + grace, even with two sweepers racing and a restart, and one when it is back', async () => {
    // 00:12 UTC is 03:12 in Dar es Salaam.
    const clock = new TestClock(new Date('2026-11-26T00:12:00.000Z'));
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWatchdog, clock });
    const other = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withWatchdog,
      clock,
      tableName: relay.tableName,
    });

    expect(await heartbeat(relay)).toMatchObject({ status: 200, outcome: 'filtered' });
    clock.advance(7 * MINUTE);
    // Exactly every + grace: not yet.
    expect((await sweep(relay.context)).heartbeats).toEqual({ silent: 0, back: 0 });

    clock.advance(1_000);
    const racing = await Promise.all([
      sweep(relay.context),
      sweep(other.context),
      sweep(relay.context),
      sweep(other.context),
    ]);
    expect(racing.reduce((sum, report) => sum + report.heartbeats.silent, 0)).toBe(1);

    // A restart in the silence: nothing new, and the recorded SMS goes out.
    const restarted = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withWatchdog,
      clock,
      tableName: relay.tableName,
    });
    clock.advance(MINUTE);
    expect(await sweep(restarted.context)).toMatchObject({ heartbeats: { silent: 0, back: 0 }, sent: { sent: 1 } });
    clock.advance(20 * MINUTE);
    expect(await sweep(restarted.context)).toMatchObject({ heartbeats: { silent: 0, back: 0 }, sent: {} });

    // 00:59 UTC: back after 47 min.
    clock.advance(19 * MINUTE - 1_000);
    expect(await heartbeat(restarted)).toMatchObject({ status: 200, outcome: 'filtered' });
    const back = await Promise.all([sweep(relay.context), sweep(other.context), sweep(restarted.context)]);
    expect(back.reduce((sum, report) => sum + report.heartbeats.back, 0)).toBe(1);
    clock.advance(MINUTE);
    expect(await sweep(relay.context)).toMatchObject({ heartbeats: { silent: 0, back: 0 }, sent: { sent: 1 } });

    const notices = (await relay.records('watchdog')).filter((record) => record.notice !== undefined);
    expect(notices.map((record) => [record.notice, record.state, record.to])).toEqual([
      ['heartbeat-silent', MessageState.Sent, [OPS]],
      ['heartbeat-back', MessageState.Sent, [OPS]],
    ]);
    expect(servers.sandbox.messages().map((sent) => sent.message)).toEqual([
      "sms-relay: nothing from route 'watchdog' since 03:12, expected every 5m",
      "sms-relay: route 'watchdog' is back after 47 min (nothing from 03:12 to 03:59)",
    ]);
  });

  it('counts a route never heard from from the first sweep, and says nothing while the route is muted', async () => {
    const clock = new TestClock(new Date('2026-11-26T00:00:00.000Z'));
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWatchdog, clock });
    expect((await sweep(relay.context)).heartbeats).toEqual({ silent: 0, back: 0 });
    await relay.store.muteRoute({ route: 'watchdog', forSeconds: 3600, reason: 'alertmanager upgrade' });
    clock.advance(30 * MINUTE);
    expect((await sweep(relay.context)).heartbeats).toEqual({ silent: 0, back: 0 });
    clock.advance(31 * MINUTE);
    expect((await sweep(relay.context)).heartbeats).toEqual({ silent: 1, back: 0 });
    expect((await relay.records('watchdog')).map((record) => record.text)).toEqual([
      "sms-relay: nothing from route 'watchdog' since 03:00, expected every 5m",
    ]);
  });

  it('writes the last seen time at most once a minute however many webhooks come', async () => {
    const clock = new TestClock(new Date('2026-11-26T00:00:00.000Z'));
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withWatchdog, clock });
    for (let n = 0; n < 5; n += 1) {
      await heartbeat(relay);
      clock.advance(10_000);
    }
    expect(await relay.store.getHeartbeat('watchdog')).toEqual({ lastSeenAt: '2026-11-26T00:00:00.000Z' });
    clock.advance(10_000);
    await heartbeat(relay);
    expect(await relay.store.getHeartbeat('watchdog')).toEqual({ lastSeenAt: '2026-11-26T00:01:00.000Z' });
  });
});
