import { describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../local/sandbox/types';
import { testWithRelay } from '../helpers/fixtures';
import { eventually, records, type RelayOnSandbox } from './support';

const API_KEY = 'opsgenie-test-provider-key-3b9d';
const ASHA = '255712345678';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;

// The route, as an Alertmanager or Grafana install pointing its Opsgenie API URL at the relay reaches it.
const test = testWithRelay({
  sandbox: { apiKey: API_KEY, balance: 100_000, rate: 20, senderIds: ['SMSRELAY'], defaultSenderId: 'SMSRELAY' },
  config: `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
routes:
  og:
    source: opsgenie
    secret: opsgenie-key
    recipients: ["person:asha"]
    escalate: [{ after: 5m, to: ["person:baraka"] }]
    ack: {}
    heartbeat: { every: 5m, grace: 2m }
`,
});
test.beforeAll(({ sandbox: service, relay }) => {
  sandbox = service;
  running = relay;
}, 180_000);

/** One request to the running relay's Opsgenie API, with the route's GenieKey unless told otherwise. */
async function opsgenie(
  method: string,
  path: string,
  { body, key }: { readonly body?: unknown; readonly key?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const { relay, secrets } = running!;
  const response = await fetch(`${relay.url}/hooks/og/${path}`, {
    method,
    headers: { authorization: `GenieKey ${key ?? secrets['opsgenie-key']!}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const requestOf = async (answer: { body: Record<string, unknown> }) =>
  (await opsgenie('GET', `v2/alerts/requests/${String(answer.body['requestId'])}`)).body['data'] as Record<
    string,
    unknown
  >;

describe("Opsgenie's alert API through npm start, over HTTP", () => {
  it('creates (one SMS), takes a repeat as the same alert (no second SMS), acknowledges by id, closes by alias, answers lookups and the heartbeat ping', async () => {
    const { relay } = running!;
    const disk = { message: 'Disk full on db-01', alias: 'disk-db-01', priority: 'P2', description: 'at 94 %' };
    const created = await opsgenie('POST', 'v2/alerts', { body: disk });
    expect(created).toEqual({
      status: 202,
      body: { result: 'Request will be processed', took: expect.any(Number), requestId: expect.stringMatching(UUID) },
    });
    const sms = await eventually(async () => sandbox.messages().find((sent) => sent.phoneNumbers.includes(ASHA)), {
      what: 'the alert SMS to asha',
    });
    expect(sms.message).toMatch(new RegExp(`^\\[P2\\] Disk full on db-01 ${relay.url.replace(/[.]/g, '\\.')}/a/`));

    const create = await requestOf(created);
    expect(create).toMatchObject({ success: true, action: 'Create', status: 'Created alert', alias: 'disk-db-01' });
    const id = String(create['alertId']);

    // Alertmanager's next notification of the still-firing group: the same alias, another description.
    const repeat = await opsgenie('POST', 'v2/alerts', { body: { ...disk, description: 'at 97 %' } });
    expect(repeat.status).toBe(202);
    expect(await requestOf(repeat)).toMatchObject({ status: 'Alert already exists: no second SMS', alertId: id });
    const og = await records(relay.url, 'route=og');
    expect(og.map((record) => record.state).sort()).toEqual([
      'DROPPED',
      expect.stringMatching(/^(PENDING|SENDING|SENT)$/),
    ]);

    const found = await opsgenie('GET', `v2/alerts/${id}`);
    expect(found.status).toBe(200);
    expect(found.body['data']).toMatchObject({ id, tinyId: '1', alias: 'disk-db-01', status: 'open', count: 2 });

    const ack = await opsgenie('POST', `v2/alerts/${id}/acknowledge`, { body: { user: 'asha' } });
    expect(ack.status).toBe(202);
    expect(await requestOf(ack)).toMatchObject({ success: true, action: 'Acknowledge', status: 'Acknowledged alert' });
    expect((await opsgenie('GET', `v2/alerts/${id}`)).body['data']).toMatchObject({ acknowledged: true });

    const closed = await opsgenie('POST', 'v2/alerts/disk-db-01/close?identifierType=alias', { body: {} });
    expect(closed.status).toBe(202);
    expect(await requestOf(closed)).toMatchObject({ success: true, action: 'Close', status: 'Closed alert' });
    expect((await opsgenie('GET', 'v2/alerts/1?identifierType=tiny')).body['data']).toMatchObject({
      id,
      status: 'closed',
    });

    const ping = await opsgenie('POST', 'v2/heartbeats/prometheus/ping');
    expect([ping.status, ping.body['result']]).toEqual([202, 'PONG - Heartbeat received']);
    // Nothing but the create sent an SMS.
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('answers a wrong GenieKey 401, an invalid body 422 and unknown paths or alerts 404, in Opsgenie\u2019s shape', async () => {
    const before = (await records(running!.relay.url, 'route=og')).length;
    const refused = await opsgenie('POST', 'v2/alerts', { body: { message: 'x' }, key: 'guessed' });
    expect(refused).toEqual({
      status: 401,
      body: { message: 'Could not authenticate', took: expect.any(Number), requestId: expect.stringMatching(UUID) },
    });
    expect(JSON.stringify(refused.body)).not.toContain('guessed');
    const invalid = await opsgenie('POST', 'v2/alerts', { body: '{"alias":"no-message"}' });
    expect([invalid.status, invalid.body['message']]).toEqual([422, 'Message can not be empty.']);
    expect((await opsgenie('POST', 'v2/alerts', { body: 'not json' })).status).toBe(422);
    const unknown = await opsgenie('GET', 'v2/alerts/01JXXXXXXXXXXXXXXXXXXXXXXX');
    expect([unknown.status, unknown.body['message']]).toEqual([404, 'Alert does not exist']);
    expect((await opsgenie('GET', 'v2/schedules')).status).toBe(404);
    // Refused requests record nothing.
    expect(await records(running!.relay.url, 'route=og')).toHaveLength(before);
  });
});
