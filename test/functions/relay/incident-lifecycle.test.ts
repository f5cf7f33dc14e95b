import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import { ingestWebhook } from '../../../functions/relay/ingest';
import { recordEscalations } from '../../../functions/relay/paging';
import { sendMessage } from '../../../functions/relay/sender';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState, type MessageStore } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import { alertBody, bearer, harness, type Harness, ONCALL, OPS, SECRETS, useRelayServers } from './support';

const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const MINUTE = 60_000;
const LINK = / https:\/\/sms\.example\.co\.tz\/a\/[A-Za-z0-9_-]{22}$/;

type Route = RelayConfigInput['routes'][string];

/** The `paged` route: the first SMS to the on-call number, one escalation after 10 min, one renotify 5 min later. */
const paged =
  (change: Partial<Route> = {}) =>
  (config: RelayConfigInput): RelayConfigInput => ({
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
        ...change,
      },
    },
  });

const STARTS = '2025-06-02T07:58:00.000Z';
const post = async (body: string) => await relay.ingest('paged', body, { headers: bearer(SECRETS.alertsToken) });
const alert = (status: 'firing' | 'resolved', startsAt = STARTS) =>
  alertBody({ fingerprint: 'disk-db-01', status, startsAt });
const toOps = async () => (await relay.records('paged')).filter((record) => record.to.includes(OPS));

describe('a re-firing inside the dedupe window', () => {
  it('is a new alert (its startsAt is new): it is accepted and opens a new incident', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: paged() });
    expect((await post(alert('firing'))).status).toBe(202);
    const [first] = await relay.store.listOpenIncidents();
    relay.clock.advance(MINUTE);
    await post(alert('resolved'));
    expect(await relay.store.getIncident(first!.id)).toMatchObject({ state: 'RESOLVED' });

    // Fires again two minutes after it began: well inside the 300 s window.
    relay.clock.advance(MINUTE);
    const again = await post(alert('firing', '2025-06-02T08:01:30.000Z'));
    expect(again.body).toMatchObject({ status: 'accepted' });
    expect(await relay.store.listOpenIncidents()).toEqual([
      expect.objectContaining({ state: 'OPEN', actions: 0, id: expect.not.stringMatching(first!.id) }),
    ]);
    // A retry of that firing is still a duplicate.
    expect((await post(alert('firing', '2025-06-02T08:01:30.000Z'))).body).toMatchObject({ status: 'duplicate' });
  });
});

describe('a resolve whose template renders empty', () => {
  it('still closes the incident (the SMS is dropped empty, the incident is judged first)', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: paged({
        when: undefined,
        template: "{% if status == 'firing' %}[FIRING] {{ commonLabels.alertname }}{% endif %}",
      }),
    });
    expect((await post(alert('firing'))).status).toBe(202);
    const [incident] = await relay.store.listOpenIncidents();
    relay.clock.advance(MINUTE);
    expect((await post(alert('resolved'))).body).toMatchObject({ status: 'dropped' });
    expect(await relay.store.listOpenIncidents()).toEqual([]);
    expect(await relay.store.getIncident(incident!.id)).toMatchObject({ state: 'RESOLVED' });
  });
});

describe('renotify on a route whose recipients are templated', () => {
  it('texts the recipients of the incident’s first SMS again', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: paged({ recipients: ['{{ commonAnnotations.oncall_phone }}'], escalate: undefined }),
    });
    expect((await post(alert('firing'))).status).toBe(202);
    const [incident] = await relay.store.listOpenIncidents();
    relay.clock.advance(5 * MINUTE);
    await sweep(relay.context);
    const records = await relay.records('paged');
    expect(records.map((record) => [record.to, record.state])).toEqual([
      [[ONCALL], MessageState.Sent],
      [[ONCALL], MessageState.Sent],
    ]);
    expect((await relay.store.getIncident(incident!.id))!.timeline.at(-1)).toMatchObject({
      event: 'renotified',
      detail: 'renotified to 2557****678',
    });
  });
});

