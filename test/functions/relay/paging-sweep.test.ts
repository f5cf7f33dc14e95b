import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import { PAGING } from '../../../functions/core/defaults';
import { RelayMetric, type RelayContext } from '../../../functions/relay/ports';
import { sweep } from '../../../functions/relay/sweeper';
import { expectNoLeaks } from './leaks';
import { alertBody, bearer, harness, type Harness, OPS, SECRETS, TestClock, useRelayServers } from './support';

const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const MINUTE = 60_000;
const LATER = '255754999888';

const withPaging =
  (paging: Pick<NonNullable<RelayConfigInput['routes']>[string], 'escalate' | 'renotify'>) =>
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
        ...paging,
      },
    },
  });

const TWO_STEPS = withPaging({
  escalate: [
    { after: '10m', to: ['0754111222'] },
    { after: '20m', to: ['0754999888'] },
  ],
  renotify: { every: '5m', max: 2 },
});

const fire = async () => await relay.ingest('paged', alertBody(), { headers: bearer(SECRETS.alertsToken) });
const stepRecords = async () =>
  (await relay.records('paged')).filter((record) => record.to.includes(OPS) || record.to.includes(LATER));

/**
 * Pads the incident item to within a few bytes of DynamoDB's 400 KB item limit (the largest padding
 * the table still takes): the next timeline entry no longer fits, so the store refuses the step's write.
 */
async function fillIncident(id: string): Promise<void> {
  const pad = async (length: number): Promise<boolean> =>
    await servers.db.client
      .send(
        new UpdateItemCommand({
          TableName: relay.tableName,
          Key: { pk: { S: `INCIDENT#${id}` }, sk: { S: 'INCIDENT' } },
          UpdateExpression: 'SET padding = :padding',
          ExpressionAttributeValues: { ':padding': { S: 'x'.repeat(length) } },
        }),
      )
      .then(
        () => true,
        () => false,
      );
  let length = 409_600;
  while (!(await pad(length))) length -= 50;
}

describe('paging in the sweep: nothing silent', () => {
  it('counts a step the store refuses in EscalationErrors, logs it with the step, and publishes IncidentsOverdue once it is 2 minutes late', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: TWO_STEPS });
    expect((await fire()).status).toBe(202);
    const [incident] = await relay.store.listOpenIncidents();
    await fillIncident(incident!.id);

    relay.clock.advance(10 * MINUTE);
    const first = await sweep(relay.context);
    expect(first.failedSteps).toEqual([]);
    expect(relay.metrics.total(RelayMetric.EscalationErrors, 'paged')).toBe(1);
    expect(relay.metrics.points.filter((point) => point.name === RelayMetric.IncidentsOverdue)).toEqual([
      { name: RelayMetric.IncidentsOverdue, value: 0 },
    ]);
    expect(relay.logger.lines).toContainEqual({
      level: 'error',
      message: 'escalation not recorded; the next sweep tries again',
      attributes: { step: 'escalations', route: 'paged', incident: incident!.id, error: 'ValidationException' },
    });
    expect(await relay.store.getIncident(incident!.id)).toMatchObject({ actions: 0 });

    // Still refused, now more than 2 minutes past due: the gauge says so.
    relay.clock.advance(PAGING.overdueAfterMs + 1_000);
    await sweep(relay.context);
    expect(relay.metrics.total(RelayMetric.EscalationErrors, 'paged')).toBe(2);
    expect(relay.metrics.points.filter((point) => point.name === RelayMetric.IncidentsOverdue).at(-1)).toEqual({
      name: RelayMetric.IncidentsOverdue,
      value: 1,
    });
    // The step's SMS itself went into the table once, under the step's dedupe key.
    expect(await stepRecords()).toHaveLength(1);
  });

  it('runs every sweep step on its own: a step that throws is logged by name and counted, and the escalations and sends still happen', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: TWO_STEPS });
    expect((await fire()).status).toBe(202);
    relay.clock.advance(10 * MINUTE);
    const store = relay.context.store;
    const failing: RelayContext = {
      ...relay.context,
      store: {
        ...store,
        findStaleSending: async () =>
          Promise.reject(Object.assign(new Error('throttled'), { name: 'ThrottlingException' })),
      },
    };

    const report = await sweep(failing);

    expect(report.failedSteps).toEqual(['stale sends']);
    expect(report.escalations).toBe(1);
    expect(report.sent).toEqual({ sent: 2 });
    expect(relay.metrics.total(RelayMetric.SweepErrors)).toBe(1);
    expect(relay.metrics.total(RelayMetric.Sweeps)).toBe(1);
    expect(relay.logger.lines).toContainEqual({
      level: 'error',
      message: 'sweep step "stale sends" failed; the next sweep runs it again',
      attributes: { step: 'stale sends', error: 'ThrottlingException' },
    });
  });
});

