import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import { answerWebhook, type EdgeResponse } from '../../../functions/relay/edge';
import { ingestWebhook } from '../../../functions/relay/ingest';
import { answerOpsgenieApi } from '../../../functions/relay/opsgenie-api';
import { recordEscalations } from '../../../functions/relay/paging';
import { MessageState } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import { harness, type Harness, ONCALL, secretValues, useRelayServers } from './support';

const servers = useRelayServers({});
let relay: Harness;
afterEach(() => expectNoLeaks(relay.logger));

const KEY = `genie-${randomBytes(12).toString('hex')}`;
const MINUTE = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LINK = / https:\/\/sms\.example\.co\.tz\/a\/[A-Za-z0-9_-]{22}$/;

type Route = RelayConfigInput['routes'][string];

/** The route: `og`, escalating to OPS after 10 minutes, with the acknowledge link. */
const withOpsgenie =
  (change: Partial<Route> = {}) =>
  (config: RelayConfigInput): RelayConfigInput => ({
    ...config,
    routes: {
      ...config.routes,
      og: {
        source: 'opsgenie',
        secret: 'opsgenie-key',
        recipients: ['0712345678'],
        escalate: [{ after: '10m', to: ['0754111222'] }],
        ack: { baseUrl: 'https://sms.example.co.tz' },
        senderId: 'ALERTS',
        ...change,
      },
    },
  });

async function start(change: Partial<Route> = {}): Promise<void> {
  relay = await harness({
    db: servers.db,
    baseUrl: servers.sandbox.baseUrl,
    config: withOpsgenie(change),
    secrets: secretValues({ 'opsgenie-key': KEY }),
  });
}

const GENIE = { Authorization: `GenieKey ${KEY}` };

/** One request to the relay's edge as either platform hands it over, the route's API wired as both do. */
async function call(
  method: string,
  path: string,
  { body = '', headers = GENIE, query = '' }: { body?: unknown; headers?: Record<string, string>; query?: string } = {},
): Promise<EdgeResponse & { readonly body: Record<string, unknown> }> {
  const bytes = new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body));
  const response = await answerWebhook(
    {
      method,
      path,
      headers: Object.entries({ 'content-type': 'application/json', ...headers }),
      query,
      body: async () => bytes,
      receivedAt: relay.clock.now,
    },
    async (webhook) => await ingestWebhook(relay.context, webhook),
    { api: async (apiCall, ingest) => await answerOpsgenieApi(relay.context, apiCall, ingest) },
  );
  return response as EdgeResponse & { readonly body: Record<string, unknown> };
}

const DISK = { message: 'Disk full on db-01', alias: 'disk-db-01', priority: 'P1', tags: ['db'], entity: 'db-01' };

/** The records of route og still to be sent or sent: the SMS the relay means to send. */
const sms = async () =>
  (await relay.records('og')).filter((record) => record.state !== MessageState.Dropped).map((record) => record.to[0]);

