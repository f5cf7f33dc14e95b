import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { scheduledEvent } from '../functions/handlers/support';
import { alert } from './alert';
import { API_DOMAIN, type AwsRelay, type HttpAnswer, httpApiEvent, startAwsRelay } from './aws-relay';

/**
 * Paging as deployed (`npm run test:aws`): the ingest, sweeper and sender bundles with the
 * environment and schedule the synthesized template gives them, on DynamoDB Local, the table's
 * stream feeding the sender, the sandbox as the SMS service (test/integration/aws-relay.ts). A
 * route with `escalate` and `ack: {}`: the link's origin is the API's own URL, which only ingest
 * sees (the request's `domainName`); the sweeper, which sends the escalation, never sees a request.
 */

const ALERTS_TOKEN = `alerts-${randomBytes(12).toString('hex')}`;
const ASHA = '255712345678';
const BARAKA = '255754000111';
const CHAUSIKU = '255765000222';

const CONFIG_TEXT = stringify({
  provider: { baseUrl: 'https://sms.example.com/api', defaultSenderId: 'SMSRELAY', timeoutMs: 5_000 },
  secrets: 'sms-relay/awspaging',
  people: { asha: { phone: '0712345678' }, baraka: { phone: '0754000111' }, chausiku: { phone: '0765000222' } },
  schedules: {
    ops: { timezone: 'Africa/Dar_es_Salaam', rotation: { people: ['asha'], every: '1w', start: '2026-01-05T09:00' } },
  },
  routes: {
    paging: {
      source: 'alertmanager',
      secret: 'alerts-token',
      recipients: ['oncall:ops'],
      when: "status == 'firing'",
      template: '[{{ status | upcase }}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary }}',
      senderId: 'ALERTS',
      escalate: [
        { after: '1m', to: ['person:baraka'] },
        { after: '3m', to: ['person:chausiku'] },
      ],
      ack: {},
    },
  },
});

const LINK = new RegExp(`^(.+) https://${API_DOMAIN.replaceAll('.', '\\.')}/a/([A-Za-z0-9_-]{22})$`);

let relay: AwsRelay;

beforeAll(async () => {
  relay = await startAwsRelay({
    environmentName: 'awspaging',
    configText: CONFIG_TEXT,
    secrets: { 'alerts-token': ALERTS_TOKEN },
    senderIds: ['ALERTS', 'SMSRELAY'],
  });
}, 180_000);

afterAll(async () => {
  await relay?.stop();
});

const call = async <T>(name: 'ingest' | 'sweeper', event: unknown): Promise<T> => await relay.call<T>(name, event);

/** A firing alert posted to the paging route through the ingest bundle, as API Gateway hands it over (`timeEpoch`: when it arrived). */
const postAlert = async (summary: string, timeEpoch?: number): Promise<HttpAnswer> =>
  await call<HttpAnswer>(
    'ingest',
    httpApiEvent({
      routeKey: 'POST /hooks/{route}',
      path: '/hooks/paging',
      headers: { authorization: `Bearer ${ALERTS_TOKEN}`, 'content-type': 'application/json' },
      body: alert(summary),
      ...(timeEpoch === undefined ? {} : { timeEpoch }),
    }),
  );

/** The SMS the sandbox delivered to `number`, once there is one. */
async function smsTo(number: string, what: string): Promise<string> {
  return await vi.waitFor(
    () => {
      relay.mappings.critical.check();
      relay.mappings.bulk.check();
      const sent = relay.sandbox.messages().find((message) => message.phoneNumbers.includes(number));
      if (sent === undefined) throw new Error(`no ${what} yet`);
      return sent.message;
    },
    { timeout: 30_000, interval: 200 },
  );
}

