import { createHmac, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { MessageState } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import {
  alertBody,
  bearer,
  fixtureText,
  harness,
  type Harness,
  ONCALL,
  OPS,
  SECRETS,
  secretValues,
  useRelayServers,
} from './support';

const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const github = (event: string, body: string, secret: string = SECRETS.githubSecret, delivery = randomUUID()) => ({
  'content-type': 'application/json',
  'x-github-event': event,
  'x-github-delivery': delivery,
  'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

describe('ingestWebhook', () => {
  it('records a signed webhook as a PENDING message and answers 202 with its id', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const response = await relay.ingest('alerts', alertBody(), { headers: bearer(SECRETS.alertsToken) });

    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: 'accepted' });
    const ids = response.body['ids'] as string[];
    expect(ids).toHaveLength(1);
    const record = await relay.record(ids[0]!);
    expect(record).toMatchObject({
      route: 'alerts',
      state: MessageState.Pending,
      text: '[FIRING] DiskAlmostFull: Disk /var/lib/postgresql on db-01 is 94% full',
      // "+255 712 345 678" and the payload's "0712345678" are one person.
      to: [ONCALL],
      senderId: 'ALERTS',
      delivery: 'at-most-once',
      attempts: 0,
      createdAt: relay.clock.now.toISOString(),
    });
    expect(relay.metrics.points).toEqual([{ name: 'Accepted', value: 1, route: 'alerts' }]);
    // Nothing is sent by ingest.
    expect(servers.sandbox.messages()).toHaveLength(0);
  });

  it('verifies an HMAC-signed GitHub delivery over the exact bytes', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const body = fixtureText('github/issues-opened.json');
    const response = await relay.ingest('github', body, { headers: github('issues', body) });

    expect(response.status).toBe(202);
    const [record] = await relay.records('github');
    expect(record).toMatchObject({ state: MessageState.Pending, to: [OPS], senderId: 'OPS' });
    expect(record!.text).toBe(
      '[kilimo-labs/sms-relay] Issue #17 opened by juma-kassim: Balance alert SMS not sent when top-up fails',
    );
  });

  it('accepts deliveries signed with the new route secret and with the previous one kept beside it during a rotation, until it is retired', async () => {
    const rotated = `gh-new-${randomUUID()}`;
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      secrets: secretValues({ 'github-secret': rotated, 'github-secret.previous': SECRETS.githubSecret }),
    });
    // A different delivery each time: GitHub's dedupe also keys the signed body.
    const delivery = (n: number): string =>
      JSON.stringify({ ...(JSON.parse(fixtureText('github/issues-opened.json')) as object), delivery: n });
    const [body, second, third, fourth] = [1, 2, 3, 4].map(delivery) as [string, string, string, string];

    const byOld = await relay.ingest('github', body, { headers: github('issues', body) });
    const byNew = await relay.ingest('github', second, { headers: github('issues', second, rotated) });
    const byNeither = await relay.ingest('github', third, { headers: github('issues', third, `gh-${randomUUID()}`) });

    expect([byOld.status, byNew.status, byNeither.status]).toEqual([202, 202, 401]);
    // Logged by name, never the value: the operator sees which senders still use the old one.
    expect(relay.logger.lines).toContainEqual({
      level: 'info',
      message: 'webhook authenticated with the previous route secret',
      attributes: { route: 'github', secretName: 'github-secret.previous' },
    });

    // Retired: the previous value removed from the secret.
    relay.writeSecrets(secretValues({ 'github-secret': rotated }));
    await relay.context.secrets.refresh();
    const retired = await relay.ingest('github', fourth, { headers: github('issues', fourth) });
    expect(retired.status).toBe(401);
    expect((await relay.ingest('github', fourth, { headers: github('issues', fourth, rotated) })).status).toBe(202);
  });

  it('records each SMS in its lane, fixed at accept: critical on a priority: critical route, bulk on any other', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: (config) => ({
        ...config,
        routes: { ...config.routes, alerts: { ...config.routes['alerts']!, priority: 'critical' } },
      }),
    });
    const alert = await relay.ingest('alerts', alertBody(), { headers: bearer(SECRETS.alertsToken) });
    const order = await relay.ingest('ops', '{"message":"order 42 shipped"}', {
      headers: bearer(SECRETS.genericToken),
    });

    expect(alert.lanes).toEqual(['critical']);
    expect(order.lanes).toEqual(['bulk']);
    expect((await relay.records('alerts')).map((record) => record.lane)).toEqual(['critical']);
    expect((await relay.records('ops')).map((record) => record.lane)).toEqual(['bulk']);
  });

  it('answers a repeated delivery with 200 duplicate and the first ids, recording nothing new', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const body = alertBody();
    const first = await relay.ingest('alerts', body, { headers: bearer(SECRETS.alertsToken) });
    relay.clock.advance(30_000);
    const again = await relay.ingest('alerts', body, { headers: bearer(SECRETS.alertsToken) });

    expect(again).toEqual({
      outcome: 'duplicate',
      status: 200,
      ids: first.ids,
      lanes: first.lanes,
      body: { status: 'duplicate', ids: first.body['ids'] },
    });
    expect(await relay.records('alerts')).toHaveLength(1);
    expect(relay.metrics.total('Duplicates', 'alerts')).toBe(1);
  });

  it('records a filtered webhook as DROPPED with the reason, and answers 200', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const response = await relay.ingest('alerts', alertBody({ status: 'resolved' }), {
      headers: bearer(SECRETS.alertsToken),
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'filtered', reason: `when "status == 'firing'" is false` });
    const records = await relay.records('alerts');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      state: MessageState.Dropped,
      reason: `when "status == 'firing'" is false`,
      to: [],
    });
    expect(relay.metrics.total('Filtered', 'alerts')).toBe(1);
  });

  it('records every fan-out item: PENDING for those that send, DROPPED for those filtered', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const body = JSON.stringify({
      items: [
        { send: true, text: 'one' },
        { send: false, text: 'two' },
        { send: true, text: 'three' },
      ],
    });
    const response = await relay.ingest('fan', body, { headers: bearer(SECRETS.genericToken) });

    expect(response.status).toBe(202);
    expect(response.body['ids']).toHaveLength(2);
    expect(response.body['skipped']).toEqual([{ item: 1, verdict: 'filtered', reason: 'when "item.send" is false' }]);
    const records = await relay.records('fan');
    expect(records.map((record) => [record.index, record.state, record.text])).toEqual(
      expect.arrayContaining([
        [0, MessageState.Pending, 'one'],
        [1, MessageState.Dropped, ''],
        [2, MessageState.Pending, 'three'],
      ]),
    );
    expect(records).toHaveLength(3);
  });

  it('records a fan-out with more filtered items than one accept may hold, instead of failing it', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const items = Array.from({ length: 150 }, (_, index) => ({ send: index === 0, text: `item ${index}` }));
    const response = await relay.ingest('fan', JSON.stringify({ items }), { headers: bearer(SECRETS.genericToken) });

    expect(response.status).toBe(202);
    const records = await relay.records('fan');
    expect(records.filter((record) => record.state === MessageState.Pending)).toHaveLength(1);
    const dropped = records.filter((record) => record.state === MessageState.Dropped);
    // 1 + 50 = the 51 records one accept may hold; the last DROPPED one stands for the 100 items
    // that did not fit, so the log still says what happened to them.
    expect(dropped).toHaveLength(50);
    expect(
      dropped.filter((record) =>
        record.reason?.startsWith('100 more items produced no SMS (the first, item 50: when "item.send" is false)'),
      ),
    ).toHaveLength(1);
  });

  it.each([
    ['a wrong bearer token', 'alerts', alertBody(), bearer('not-the-token')],
    ['no credential', 'alerts', alertBody(), {}],
    [
      'a GitHub signature made with another secret',
      'github',
      fixtureText('github/push.json'),
      github('push', fixtureText('github/push.json'), 'another-secret'),
    ],
  ])('refuses %s with 401 and records nothing', async (_case, route, body, headers) => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const response = await relay.ingest(route, body, { headers });

    expect(response.status).toBe(401);
    expect(response.body['error']).toBe('unauthorized');
    expect(await relay.records(route)).toHaveLength(0);
    expect(JSON.stringify(response.body)).not.toContain(SECRETS.alertsToken);
    expect(JSON.stringify(response.body)).not.toContain(SECRETS.githubSecret);
  });

  it('does not take a refused webhook for a duplicate when it comes back signed', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const body = alertBody();
    expect((await relay.ingest('alerts', body, { headers: bearer('wrong') })).status).toBe(401);
    expect((await relay.ingest('alerts', body, { headers: bearer(SECRETS.alertsToken) })).status).toBe(202);
  });

  it('answers a body that is not JSON with 400', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const response = await relay.ingest('alerts', '{"receiver": "sms-oncall", ', {
      headers: bearer(SECRETS.alertsToken),
    });

    expect(response).toEqual({
      outcome: 'refused',
      status: 400,
      ids: [],
      error: 'body is not valid JSON',
      reason: undefined,
      body: { error: 'body is not valid JSON' },
    });
    expect(await relay.records('alerts')).toHaveLength(0);
  });

  it('answers an unknown route with 404', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const response = await relay.ingest('nope', alertBody(), { headers: bearer(SECRETS.alertsToken) });

    expect(response).toEqual({
      outcome: 'refused',
      status: 404,
      ids: [],
      error: 'unknown route "nope"',
      reason: undefined,
      body: { error: 'unknown route "nope"' },
    });
  });

  it('answers a body over the limit with 413 before reading it', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const body = alertBody();
    const response = await relay.ingest('alerts', body, {
      headers: bearer(SECRETS.alertsToken),
      maxBodyBytes: body.length - 1,
    });

    expect(response.status).toBe(413);
    expect(await relay.records('alerts')).toHaveLength(0);
    expect(
      (await relay.ingest('alerts', body, { headers: bearer(SECRETS.alertsToken), maxBodyBytes: body.length })).status,
    ).toBe(202);
  });

  it('acknowledges a GitHub ping with 200 and records nothing', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const body = fixtureText('github/ping.json');
    const response = await relay.ingest('github', body, { headers: github('ping', body) });

    expect(response).toEqual({
      outcome: 'ping',
      status: 200,
      ids: [],
      reason: 'github ping',
      body: { status: 'ping', reason: 'github ping' },
    });
    expect(await relay.records('github')).toHaveLength(0);
  });

  it('answers 500 and records nothing when the route secret is missing from the secret', async () => {
    const { 'github-secret': _omitted, ...rest } = secretValues();
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, secrets: rest });
    const body = fixtureText('github/push.json');
    const response = await relay.ingest('github', body, { headers: github('push', body) });

    expect(response.status).toBe(500);
    expect(await relay.records('github')).toHaveLength(0);
    expect(relay.logger.messages('error')).toEqual(['route secret missing from the environment secret']);
  });

  it('answers 500 and records nothing when the route secret could never authenticate (a non-ASCII Bearer token)', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      secrets: { ...secretValues(), 'alerts-token': 'Schlüssel-42' },
    });
    const response = await relay.ingest('alerts', alertBody(), { headers: bearer('Schlüssel-42') });

    expect(response).toMatchObject({
      outcome: 'refused',
      status: 500,
      ids: [],
      body: { error: 'the relay is misconfigured for this route; nothing was recorded' },
    });
    expect(Object.keys(response.body)).toEqual(['error']);
    expect(await relay.records('alerts')).toHaveLength(0);
    expect(relay.logger.messages('error')).toEqual(['route secret can never authenticate this route']);
    expect(relay.logger.text()).toContain('alerts-token');
    expect(relay.logger.text()).not.toContain('Schlüssel');
  });
});

