import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageStore } from '../../../functions/store';
import { createRelayServer, type RelayServer } from '../../../local/runtime/server';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { newTable } from '../../functions/store/fixtures';

/** The runtime's route table: what an unknown path or a method a path does not take is answered. */

let db: Dynalite;
let relay: RelayServer;
let store: MessageStore;
let base: string;

const OPERATOR = { authorization: 'Bearer routes-test-secret' };

beforeAll(async () => {
  db = await startDynalite();
  ({ store } = await newTable(db));
  relay = createRelayServer();
  const port = await relay.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
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
    isOperator: (authorization) => authorization === OPERATOR.authorization,
  });
});

afterAll(async () => {
  relay.server.closeAllConnections();
  await relay.close();
  await db.close();
});

const call = async (method: string, path: string) => {
  const response = await fetch(`${base}${path}`, { method, headers: OPERATOR });
  const text = await response.text();
  return {
    status: response.status,
    allow: response.headers.get('allow'),
    body: text === '' ? undefined : (JSON.parse(text) as unknown),
  };
};

describe('the runtime server routes', () => {
  it('answers /health to GET and HEAD, and 405 with Allow: GET to another method', async () => {
    expect(await call('GET', '/health')).toEqual({ status: 200, allow: null, body: { ok: true } });
    expect((await call('HEAD', '/health')).status).toBe(200);
    expect(await call('POST', '/health')).toEqual({
      status: 405,
      allow: 'GET',
      body: { error: 'method not allowed; use GET' },
    });
  });

  it.each([
    ['HEAD', '/_relay/records', 'GET'],
    ['DELETE', '/_relay/records', 'GET'],
    ['GET', '/_relay/redrive', 'POST'],
    ['DELETE', '/_relay/mutes', 'GET, POST'],
    ['GET', '/_relay/unmute', 'POST'],
    ['PUT', '/_relay/overrides', 'GET, POST'],
    ['POST', '/_relay/incidents', 'GET'],
    ['GET', '/_relay/ack', 'POST'],
  ])('answers %s %s 405 with Allow: %s', async (method, path, allow) => {
    expect(await call(method, path)).toEqual({
      status: 405,
      allow,
      body: method === 'HEAD' ? undefined : { error: `method not allowed; use ${allow}` },
    });
  });

  it('answers an unknown path 404, under /_relay only once the caller presents the secret', async () => {
    expect(await call('GET', '/_relay/nothing')).toEqual({
      status: 404,
      allow: null,
      body: { error: 'not found: GET /_relay/nothing' },
    });
    expect((await fetch(`${base}/_relay/nothing`)).status).toBe(401);
    expect(await call('POST', '/nothing')).toEqual({
      status: 404,
      allow: null,
      body: { error: 'not found: POST /nothing' },
    });
    expect(await call('GET', '/console')).toEqual({
      status: 404,
      allow: null,
      body: { error: 'not found: GET /console' },
    });
  });
});