describe('paging on AWS: the deployed bundles, DynamoDB Local and the sandbox', { timeout: 120_000 }, () => {
  it('the template sweeps every minute and gives the sweeper no URL of the API: only a request carries it', () => {
    expect(relay.sweepSchedule).toBe('rate(1 minute)');
    expect(Object.values(relay.environment('sweeper')).join(' ')).not.toContain('execute-api');
  });

  it("links the first SMS and the sweeper's escalation to the API's URL; a POST to the escalation's link acknowledges and stops the next step", async () => {
    // The webhook arrived 65 s ago (API Gateway's timeEpoch): the first step (1 min) is due; the
    // second (3 min) falls due after this sweep's stay, so the run records one step and ends.
    const openedAt = Date.now() - 65_000;
    const answer = await postAlert('Disk /var on db-01 is 94% full', openedAt);
    expect(answer.statusCode).toBe(202);
    const first = await smsTo(ASHA, 'first SMS to asha');
    const [, firstText, ashaToken] = LINK.exec(first) ?? [];
    expect(firstText).toBe('[FIRING] DiskAlmostFull: Disk /var on db-01 is 94% full');

    // One sweep, as its schedule runs it: one step per incident per sweep.
    await call('sweeper', scheduledEvent());
    const escalation = await smsTo(BARAKA, 'escalation SMS to baraka');
    console.log(`escalation SMS (aws-paging): ${escalation}`);
    const [, escalationText, barakaToken] = LINK.exec(escalation) ?? [];
    expect(escalationText).toBe(firstText);
    expect(barakaToken).toBeDefined();
    expect(barakaToken).not.toBe(ashaToken);
    const [incident] = await relay.store.listOpenIncidents();
    expect(incident).toMatchObject({ actions: 1, level: 1, linkOrigin: `https://${API_DOMAIN}` });

    // baraka opens the link: the page shows, names him and who is next, and acknowledges nothing.
    const path = `/a/${barakaToken!}`;
    const page = await call<HttpAnswer>('ingest', httpApiEvent({ routeKey: 'GET /a/{token}', path }));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<button type="submit">Acknowledge</button>');
    expect(page.body).toContain('Sent to baraka (2557****111)');
    expect(page.body).toContain('next, chausiku (2557****222) would be paged');
    // The one time format, on the schedule's clock (named once on the page): 24-hour, how long ago.
    expect(page.body).toMatch(/Opened \d\d:\d\d \(\d+ min ago\), route paging\./);
    expect(page.body).toContain('Times in Africa/Dar_es_Salaam, 24-hour clock.');
    // A form on another site posting to it is refused.
    const forged = await call<HttpAnswer>(
      'ingest',
      httpApiEvent({ routeKey: 'POST /a/{token}', path, headers: { origin: 'https://evil.example' } }),
    );
    expect(forged.statusCode).toBe(403);
    expect(await relay.store.getIncident(incident!.id)).toMatchObject({ state: 'OPEN' });

    // He presses Acknowledge: the browser posts the page's own form.
    const pressed = await call<HttpAnswer>(
      'ingest',
      httpApiEvent({
        routeKey: 'POST /a/{token}',
        path,
        headers: {
          origin: 'null',
          'sec-fetch-site': 'same-origin',
          'content-type': 'application/x-www-form-urlencoded',
        },
      }),
    );
    expect(pressed.statusCode).toBe(200);
    expect(pressed.body).toContain('Acknowledged. Escalation has stopped.');

    // The next sweep: the acknowledged incident has no step left to take, the second one never comes.
    await call('sweeper', scheduledEvent());
    const acknowledged = await relay.store.getIncident(incident!.id);
    expect(acknowledged).toMatchObject({ state: 'ACKNOWLEDGED', closedBy: '2557****111 via link', actions: 1 });
    expect(acknowledged?.nextDueAt).toBeUndefined();
    const records = (await relay.store.listByRoute('paging')).items;
    expect(records.map((record) => record.to)).toEqual(expect.arrayContaining([[ASHA], [BARAKA]]));
    // The sweeper bundle's escalation names its SMS in the story: what `sms-relay incidents --env` shows the state of.
    const toBaraka = records.find((record) => record.to.includes(BARAKA))!;
    expect(acknowledged!.timeline.find((entry) => entry.event === 'escalated')).toMatchObject({ ids: [toBaraka.id] });
    expect(records).toHaveLength(2);
    expect(relay.sandbox.messages().filter((message) => message.phoneNumbers.includes(CHAUSIKU))).toEqual([]);

    // No token in any function's log: ingest's, the sweeper's, the sender's.
    const written = relay.logs.join('\n');
    expect(written).toContain('incident escalated');
    expect(written).not.toContain(ashaToken!);
    expect(written).not.toContain(barakaToken!);
  });

  it("a muted route's webhook is answered dropped by the ingest bundle, its reason on the route's clock and naming its zone: Lambda's is UTC", async () => {
    const mute = await relay.store.muteRoute({ route: 'paging', forSeconds: 3_600, reason: 'db upgrade' });
    try {
      const answer = await postAlert('Disk /srv on db-09 is 91% full');
      // The end of the mute on the route's clock (the config's default zone), 24-hour.
      const until = new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Africa/Dar_es_Salaam',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).format(new Date(mute.until));
      const reason = new RegExp(`^muted until (\\d{4}-\\d{2}-\\d{2} )?${until} Africa/Dar_es_Salaam: db upgrade$`);
      expect(answer.statusCode).toBe(200);
      expect(JSON.parse(answer.body!)).toMatchObject({ status: 'dropped', reason: expect.stringMatching(reason) });
      const dropped = (await relay.store.listByRoute('paging')).items.filter((record) => record.state === 'DROPPED');
      expect(dropped.map((record) => record.reason)).toEqual([expect.stringMatching(reason)]);
    } finally {
      await relay.store.unmuteRoute({ route: 'paging' });
    }
  });
});
