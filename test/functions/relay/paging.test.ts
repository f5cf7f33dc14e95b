import { afterEach, describe, expect, it } from 'vitest';
import { machineZone } from '../../../functions/core/time-format';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import { ingestWebhook } from '../../../functions/relay/ingest';
import { recordEscalations } from '../../../functions/relay/paging';
import { RelayMetric } from '../../../functions/relay/ports';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import { alertBody, bearer, harness, type Harness, ONCALL, OPS, SECRETS, useRelayServers } from './support';

/** The routes' zone as a stored reason names it: only when the relay's clock (this machine's) reads otherwise. */
const DAR_NAMED = machineZone() === 'Africa/Dar_es_Salaam' ? '' : ' Africa/Dar_es_Salaam';

const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const MINUTE = 60_000;
const LINK = /^(.+) https:\/\/sms\.example\.co\.tz\/a\/([A-Za-z0-9_-]{22})$/;

const withPaging = (config: RelayConfigInput): RelayConfigInput => ({
  ...config,
  routes: {
    ...config.routes,
    paged: {
      source: 'alertmanager',
      secret: 'alerts-token',
      recipients: ['0712345678'],
      when: "status == 'firing'",
      template: '[{{ status | upcase }}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary }}',
      senderId: 'ALERTS',
      escalate: [{ after: '10m', to: ['0754111222'] }],
      renotify: { every: '5m', max: 1 },
      ack: { baseUrl: 'https://sms.example.co.tz' },
    },
  },
});

const fire = async (status = 'firing') =>
  await relay.ingest('paged', alertBody({ status }), { headers: bearer(SECRETS.alertsToken) });
const pending = async () => (await relay.records('paged')).filter((record) => record.state !== MessageState.Dropped);