describe('an acknowledged incident whose alert keeps firing', () => {
  it("stays acknowledged through the source's repeat: no new incident, no escalation; a resolve ends it", async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: paged() });
    expect((await post(alert('firing'))).status).toBe(202);
    const [incident] = await relay.store.listOpenIncidents();
    relay.clock.advance(2 * MINUTE);
    await relay.store.closeIncident(incident!.id, { state: 'ACKNOWLEDGED', by: 'cli', now: relay.clock.now });

    // Alertmanager's repeat_interval: the same alert, still firing, four hours on.
    relay.clock.advance(4 * 60 * MINUTE);
    const repeat = await post(alert('firing'));
    expect(repeat.body).toMatchObject({ status: 'accepted' });
    expect(await relay.store.listOpenIncidents()).toEqual([]);
    const held = await relay.store.getIncident(incident!.id);
    expect(held).toMatchObject({ state: 'ACKNOWLEDGED' });
    expect(held!.timeline.at(-1)).toMatchObject({ event: 'repeated' });
    // The repeat goes out as the route says, without a link: there is nothing left to acknowledge.
    const [repeated] = repeat.ids;
    expect((await relay.record(repeated!)).text).not.toMatch(LINK);

    relay.clock.advance(30 * MINUTE);
    await sweep(relay.context);
    expect(await toOps()).toEqual([]);

    // The resolve ends it; the next firing opens a new incident.
    await post(alert('resolved'));
    expect(await relay.store.getIncident(incident!.id)).toMatchObject({ state: 'RESOLVED' });
    relay.clock.advance(MINUTE);
    expect((await post(alert('firing', '2025-06-02T12:40:00.000Z'))).status).toBe(202);
    expect(await relay.store.listOpenIncidents()).toEqual([
      expect.objectContaining({ state: 'OPEN', id: expect.not.stringMatching(incident!.id) }),
    ]);
  });
});

describe('two deliveries of one notification at once', () => {
  it('leave the incident the winner sent open: the loser of the accept closes nothing', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: paged() });
    // The first delivery's accept is held until the second has been accepted, as a slow write would.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let accepts = 0;
    const store: MessageStore = {
      ...relay.store,
      acceptWebhook: async (input) => {
        accepts += 1;
        if (accepts === 1) await held;
        return await relay.store.acceptWebhook(input);
      },
    };
    const context = { ...relay.context, store };
    const body = new TextEncoder().encode(alert('firing'));
    const deliver = async () =>
      await ingestWebhook(context, {
        routeId: 'paged',
        body,
        headers: bearer(SECRETS.alertsToken),
        query: {},
        receivedAt: relay.clock.now,
      });

    const loser = deliver();
    await vi.waitFor(() => expect(accepts).toBe(1));
    const winner = await deliver();
    expect(winner.body).toMatchObject({ status: 'accepted' });
    release();
    expect((await loser).body).toMatchObject({ status: 'duplicate' });

    const [incident] = await relay.store.listOpenIncidents();
    expect(incident).toMatchObject({ state: 'OPEN', actions: 0 });
    relay.clock.advance(10 * MINUTE);
    await sweep(relay.context);
    expect((await toOps()).map((record) => record.state)).toEqual([MessageState.Sent]);
  });
});

describe("a sender's retry of a delivery whose incident resolved", () => {
  it('opens nothing: the accepted SMS paged for the first incident', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: paged() });
    expect((await post(alert('firing'))).status).toBe(202);
    relay.clock.advance(MINUTE);
    await post(alert('resolved'));
    relay.clock.advance(MINUTE);
    expect((await post(alert('firing'))).body).toMatchObject({ status: 'duplicate' });
    expect(await relay.store.listOpenIncidents()).toEqual([]);
  });
});

describe('an escalation recorded before the incident closed', () => {
  it('is not sent once the incident is acknowledged: DROPPED with the reason, and the timeline says so', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: paged() });
    expect((await post(alert('firing'))).status).toBe(202);
    const [incident] = await relay.store.listOpenIncidents();
    relay.clock.advance(10 * MINUTE);
    // The sweeper records the step, which waits PENDING (as it does while the SMS service is away).
    const { ids } = await recordEscalations(relay.context, relay.clock.now);
    expect(ids).toHaveLength(1);
    relay.clock.advance(MINUTE);
    await relay.store.closeIncident(incident!.id, { state: 'ACKNOWLEDGED', by: '2557****678', now: relay.clock.now });

    // Then the waiting escalation reaches the sender (the service is back).
    const delivered = servers.sandbox.messages().length;
    relay.clock.advance(MINUTE);
    await sendMessage(relay.context, ids[0]!);
    expect(servers.sandbox.messages().slice(delivered)).toEqual([]);
    expect(await relay.record(ids[0]!)).toMatchObject({
      state: MessageState.Dropped,
      reason: expect.stringMatching(/^incident acknowledged by 2557\*\*\*\*678 at .+ before this SMS went out$/),
    });
    expect((await relay.store.getIncident(incident!.id))!.timeline.at(-1)).toMatchObject({
      event: 'not-sent',
      detail: 'SMS to 2557****222 not sent: the incident was acknowledged first',
    });
  });

  it('is not sent once the incident resolved', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: paged() });
    expect((await post(alert('firing'))).status).toBe(202);
    relay.clock.advance(10 * MINUTE);
    const { ids } = await recordEscalations(relay.context, relay.clock.now);
    relay.clock.advance(MINUTE);
    await post(alert('resolved'));
    await sendMessage(relay.context, ids[0]!);
    expect(await relay.record(ids[0]!)).toMatchObject({
      state: MessageState.Dropped,
      reason: expect.stringMatching(/^incident resolved by a alertmanager webhook at .+ before this SMS went out$/),
    });
  });
});