describe("Opsgenie's alert API: create", () => {
  it('answers 202 in Opsgenie\u2019s shape and sends one SMS, [P1] <message> with the acknowledge link', async () => {
    await start();
    const created = await call('POST', '/hooks/og/v2/alerts', { body: DISK });
    expect(created.status).toBe(202);
    expect(created.body).toEqual({
      result: 'Request will be processed',
      took: expect.any(Number),
      requestId: expect.stringMatching(UUID),
    });
    const records = await relay.records('og');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ to: [ONCALL], state: MessageState.Pending });
    expect(records[0]!.text).toMatch(/^\[P1\] Disk full on db-01 https:/);
    expect(records[0]!.text).toMatch(LINK);
  });

  it('keeps what the request did: GET requests/{id} names the alert, which GET finds by id, alias and tiny id', async () => {
    await start();
    const created = await call('POST', '/hooks/og/v2/alerts', { body: { ...DISK, description: 'at 94 %' } });
    const status = await call('GET', `/hooks/og/v2/alerts/requests/${String(created.body['requestId'])}`);
    expect(status.status).toBe(200);
    expect(status.body).toEqual({
      data: {
        success: true,
        action: 'Create',
        processedAt: relay.clock.now.toISOString(),
        integrationId: 'og',
        isSuccess: true,
        status: 'Created alert',
        alertId: expect.any(String),
        alias: 'disk-db-01',
      },
      took: expect.any(Number),
      requestId: expect.stringMatching(UUID),
    });
    const id = (status.body['data'] as { alertId: string }).alertId;
    expect((await relay.store.listOpenIncidents()).map((incident) => incident.id)).toEqual([id]);
    const expected = {
      id,
      tinyId: '1',
      alias: 'disk-db-01',
      message: 'Disk full on db-01',
      description: 'at 94 %',
      status: 'open',
      acknowledged: false,
      priority: 'P1',
      tags: ['db'],
      entity: 'db-01',
      count: 1,
    };
    for (const [identifier, type] of [
      [id, ''],
      ['disk-db-01', 'identifierType=alias'],
      ['1', 'identifierType=tiny'],
    ] as const) {
      const found = await call('GET', `/hooks/og/v2/alerts/${identifier}`, { query: type });
      expect(found.status, type).toBe(200);
      expect(found.body['data'], type).toMatchObject(expected);
    }
  });

  it('takes a repeat create of an open alias as the same alert: 202, no second SMS, counted', async () => {
    await start();
    await call('POST', '/hooks/og/v2/alerts', { body: DISK });
    relay.clock.advance(2 * MINUTE);
    // Another body (past the dedupe of retries): Alertmanager's next notification of the group.
    const repeat = await call('POST', '/hooks/og/v2/alerts', { body: { ...DISK, description: 'now at 97 %' } });
    expect(repeat.status).toBe(202);
    expect(await sms()).toEqual([ONCALL]);
    const dropped = (await relay.records('og')).filter((record) => record.state === MessageState.Dropped);
    expect(dropped).toEqual([expect.objectContaining({ reason: expect.stringMatching(/^a repeat of open incident/) })]);
    const status = await call('GET', `/hooks/og/v2/alerts/requests/${String(repeat.body['requestId'])}`);
    expect(status.body['data']).toMatchObject({ success: true, status: 'Alert already exists: no second SMS' });
    const found = await call('GET', '/hooks/og/v2/alerts/disk-db-01', { query: 'identifierType=alias' });
    expect(found.body['data']).toMatchObject({ count: 2, tinyId: '1' });
  });

  it('refuses a wrong or missing GenieKey (401) and an invalid body (422) in Opsgenie\u2019s shape, recording nothing', async () => {
    await start();
    const refusals = [
      [{ headers: { Authorization: 'GenieKey guessed' }, body: DISK }, 401, 'Could not authenticate'],
      [{ headers: {}, body: DISK }, 401, 'Could not authenticate'],
      [{ headers: { Authorization: `Bearer ${KEY}` }, body: DISK }, 401, 'Could not authenticate'],
      [{ body: 'message=disk' }, 422, 'body is not valid JSON'],
      [{ body: { alias: 'a' } }, 422, 'Message can not be empty.'],
      [{ body: { message: 'm', tags: 'db' } }, 422, '"tags" must be a array'],
      [{ body: { message: 'm', priority: 'P0' } }, 422, '"priority" must be one of P1, P2, P3, P4, P5'],
    ] as const;
    for (const [options, status, message] of refusals) {
      const answer = await call('POST', '/hooks/og/v2/alerts', options);
      expect([answer.status, answer.body], message).toEqual([
        status,
        { message, took: expect.any(Number), requestId: expect.stringMatching(UUID) },
      ]);
    }
    expect(await relay.records('og')).toEqual([]);
    expect(JSON.stringify(relay.logger.lines)).not.toContain(KEY);
  });
});