describe('ingestWebhook against hostile and oversized input', () => {
  it('records, never sends, a message whose templated recipients number more than maxRecipients', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: (config) => ({
        ...config,
        routes: {
          ...config.routes,
          shop: { source: 'generic', secret: 'generic-token', recipients: ['0754111222', '{{ billing.phone }}'] },
        },
      }),
    });
    const phones = Array.from({ length: 200 }, (_, index) => `07${String(10_000_000 + index).padStart(8, '0')}`).join(
      ',',
    );
    const response = await relay.ingest(
      'shop',
      JSON.stringify({ message: 'Order #42 paid', billing: { phone: phones } }),
      { headers: bearer(SECRETS.genericToken) },
    );

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'dropped', reason: '201 recipients, more than maxRecipients (10)' });
    const [record, ...more] = await relay.records('shop');
    expect(more).toHaveLength(0);
    expect(record).toMatchObject({
      state: MessageState.Dropped,
      reason: '201 recipients, more than maxRecipients (10)',
      to: [],
    });
  });

  it('records the fan-out items beyond the cap as one DROPPED record, and the 202 says so', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: (config) => ({
        ...config,
        routes: {
          ...config.routes,
          group: {
            ...config.routes['alerts']!,
            when: "item.status == 'firing'",
            fanOut: 'alerts',
            template: '{{ item.labels.alertname }}',
          },
        },
      }),
    });
    const body = JSON.parse(alertBody()) as { alerts: { labels: Record<string, string>; fingerprint: string }[] };
    const [alert] = body.alerts;
    body.alerts = Array.from({ length: 60 }, (_, index) => ({
      ...alert!,
      fingerprint: `fp${index}`,
      labels: { ...alert!.labels, alertname: `Alert${index}` },
    }));
    const response = await relay.ingest('group', JSON.stringify(body), { headers: bearer(SECRETS.alertsToken) });

    expect(response.status).toBe(202);
    expect(response.body['ids']).toHaveLength(50);
    const reason = '10 items not sent: beyond the cap of 50 SMS per webhook';
    expect(response.body['notSent']).toEqual({ items: 10, reason, id: expect.any(String) });
    const records = await relay.records('group');
    expect(records.filter((record) => record.state === MessageState.Pending)).toHaveLength(50);
    expect(records.filter((record) => record.state === MessageState.Dropped)).toEqual([
      expect.objectContaining({ id: (response.body['notSent'] as { id: string }).id, index: 50, reason }),
    ]);
  });

  it('treats a captured GitHub delivery replayed under a fresh delivery id as a duplicate', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const body = fixtureText('github/issues-opened.json');
    const first = await relay.ingest('github', body, { headers: github('issues', body) });
    expect(first.status).toBe(202);

    const replays = await Promise.all(
      Array.from({ length: 5 }, () => relay.ingest('github', body, { headers: github('issues', body) })),
    );

    expect(replays.map((reply) => reply.body)).toEqual(
      Array.from({ length: 5 }, () => ({ status: 'duplicate', ids: first.body['ids'] })),
    );
    expect(await relay.records('github')).toHaveLength(1);
  });

  it('answers a payload whose template fails on its data 200 dropped, and records why', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: (config) => ({
        ...config,
        routes: {
          ...config.routes,
          upper: {
            source: 'generic',
            secret: 'generic-token',
            recipients: ['0754111222'],
            template: '{{ message | upcase }}',
          },
        },
      }),
    });
    const response = await relay.ingest('upper', '{"message":{"toString":"x"}}', {
      headers: bearer(SECRETS.genericToken),
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'dropped',
      reason: expect.stringMatching(/^the template cannot be rendered on this payload: /),
    });
    expect(await relay.records('upper')).toEqual([expect.objectContaining({ state: MessageState.Dropped })]);
  });

  it('answers JSON nested 60,000 deep 200 dropped, and records it once however often it comes', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const body = `{"message":${'['.repeat(60_000)}${']'.repeat(60_000)}}`;
    const first = await relay.ingest('ops', body, { headers: bearer(SECRETS.genericToken) });
    const again = await relay.ingest('ops', body, { headers: bearer(SECRETS.genericToken) });

    expect(first).toMatchObject({
      status: 200,
      body: { status: 'dropped', reason: 'the payload cannot be read: JSON nested deeper than 64 levels' },
    });
    expect(again).toMatchObject({ status: 200, body: { status: 'duplicate' } });
    expect(await relay.records('ops')).toEqual([
      expect.objectContaining({
        state: MessageState.Dropped,
        reason: 'the payload cannot be read: JSON nested deeper than 64 levels',
      }),
    ]);
  });
});