describe('paging: incidents, escalation and the acknowledge link', () => {
  it('opens one incident, links each SMS, escalates once when due, renotifies, and stops at a resolve', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withPaging });
    expect((await fire()).status).toBe(202);
    const [first] = await pending();
    expect(first!.to).toEqual([ONCALL]);
    const [, text, token] = LINK.exec(first!.text) ?? [];
    expect(text).toContain('[FIRING] DiskAlmostFull');
    const [incident] = await relay.store.listOpenIncidents();
    expect(incident).toMatchObject({ route: 'paged', actions: 0, level: 0 });
    expect(await relay.store.findAckToken(token!)).toMatchObject({ number: ONCALL, incident: { id: incident!.id } });

    // Alertmanager's repeat_interval: the same group fires again; the incident and its plan stay.
    relay.clock.advance(4 * MINUTE);
    expect((await fire()).status).toBe(202);
    const repeat = (await pending())[1]!;
    expect(LINK.exec(repeat.text)?.[2]).toBe(token);
    expect(await relay.store.listOpenIncidents()).toEqual([
      expect.objectContaining({ id: incident!.id, actions: 0, nextDueAt: incident!.nextDueAt }),
    ]);

    relay.clock.advance(5 * MINUTE);
    expect((await recordEscalations(relay.context, relay.clock.now)).ids).toEqual([]);
    relay.clock.advance(MINUTE);
    // Two sweepers at once: one escalation SMS between them.
    const runs = await Promise.all([
      recordEscalations(relay.context, relay.clock.now),
      recordEscalations(relay.context, relay.clock.now),
    ]);
    const escalation = (await pending()).filter((record) => record.to.includes(OPS));
    expect(escalation).toHaveLength(1);
    // The escalation's record names its incident: the story's delivery states and `incidents` read it.
    expect(escalation[0]).toMatchObject({ incident: incident!.id });
    expect(runs.flatMap((run) => run.ids)).toContain(escalation[0]!.id);
    const opsToken = LINK.exec(escalation[0]!.text)?.[2];
    expect(opsToken).toBeDefined();
    expect(opsToken).not.toBe(token);
    expect(await relay.store.getIncident(incident!.id)).toMatchObject({ actions: 1, level: 1 });
    expect(relay.metrics.total(RelayMetric.EscalationsSent, 'paged')).toBe(1);

    // The renotify, 5 minutes after the last step, through the sweep itself.
    relay.clock.advance(5 * MINUTE);
    await sweep(relay.context);
    expect((await pending()).filter((record) => record.to.includes(OPS))).toHaveLength(2);
    relay.clock.advance(10 * MINUTE);
    expect(await recordEscalations(relay.context, relay.clock.now)).toMatchObject({ ids: [], unacknowledged: 1 });

    // A resolve, though the route's filter sends no SMS for it, closes the incident.
    expect((await fire('resolved')).status).toBe(200);
    expect(await relay.store.listOpenIncidents()).toEqual([]);
    expect(await relay.store.getIncident(incident!.id)).toMatchObject({ state: 'RESOLVED' });
    expect(relay.logger.text()).not.toContain(token);
  });

  it("links every SMS of an ack: {} incident to the URL its webhook came in on, the sweeper's escalations included", async () => {
    // As on AWS: ingest knows the API's URL from the request, the sweeper knows none.
    const api = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: (config) => {
        const paged = withPaging(config);
        return { ...paged, routes: { ...paged.routes, paged: { ...paged.routes!['paged']!, ack: {} } } };
      },
    });
    const answer = await ingestWebhook(
      { ...relay.context, publicUrl: api },
      {
        routeId: 'paged',
        body: new TextEncoder().encode(alertBody()),
        headers: { authorization: `Bearer ${SECRETS.alertsToken}` },
        query: {},
        receivedAt: relay.clock.now,
      },
    );
    expect(answer.status).toBe(202);
    const onAws = /^.+ https:\/\/abc123\.execute-api\.eu-west-1\.amazonaws\.com\/a\/[A-Za-z0-9_-]{22}$/;
    expect((await pending())[0]!.text).toMatch(onAws);
    expect(relay.context.publicUrl).toBeUndefined();

    relay.clock.advance(10 * MINUTE);
    await recordEscalations(relay.context, relay.clock.now);
    relay.clock.advance(5 * MINUTE);
    await recordEscalations(relay.context, relay.clock.now);
    const later = (await pending()).filter((record) => record.to.includes(OPS));
    expect(later.map((record) => record.text)).toEqual([expect.stringMatching(onAws), expect.stringMatching(onAws)]);
    expect(relay.logger.text()).not.toContain('acknowledge link left out');
  });

  it("opens no incident for a sender's retry of a delivery whose incident was acknowledged", async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withPaging });
    const body = alertBody();
    const post = async () => await relay.ingest('paged', body, { headers: bearer(SECRETS.alertsToken) });
    expect((await post()).status).toBe(202);
    const [incident] = await relay.store.listOpenIncidents();
    await relay.store.closeIncident(incident!.id, { state: 'ACKNOWLEDGED', by: 'cli' });
    relay.clock.advance(MINUTE);
    expect((await post()).body).toMatchObject({ status: 'duplicate' });
    expect(await relay.store.listOpenIncidents()).toEqual([]);
  });

  it("closes the incident a sender's retry opened after the first one was resolved: a duplicate sends nothing, so nothing may escalate", async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withPaging });
    const body = alertBody();
    const post = async () => await relay.ingest('paged', body, { headers: bearer(SECRETS.alertsToken) });
    expect((await post()).status).toBe(202);
    const [first] = await relay.store.listOpenIncidents();
    await relay.store.closeIncident(first!.id, { state: 'RESOLVED', by: 'cli', now: relay.clock.now });
    relay.clock.advance(MINUTE);
    expect((await post()).body).toMatchObject({ status: 'duplicate' });
    expect(await relay.store.listOpenIncidents()).toEqual([]);
    // Past the escalation's 10 minutes: nobody is paged for the retry.
    relay.clock.advance(15 * MINUTE);
    expect((await recordEscalations(relay.context, relay.clock.now)).ids).toEqual([]);
    expect(await pending()).toHaveLength(1);
  });

  it('opens no incident on a muted route', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withPaging });
    await relay.store.muteRoute({ route: 'paged', forSeconds: 3600, reason: 'maintenance', now: relay.clock.now });
    expect((await fire()).status).toBe(200);
    expect(await relay.store.listOpenIncidents()).toEqual([]);
  });
});

describe('paging: an open incident whose route left the config', () => {
  it('is counted overdue and does not stop the escalation of the others', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withPaging });
    // Opened by a config that had a route "retired"; the config now running has none.
    await relay.store.openIncident({
      route: 'retired',
      key: 'retired-alert',
      text: '[FIRING] Old',
      sentTo: '2557****678',
      nextDueAt: new Date(relay.clock.now.getTime() + MINUTE),
      now: relay.clock.now,
    });
    expect((await fire()).status).toBe(202);
    relay.clock.advance(11 * MINUTE);
    const run = await recordEscalations(relay.context, relay.clock.now);
    expect((await pending()).filter((record) => record.to.includes(OPS))).toHaveLength(1);
    expect(run.ids).toHaveLength(1);
    // Its step, 10 minutes late with nobody to take it: the IncidentsOverdue alarm's count.
    expect(run.overdue).toBe(1);
  });
});