describe("Opsgenie's alert API: close, acknowledge, notes, updates", () => {
  it('acknowledges by id as the link does: the escalation stops, no SMS', async () => {
    await start();
    await call('POST', '/hooks/og/v2/alerts', { body: DISK });
    const [incident] = await relay.store.listOpenIncidents();
    relay.clock.advance(MINUTE);
    const ack = await call('POST', `/hooks/og/v2/alerts/${incident!.id}/acknowledge`, {
      body: { user: 'asha', source: 'grafana', note: 'on it' },
    });
    expect([ack.status, ack.body['result']]).toEqual([202, 'Request will be processed']);
    expect(await relay.store.getIncident(incident!.id)).toMatchObject({
      state: 'ACKNOWLEDGED',
      closedBy: 'an opsgenie acknowledge request',
    });
    expect(await relay.store.getIncident(incident!.id)).not.toHaveProperty('nextDueAt');
    const found = await call('GET', `/hooks/og/v2/alerts/${incident!.id}`);
    expect(found.body['data']).toMatchObject({ status: 'open', acknowledged: true });
    const status = await call('GET', `/hooks/og/v2/alerts/requests/${String(ack.body['requestId'])}`);
    expect(status.body['data']).toMatchObject({ success: true, action: 'Acknowledge', status: 'Acknowledged alert' });

    relay.clock.advance(15 * MINUTE);
    expect((await recordEscalations(relay.context, relay.clock.now)).ids).toEqual([]);
    expect(await sms()).toEqual([ONCALL]);
  });

  it('closes by alias as a resolved webhook does: resolved, no escalation; the alias then opens a new alert', async () => {
    await start();
    await call('POST', '/hooks/og/v2/alerts', { body: DISK });
    const [incident] = await relay.store.listOpenIncidents();
    const close = await call('POST', '/hooks/og/v2/alerts/disk-db-01/close', {
      query: 'identifierType=alias',
      body: { source: 'Alertmanager' },
    });
    expect(close.status).toBe(202);
    expect(await relay.store.getIncident(incident!.id)).toMatchObject({ state: 'RESOLVED' });
    relay.clock.advance(15 * MINUTE);
    expect((await recordEscalations(relay.context, relay.clock.now)).ids).toEqual([]);
    expect(await sms()).toEqual([ONCALL]);
    const found = await call('GET', '/hooks/og/v2/alerts/disk-db-01', { query: 'identifierType=alias' });
    expect(found.body['data']).toMatchObject({ id: incident!.id, status: 'closed' });

    // Fires again: a new alert (a new incident, tiny id 2) and a new SMS.
    await call('POST', '/hooks/og/v2/alerts', { body: DISK });
    expect(await sms()).toEqual([ONCALL, ONCALL]);
    const again = await call('GET', '/hooks/og/v2/alerts/disk-db-01', { query: 'identifierType=alias' });
    expect(again.body['data']).toMatchObject({ status: 'open', tinyId: '2' });
    expect((again.body['data'] as { id: string }).id).not.toBe(incident!.id);
  });

  it('keeps notes and message or description updates on the alert, without an SMS; requires their text (422)', async () => {
    await start();
    await call('POST', '/hooks/og/v2/alerts', { body: DISK });
    const alias = { query: 'identifierType=alias' };
    expect(
      (await call('PUT', '/hooks/og/v2/alerts/disk-db-01/message', { ...alias, body: { message: 'Disk 99 %' } }))
        .status,
    ).toBe(202);
    expect(
      (await call('PUT', '/hooks/og/v2/alerts/disk-db-01/description', { ...alias, body: { description: 'grows' } }))
        .status,
    ).toBe(202);
    expect(
      (await call('POST', '/hooks/og/v2/alerts/disk-db-01/notes', { ...alias, body: { note: 'seen' } })).status,
    ).toBe(202);
    const found = await call('GET', '/hooks/og/v2/alerts/disk-db-01', alias);
    expect(found.body['data']).toMatchObject({ message: 'Disk 99 %', description: 'grows' });
    const noNote = await call('POST', '/hooks/og/v2/alerts/disk-db-01/notes', { ...alias, body: { user: 'asha' } });
    expect([noNote.status, noNote.body['message']]).toEqual([422, 'Note can not be empty.']);
    const notJson = await call('PUT', '/hooks/og/v2/alerts/disk-db-01/message', { ...alias, body: '[1' });
    expect([notJson.status, notJson.body['message']]).toEqual([422, 'Request body is not processable']);
    expect(await sms()).toEqual([ONCALL]);
  });

  it('answers an action on an unknown alert 202 and says so on its request, as Opsgenie does', async () => {
    await start();
    const close = await call('POST', '/hooks/og/v2/alerts/nothing-here/close', { query: 'identifierType=alias' });
    expect(close.status).toBe(202);
    const status = await call('GET', `/hooks/og/v2/alerts/requests/${String(close.body['requestId'])}`);
    expect(status.body['data']).toMatchObject({ success: false, action: 'Close', status: 'Alert does not exist' });
  });
});

