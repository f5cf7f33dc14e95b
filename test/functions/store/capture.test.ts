import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keptHeaders } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const HEADERS = {
  'content-type': 'application/json',
  'x-github-event': 'push',
  'x-github-delivery': 'd-1',
  authorization: 'Bearer s3cret',
  'x-hub-signature-256': 'sha256=abc',
  'x-gitlab-token': 't',
  'idempotency-key': 'k',
  cookie: 'a=b',
};
const GITHUB_HEADERS = ['content-type', 'user-agent', 'x-github-event', 'x-github-delivery'];

describe('capturePayload and listCaptures', () => {
  it('keeps the body exactly and only the allowed headers, newest first, until it expires', async () => {
    const { store } = await newTable(db);
    const first = await store.capturePayload({
      route: 'github',
      receivedAt: at(0),
      headers: HEADERS,
      keepHeaders: GITHUB_HEADERS,
      body: new TextEncoder().encode('{"a":1}'),
      recordIds: ['r1'],
      keepSeconds: 60,
    });
    await store.capturePayload({
      route: 'github',
      receivedAt: at(1000),
      headers: {},
      keepHeaders: GITHUB_HEADERS,
      body: new Uint8Array([0xff, 0xfe]),
      recordIds: [],
      keepSeconds: 3600,
    });
    await store.capturePayload({
      route: 'other',
      receivedAt: at(0),
      headers: {},
      keepHeaders: [],
      body: new Uint8Array(),
      recordIds: [],
      keepSeconds: 60,
    });

    const listed = await store.listCaptures('github', { now: at(2000) });
    expect(listed.map((captured) => captured.body)).toEqual(['//4=', '{"a":1}']);
    expect(listed[0]).toMatchObject({ bodyEncoding: 'base64', recordIds: [] });
    expect(listed[1]).toEqual({ ...first, expiresAt: T0.getTime() / 1000 + 60 });
    expect(listed[1]!.headers).toEqual({
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': 'd-1',
    });
    expect(JSON.stringify(listed)).not.toMatch(/s3cret|sha256=abc/);
    // The first one is kept for 60 s only.
    expect((await store.listCaptures('github', { now: at(61_000) })).map((captured) => captured.bodyEncoding)).toEqual([
      'base64',
    ]);
  });

  it('reads one capture by its id, and nothing for another route, a foreign id or an expired one', async () => {
    const { store } = await newTable(db);
    const kept = await store.capturePayload({
      route: 'github',
      receivedAt: at(500),
      headers: HEADERS,
      keepHeaders: GITHUB_HEADERS,
      body: new TextEncoder().encode('{"b":2}'),
      recordIds: ['r2'],
      keepSeconds: 60,
    });
    const gone = await store.capturePayload({
      route: 'github',
      receivedAt: at(-120_000),
      headers: {},
      keepHeaders: [],
      body: new Uint8Array(),
      recordIds: [],
      keepSeconds: 60,
    });
    expect(await store.getCapture('github', kept.id)).toEqual(kept);
    expect(await store.getCapture('other', kept.id)).toBeUndefined();
    expect(await store.getCapture('github', 'not-an-id')).toBeUndefined();
    expect(await store.getCapture('github', gone.id)).toBeUndefined();
  });

  // A deny-list of credential-sounding names once kept `x-webhook-auth` and a signature header
  // named `x-trello-webhook`. Only the named headers are kept now, whatever the others are called.
  it('keeps the headers it is told to keep, nothing else, whatever the others are called', async () => {
    const { store } = await newTable(db);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Trello',
      'x-trello-delivery': '101',
      'x-webhook-auth': 'hunter2-s3cret',
      'x-trello-webhook': 'c2lnbmF0dXJl',
      'x-trello-time': '1764150000',
      'x-api-key': '1',
      'x-forwarded-for': '203.0.113.9',
    };
    const kept = await store.capturePayload({
      route: 'trello',
      receivedAt: at(0),
      headers,
      keepHeaders: ['content-type', 'user-agent', 'X-Trello-Delivery'],
      body: new TextEncoder().encode('{}'),
      recordIds: [],
      keepSeconds: 60,
    });
    const expected = { 'content-type': 'application/json', 'user-agent': 'Trello', 'x-trello-delivery': '101' };
    expect(kept.headers).toEqual(expected);
    expect((await store.getCapture('trello', kept.id))?.headers).toEqual(expected);
    expect(keptHeaders(headers, [])).toEqual({});
  });
});