describe('routes.<id>.capture', () => {
  it('keeps each authenticated payload of the route with only its allowed headers, and nothing of a refused one', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: (config) => ({
        ...config,
        routes: { ...config.routes, github: { ...config.routes['github']!, capture: '1d' } },
      }),
    });
    const body = fixtureText('github/issues-opened.json');
    const accepted = await relay.ingest('github', body, { headers: github('issues', body) });
    const ping = await relay.ingest('github', '{"zen":"Keep it logically awesome."}', {
      headers: github('ping', '{"zen":"Keep it logically awesome."}'),
    });
    const refused = await relay.ingest('github', body, { headers: github('issues', body, 'another-secret') });
    expect([accepted.status, ping.status, refused.status]).toEqual([202, 200, 401]);

    const captured = await relay.store.listCaptures('github', { now: relay.clock.now });
    expect(captured).toHaveLength(2);
    // Both arrive at the test clock's one instant: told apart by content, not by order.
    const issue = captured.find((capture) => capture.recordIds.length > 0);
    const pinged = captured.find((capture) => capture.recordIds.length === 0);
    expect(issue).toMatchObject({
      route: 'github',
      body,
      bodyEncoding: 'utf8',
      recordIds: accepted.body['ids'],
      receivedAt: relay.clock.now.toISOString(),
    });
    expect(issue!.headers).toMatchObject({ 'x-github-event': 'issues', 'content-type': 'application/json' });
    expect(issue!.headers).not.toHaveProperty('x-hub-signature-256');
    expect(pinged!.recordIds).toEqual([]);
    expect(issue!.expiresAt - Math.floor(relay.clock.now.getTime() / 1000)).toBe(86_400);
  });

  // Captures once kept every header whose name did not sound like a credential, so a
  // credential in `x-webhook-auth` and an hmac route's own signature in `x-trello-webhook` were kept.
  it("keeps only content type, user agent and the source's event and delivery-id headers, never the route's signature or timestamp header", async () => {
    const trelloSecret = `trello-${randomUUID()}`;
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      secrets: secretValues({ 'trello-secret': trelloSecret }),
      config: (config) => ({
        ...config,
        routes: {
          ...config.routes,
          ops: { ...config.routes['ops']!, capture: '1d' },
          trello: {
            source: 'hmac',
            secret: 'trello-secret',
            recipients: ['0754111222'],
            capture: '1d',
            signature: {
              header: 'x-trello-webhook',
              algorithm: 'sha1',
              encoding: 'base64',
              signed: '{timestamp}.{body}',
            },
            timestamp: { header: 'x-trello-time' },
            dedupe: { header: 'x-trello-delivery' },
          },
        },
      }),
    });
    const hunter = `hunter2-${randomUUID()}`;
    const body = '{"message":"card moved"}';
    const time = String(Math.floor(relay.clock.now.getTime() / 1000));
    const signature = createHmac('sha1', trelloSecret).update(`${time}.${body}`).digest('base64');
    const trello = await relay.ingest('trello', body, {
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Trello',
        'x-trello-webhook': signature,
        'x-trello-time': time,
        'x-trello-delivery': '101',
        'x-webhook-auth': hunter,
      },
    });
    const ops = await relay.ingest('ops', body, {
      headers: {
        ...bearer(SECRETS.genericToken),
        'content-type': 'application/json',
        'idempotency-key': 'backup-1',
        'x-webhook-auth': hunter,
        'x-api-token': hunter,
      },
    });
    expect([trello.status, ops.status]).toEqual([202, 202]);

    const [trelloCapture] = await relay.store.listCaptures('trello', { now: relay.clock.now });
    expect(trelloCapture!.headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'Trello',
      'x-trello-delivery': '101',
    });
    const [opsCapture] = await relay.store.listCaptures('ops', { now: relay.clock.now });
    expect(opsCapture!.headers).toEqual({ 'content-type': 'application/json', 'idempotency-key': 'backup-1' });
    expect(JSON.stringify([trelloCapture, opsCapture])).not.toMatch(
      new RegExp(`${hunter}|${signature.replace(/[+/=]/g, '\\$&')}|${SECRETS.genericToken}`),
    );
  });

  it('keeps nothing for a route without capture', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const body = fixtureText('github/issues-opened.json');
    expect((await relay.ingest('github', body, { headers: github('issues', body) })).status).toBe(202);
    expect(await relay.store.listCaptures('github', { now: relay.clock.now })).toEqual([]);
  });
});