describe("Opsgenie's alert API: refusals and unknown paths", () => {
  it('refuses every API request without the GenieKey (401), before looking anything up', async () => {
    await start();
    for (const [method, path] of [
      ['GET', '/hooks/og/v2/alerts/abc'],
      ['POST', '/hooks/og/v2/alerts/abc/close'],
      ['GET', '/hooks/og/v2/alerts/requests/abc'],
      ['GET', '/hooks/og/v2/heartbeats/og/ping'],
    ] as const) {
      const answer = await call(method, path, { headers: { Authorization: 'GenieKey nope' } });
      expect([answer.status, answer.body['message']], path).toEqual([401, 'Could not authenticate']);
    }
  });

  it('answers 404 for an unknown path, alert or request, 422 for an unknown identifierType', async () => {
    await start();
    const notFound = [
      ['GET', '/hooks/og/v2/alerts/01JXXXXXXXXXXXXXXXXXXXXXXX', 'Alert does not exist'],
      ['GET', '/hooks/og/v2/alerts/requests/4b5c', 'Request does not exist'],
      ['GET', '/hooks/og/v2/teams', 'Could not find the requested resource'],
      ['POST', '/hooks/og/v2/alerts/abc/snooze', 'Could not find the requested resource'],
      ['DELETE', '/hooks/og/v2/alerts/abc', 'Could not find the requested resource'],
      ['POST', '/hooks/og/v1/alerts', 'Could not find the requested resource'],
    ] as const;
    for (const [method, path, message] of notFound) {
      const answer = await call(method, path);
      expect([answer.status, answer.body['message']], `${method} ${path}`).toEqual([404, message]);
    }
    const wrongType = await call('GET', '/hooks/og/v2/alerts/abc', { query: 'identifierType=name' });
    expect([wrongType.status, wrongType.body['message']]).toEqual([
      422,
      'identifierType must be one of id, alias, tiny',
    ]);
  });

  it('answers 404 below a route of another source, and below an unknown route, as before', async () => {
    await start();
    for (const path of ['/hooks/alerts/v2/alerts', '/hooks/nowhere/v2/alerts']) {
      const answer = await call('POST', path, { body: DISK });
      expect([answer.status, answer.body], path).toEqual([
        404,
        { error: `no route at ${path}; post to /hooks/<route>` },
      ]);
    }
  });
});

describe("Opsgenie's alert API: heartbeat ping", () => {
  it("notes the route's heartbeat (GET or POST), 404 on a route without one", async () => {
    await start({ heartbeat: { every: '5m', grace: '2m' } });
    const ping = await call('GET', '/hooks/og/v2/heartbeats/prometheus/ping');
    expect([ping.status, ping.body['result']]).toEqual([202, 'PONG - Heartbeat received']);
    expect(await relay.store.getHeartbeat('og')).toMatchObject({ lastSeenAt: relay.clock.now.toISOString() });
    expect((await call('POST', '/hooks/og/v2/heartbeats/prometheus/ping')).status).toBe(202);

    await start();
    const none = await call('POST', '/hooks/og/v2/heartbeats/prometheus/ping');
    expect([none.status, none.body['message']]).toEqual([404, 'Heartbeat does not exist']);
    expect(await relay.records('og')).toEqual([]);
  });
});