describe('paging in the sweep: steps missed while the relay was not running', () => {
  it('sends one SMS for the latest step due, and the timeline names the steps skipped', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: TWO_STEPS });
    expect((await fire()).status).toBe(202);
    const [incident] = await relay.store.listOpenIncidents();
    // Down from before the first step (10 min) until after the first renotify (25 min).
    relay.clock.advance(27 * MINUTE);

    await sweep(relay.context);
    await sweep(relay.context);

    const sent = await stepRecords();
    expect(sent.map((record) => record.to)).toEqual([[LATER]]);
    const after = await relay.store.getIncident(incident!.id);
    expect(after).toMatchObject({ actions: 3, level: 2 });
    expect(after!.timeline.at(-1)).toMatchObject({
      event: 'renotified',
      detail: expect.stringMatching(
        /^renotified to 2557\*{4}888 \(missed while the relay was not running, skipped: the steps due 08:10 UTC, 08:20 UTC\)$/,
      ),
    });
    expect(Date.parse(after!.nextDueAt!)).toBe(Date.parse(incident!.openedAt) + 30 * MINUTE);
  });

  it('takes steps due close together one after the other while the relay runs', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: TWO_STEPS });
    expect((await fire()).status).toBe(202);
    relay.clock.advance(10 * MINUTE + 5_000);
    await sweep(relay.context);
    relay.clock.advance(10 * MINUTE);
    await sweep(relay.context);
    expect((await stepRecords()).map((record) => record.to)).toEqual([[OPS], [LATER]]);
  });
});

describe('paging in the sweep: on time', () => {
  it('stays for a step that falls due during the run and records it then, once, with a second run staying at the same time', async () => {
    // The real time: the run sleeps until the step is due.
    const clock = Object.assign(new TestClock(new Date()), { read: () => new Date() });
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withPaging({ escalate: [{ after: '1m', to: ['0754111222'] }] }),
      clock,
    });
    // Opened 58.5 s ago: its step falls due 1.5 s into the runs.
    const opened = new Date(Date.now() - MINUTE + 1_500);
    const { incident } = await relay.store.openIncident({
      route: 'paged',
      key: 'group-1',
      text: '[FIRING] DiskAlmostFull: /var is 91% full',
      sentTo: '2557****678',
      nextDueAt: new Date(opened.getTime() + MINUTE),
      now: opened,
    });
    const dueAt = opened.getTime() + MINUTE;
    const pagingUntil = new Date(dueAt + 2_000);

    const reports = await Promise.all([
      sweep(relay.context, { pagingUntil, pagingPollMs: 500 }),
      sweep(relay.context, { pagingUntil, pagingPollMs: 500 }),
    ]);

    const [step] = await stepRecords();
    expect(await stepRecords()).toHaveLength(1);
    expect(reports.map((report) => report.escalations).reduce((a, b) => a + b)).toBeGreaterThanOrEqual(1);
    expect(await relay.store.getIncident(incident.id)).toMatchObject({ actions: 1, level: 1 });
    const lateness = Date.parse(step!.createdAt) - dueAt;
    console.log(`a step due during the run recorded ${lateness} ms after its due time`);
    // Not before it was due, and by this run, not the next one (a minute later).
    expect(lateness).toBeGreaterThanOrEqual(0);
    expect(Date.parse(step!.createdAt)).toBeLessThan(pagingUntil.getTime());
  });

  it('does not stay when no open incident has a step to come', async () => {
    const clock = Object.assign(new TestClock(new Date()), { read: () => new Date() });
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withPaging({ escalate: [{ after: '1m', to: ['0754111222'] }] }),
      clock,
    });
    const pagingUntil = new Date(Date.now() + 60_000);

    const report = await sweep(relay.context, { pagingUntil });

    // Ended with its steps, not at pagingUntil a minute later.
    expect(Date.now()).toBeLessThan(pagingUntil.getTime());
    expect(report).toMatchObject({ escalations: 0, failedSteps: [] });
  });
});
