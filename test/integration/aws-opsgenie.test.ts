import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { scheduledEvent } from '../functions/handlers/support';
import { type AwsRelay, type HttpAnswer, httpApiEvent, startAwsRelay } from './aws-relay';

/**
 * Opsgenie's alert API as deployed (`npm run test:aws`): the ingest bundle answering
 * `ANY /hooks/{route}/{proxy+}` as API Gateway hands it over, the sweeper and sender bundles, on
 * DynamoDB Local, the sandbox as the SMS service. An Alertmanager `opsgenie_configs` receiver's
 * requests: a create, its next notification (the same alias), and the close of its resolve.
 */

const GENIE_KEY = `genie-${randomBytes(12).toString('hex')}`;
const ASHA = '255712345678';
const BARAKA = '255754000111';

const CONFIG_TEXT = stringify({
  provider: { baseUrl: 'https://sms.example.com/api', defaultSenderId: 'SMSRELAY', timeoutMs: 5_000 },
  secrets: 'sms-relay/awsopsgenie',
  people: { asha: { phone: '0712345678' }, baraka: { phone: '0754000111' } },
  routes: {
    og: {
      source: 'opsgenie',
      secret: 'opsgenie-key',
      recipients: ['person:asha'],
      senderId: 'ALERTS',
      escalate: [{ after: '1m', to: ['person:baraka'] }],
      ack: {},
    },
  },
});

let relay: AwsRelay;

beforeAll(async () => {
  relay = await startAwsRelay({
    environmentName: 'awsopsgenie',
    configText: CONFIG_TEXT,
    secrets: { 'opsgenie-key': GENIE_KEY },
    senderIds: ['ALERTS', 'SMSRELAY'],
  });
}, 180_000);

afterAll(async () => {
  await relay?.stop();
});

/** A request to the og route's Opsgenie API through the ingest bundle (`timeEpoch`: when it arrived). */
const opsgenie = async (
  method: string,
  subPath: string,
  { body, query = '', timeEpoch }: { body?: unknown; query?: string; timeEpoch?: number } = {},
): Promise<HttpAnswer> =>
  await relay.call<HttpAnswer>(
    'ingest',
    httpApiEvent({
      routeKey: 'ANY /hooks/{route}/{proxy+}',
      method,
      path: `/hooks/og/${subPath}`,
      query,
      headers: { authorization: `GenieKey ${GENIE_KEY}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(timeEpoch === undefined ? {} : { timeEpoch }),
    }),
  );

describe("Opsgenie's alert API on AWS: the deployed bundles, DynamoDB Local and the sandbox", {
  timeout: 120_000,
}, () => {
  it('a create sends one SMS, a repeat create of its alias none, and a close by alias resolves the incident: no escalation follows', async () => {
    // Alertmanager's create arrived 65 s ago: the escalation (1 min) would be due at the sweep below.
    const disk = { message: 'DiskAlmostFull on db-01', alias: 'c1b5a7e0d6f8', priority: 'P1', source: 'Alertmanager' };
    const created = await opsgenie('POST', 'v2/alerts', { body: disk, timeEpoch: Date.now() - 65_000 });
    expect(created.statusCode).toBe(202);
    expect(JSON.parse(created.body!)).toEqual({
      result: 'Request will be processed',
      took: expect.any(Number),
      requestId: expect.any(String),
    });
    const first = await vi.waitFor(
      () => {
        relay.mappings.critical.check();
        relay.mappings.bulk.check();
        const sent = relay.sandbox.messages().find((message) => message.phoneNumbers.includes(ASHA));
        if (sent === undefined) throw new Error('no SMS to asha yet');
        return sent.message;
      },
      { timeout: 30_000, interval: 200 },
    );
    console.log(`opsgenie create SMS (aws-opsgenie): ${first}`);
    expect(first).toMatch(/^\[P1\] DiskAlmostFull on db-01 https:\/\/.+\/a\/[A-Za-z0-9_-]{22}$/);

    // The group's next notification: the same alias. No second SMS: its record is DROPPED.
    const repeat = await opsgenie('POST', 'v2/alerts', { body: { ...disk, description: 'still firing' } });
    expect(repeat.statusCode).toBe(202);
    const records = (await relay.store.listByRoute('og')).items;
    expect(records.map((record) => record.state).sort()).toEqual([
      'DROPPED',
      expect.stringMatching(/^(SENDING|SENT)$/),
    ]);

    const [open] = await relay.store.listOpenIncidents();
    const incident = open?.id;
    // P1: critical for the credit reserve, its linked SMS and its incident (for the steps after) alike.
    expect(open).toMatchObject({ route: 'og', key: disk.alias, critical: true });
    expect(records.find((record) => record.state !== 'DROPPED')).toMatchObject({ critical: true });

    // The resolve: Alertmanager closes by alias.
    const closed = await opsgenie('POST', `v2/alerts/${disk.alias}/close`, {
      query: 'identifierType=alias',
      body: { source: 'Alertmanager' },
    });
    expect(closed.statusCode).toBe(202);
    expect(await relay.store.getIncident(incident!)).toMatchObject({ state: 'RESOLVED' });
    const request = await opsgenie('GET', `v2/alerts/requests/${String(JSON.parse(closed.body!).requestId)}`);
    expect(JSON.parse(request.body!).data).toMatchObject({ success: true, action: 'Close', status: 'Closed alert' });

    // A sweep after the step was due: the resolved incident escalates nothing.
    await relay.call('sweeper', scheduledEvent());
    expect(await relay.store.getIncident(incident!)).toMatchObject({ state: 'RESOLVED', actions: 0 });
    expect((await relay.store.listByRoute('og')).items).toHaveLength(2);
    expect(relay.sandbox.messages().filter((message) => message.phoneNumbers.includes(BARAKA))).toEqual([]);
    expect(relay.logs.join('\n')).not.toContain(GENIE_KEY);
  });

  it("escalates a P1 alert's incident with a critical SMS and a P3's with a normal one, from the sweeper's bundle", async () => {
    const created = await Promise.all(
      ['P1', 'P3'].map(
        async (priority) =>
          await opsgenie('POST', 'v2/alerts', {
            body: { message: `Queue stuck (${priority})`, alias: `queue-${priority}`, priority },
            timeEpoch: Date.now() - 65_000,
          }),
      ),
    );
    expect(created.map((answer) => answer.statusCode)).toEqual([202, 202]);
    await relay.call('sweeper', scheduledEvent());
    const escalations = await vi.waitFor(
      async () => {
        const found = (await relay.store.listByRoute('og')).items.filter((record) => record.to.includes(BARAKA));
        if (found.length < 2) throw new Error(`${found.length} escalation records yet`);
        return found;
      },
      { timeout: 30_000, interval: 200 },
    );
    const of = (priority: string) => escalations.find((record) => record.text.includes(`(${priority})`));
    expect(of('P1')).toMatchObject({ critical: true });
    expect(of('P3')?.critical).toBeUndefined();
  });
});