describe('paging: a route muted or in quiet hours after its incident opened', () => {
  it("drops the escalation with the mute's reason, keeps the incident open, and sends the next step once unmuted", async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withPaging });
    expect((await fire()).status).toBe(202);
    const [incident] = await relay.store.listOpenIncidents();
    relay.clock.advance(MINUTE);
    await relay.store.muteRoute({ route: 'paged', forSeconds: 3600, reason: 'db upgrade', now: relay.clock.now });
    relay.clock.advance(10 * MINUTE);
    const delivered = servers.sandbox.messages().length;
    await sweep(relay.context);
    const escalation = (await relay.records('paged')).filter((record) => record.to.includes(OPS));
    expect(escalation).toEqual([
      expect.objectContaining({
        state: MessageState.Dropped,
        reason: expect.stringMatching(/^muted until \d\d:\d\d(?: [A-Z][\w/+-]*)?: db upgrade$/),
      }),
    ]);
    expect(servers.sandbox.messages().slice(delivered)).toEqual([]);
    const after = await relay.store.getIncident(incident!.id);
    expect(after).toMatchObject({ state: 'OPEN', actions: 1, level: 1 });
    expect(after!.timeline.at(-1)!.detail).toMatch(
      /^escalated to 2557\*\*\*\*222 \(not sent: muted until \d\d:\d\d(?: [A-Z][\w/+-]*)?: db upgrade\)$/,
    );
    expect(relay.metrics.total(RelayMetric.EscalationsSent, 'paged')).toBe(0);

    // Unmuted: the renotify, 5 minutes after the last step, goes out.
    await relay.store.unmuteRoute({ route: 'paged', now: relay.clock.now });
    relay.clock.advance(5 * MINUTE);
    await sweep(relay.context);
    expect(
      (await relay.records('paged')).filter((record) => record.to.includes(OPS)).map((record) => record.state),
    ).toEqual([MessageState.Dropped, MessageState.Sent]);
  });

  it("defers the escalation to the route's digest in quiet hours that began after the incident opened", async () => {
    // T0 is Monday 11:00 in Dar es Salaam: the incident opens, quiet hours begin at 11:05.
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: (config) => {
        const paged = withPaging(config);
        return {
          ...paged,
          routes: {
            ...paged.routes,
            paged: { ...paged.routes['paged']!, quietHours: { from: '11:05', to: '12:00', days: ['mon'] } },
          },
        };
      },
    });
    expect((await fire()).status).toBe(202);
    const [incident] = await relay.store.listOpenIncidents();
    relay.clock.advance(10 * MINUTE);
    await sweep(relay.context);
    expect((await relay.records('paged')).filter((record) => record.to.includes(OPS))).toEqual([
      expect.objectContaining({
        state: MessageState.Deferred,
        reason: `quiet hours until 12:00${DAR_NAMED}: goes out in the route's digest`,
      }),
    ]);
    expect(await relay.store.getIncident(incident!.id)).toMatchObject({ state: 'OPEN', level: 1 });
  });
});

describe('paging on a fanOut route: an incident per item', () => {
  const withFanOut = (config: RelayConfigInput): RelayConfigInput => {
    const paged = withPaging(config);
    return {
      ...paged,
      routes: {
        ...paged.routes,
        paged: {
          ...paged.routes['paged']!,
          fanOut: 'alerts',
          when: "item.status == 'firing'",
          template: '[{{ item.status | upcase }}] {{ item.labels.alertname }} on {{ item.labels.instance }}',
          incident: { key: '{{ item.fingerprint }}', resolved: "item.status == 'resolved'" },
        },
      },
    };
  };
  /** One Alertmanager group of two alerts, each with its status. */
  const group = (statuses: readonly [string, string]): string => {
    const body = JSON.parse(alertBody()) as {
      status: string;
      alerts: { status: string; fingerprint: string; labels: Record<string, string> }[];
    };
    const [alert] = body.alerts;
    body.alerts = statuses.map((status, index) => ({
      ...alert!,
      status,
      fingerprint: `fp-${index}`,
      labels: { ...alert!.labels, instance: `db-${index}` },
    }));
    body.status = statuses.includes('firing') ? 'firing' : 'resolved';
    return JSON.stringify(body);
  };

  it('opens one incident per alert of the group, each SMS with its own link, and a resolved alert closes only its own', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withFanOut });
    expect(
      (await relay.ingest('paged', group(['firing', 'firing']), { headers: bearer(SECRETS.alertsToken) })).status,
    ).toBe(202);
    const open = await relay.store.listOpenIncidents();
    expect(open.map((incident) => [incident.key, incident.text]).sort()).toEqual([
      ['fp-0', '[FIRING] DiskAlmostFull on db-0'],
      ['fp-1', '[FIRING] DiskAlmostFull on db-1'],
    ]);
    const sent = await pending();
    expect(sent).toHaveLength(2);
    const tokens = sent.map((record) => LINK.exec(record.text)?.[2]);
    expect(new Set(tokens).size).toBe(2);
    for (const [index, record] of sent.entries()) {
      expect((await relay.store.findAckToken(tokens[index]!))?.incident.text).toBe(LINK.exec(record.text)?.[1]);
    }

    relay.clock.advance(MINUTE);
    expect(
      (await relay.ingest('paged', group(['resolved', 'firing']), { headers: bearer(SECRETS.alertsToken) })).status,
    ).toBe(202);
    expect((await relay.store.listOpenIncidents()).map((incident) => incident.key)).toEqual(['fp-1']);
  });
});
