import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileOnCall } from '../../../functions/core/oncall';
import type { MessageStore } from '../../../functions/store';
import { createRelayServer, type RelayServer } from '../../../local/runtime/server';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { newTable, T0 } from '../../functions/store/fixtures';

/**
 * `/_relay/overrides`, `/_relay/oncall` and `/_relay/routes`: what `sms-relay oncall` and `mutes`
 * use while the runtime holds the local store, without loading the config themselves.
 */

let db: Dynalite;
let relay: RelayServer;
let store: MessageStore;
let base: string;
let relayUrl: string;
/** The runtime's clock: a fixed instant, moved only where a test needs an override set later. */
let relayNow = T0;

/** The runtime's secret, which every `/_relay` request presents. */
const OPERATOR = { authorization: 'Bearer overrides-test-secret' };

beforeAll(async () => {
  db = await startDynalite();
  ({ store } = await newTable(db));
  const problems: string[] = [];
  const onCall = compileOnCall(
    { asha: { phone: '0712345678' }, baraka: { phone: '0754000111' } },
    {
      ops: {
        timezone: 'Africa/Dar_es_Salaam',
        rotation: { people: ['asha', 'baraka'], every: 604_800, start: '2026-11-30T09:00' },
        notifyHandoff: false,
      },
    },
    problems,
  );
  relay = createRelayServer();
  const port = await relay.listen(0, '127.0.0.1');
  relayUrl = `http://127.0.0.1:${port}/_relay`;
  base = `${relayUrl}/overrides`;
  relay.attach({
    maxBodyBytes: 1024,
    ingest: async () => {
      throw new Error('no webhooks here');
    },
    onAccepted: () => undefined,
    onWebhook: () => undefined,
    onError: () => undefined,
    health: async () => ({ ok: true }),
    store,
    onCall,
    routes: new Map([
      ['alerts', 'Africa/Nairobi'],
      ['orders', 'UTC'],
    ]),
    isOperator: (authorization) => authorization === OPERATOR.authorization,
    // The store's instant, as the runtime gives both one clock.
    clock: () => relayNow,
  });
});

afterAll(async () => {
  relay.server.closeAllConnections();
  await relay.close();
  await db.close();
});

const post = async (body: unknown, contentType = 'application/json') => {
  const response = await fetch(base, {
    method: 'POST',
    headers: { ...OPERATOR, 'content-type': contentType },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const listed = async (schedules: string) =>
  ((await (await fetch(`${base}?schedules=${schedules}`, { headers: OPERATOR })).json()) as { overrides: unknown[] })
    .overrides;

describe('/_relay/overrides', () => {
  it('refuses an unknown schedule or person, a length out of bounds and a body that is not JSON, and writes nothing', async () => {
    expect(await post({ schedule: 'db', person: 'asha', forSeconds: 3600 })).toEqual({
      status: 400,
      body: { error: 'unknown schedule "db"' },
    });
    expect(await post({ schedule: 'ops', person: 'carol', forSeconds: 3600 })).toEqual({
      status: 400,
      body: { error: 'unknown person "carol"' },
    });
    expect((await post({ schedule: 'ops', person: 'baraka', forSeconds: 31 * 86_400 })).status).toBe(400);
    expect((await post({ schedule: 'ops', person: 'baraka', forSeconds: 3600 }, 'text/plain')).status).toBe(415);
    expect(await listed('ops')).toEqual([]);
  });

  it('sets an override and lists it for its schedule only', async () => {
    const set = await post({ schedule: 'ops', person: 'baraka', forSeconds: 8 * 3600, reason: 'asha travels' });
    expect(set).toMatchObject({
      status: 200,
      body: { override: { schedule: 'ops', person: 'baraka', reason: 'asha travels' } },
    });
    expect(await listed('ops')).toEqual([set.body['override']]);
    expect(await listed('db')).toEqual([]);
    expect((await fetch(base, { method: 'DELETE', headers: OPERATOR })).status).toBe(405);
  });
});

describe('/_relay/oncall and /_relay/routes', () => {
  const get = async (path: string) => {
    const response = await fetch(`${relayUrl}${path}`, { headers: OPERATOR });
    return { status: response.status, text: await response.text() };
  };

  it("says who each schedule puts on call now, by name, with the override's reason and the schedule's zone, never a number", async () => {
    // asha over the rotation (and over baraka's override the test above set) for an hour, set a
    // second later: the newest override in force wins.
    const set = await store.overrideOnCall({
      schedule: 'ops',
      person: 'asha',
      forSeconds: 3600,
      reason: 'covering the upgrade',
      now: new Date(T0.getTime() + 1_000),
    });
    relayNow = new Date(T0.getTime() + 2_000);
    const { status, text } = await get('/oncall');
    expect(status).toBe(200);
    expect(JSON.parse(text)).toEqual({
      oncall: [
        {
          schedule: 'ops',
          person: 'asha',
          until: set.until,
          timeZone: 'Africa/Dar_es_Salaam',
          overrideReason: 'covering the upgrade',
        },
      ],
    });
    expect(text).not.toMatch(/0712345678|712345678|0754000111|754000111/);
    expect((await fetch(`${relayUrl}/oncall`)).status).toBe(401);
  });

  it("lists the config's routes with the time zone each tells time in", async () => {
    expect(JSON.parse((await get('/routes')).text)).toEqual({
      routes: [
        { id: 'alerts', timeZone: 'Africa/Nairobi' },
        { id: 'orders', timeZone: 'UTC' },
      ],
    });
  });
});
