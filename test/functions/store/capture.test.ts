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

describe('capturePayload and listCaptures', () => {
  it('keeps the body exactly and every header but credentials and signatures, newest first, until it expires', async () => {
    const { store } = await newTable(db);
    const first = await store.capturePayload({ route: 'github', receivedAt: at(0), headers: HEADERS, body: new TextEncoder().encode('{"a":1}'), recordIds: ['r1'], keepSeconds: 60 });
    await store.capturePayload({ route: 'github', receivedAt: at(1000), headers: {}, body: new Uint8Array([0xff, 0xfe]), recordIds: [], keepSeconds: 3600 });
    await store.capturePayload({ route: 'other', receivedAt: at(0), headers: {}, body: new Uint8Array(), recordIds: [], keepSeconds: 60 });

    const listed = await store.listCaptures('github', { now: at(2000) });
    expect(listed.map((captured) => captured.body)).toEqual(['//4=', '{"a":1}']);
    expect(listed[0]).toMatchObject({ bodyEncoding: 'base64', recordIds: [] });
    expect(listed[1]).toEqual({ ...first, expiresAt: T0.getTime() / 1000 + 60 });
    expect(listed[1]!.headers).toEqual({ 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': 'd-1' });
    expect(JSON.stringify(listed)).not.toMatch(/s3cret|sha256=abc/);
    // The first one is kept for 60 s only.
    expect((await store.listCaptures('github', { now: at(61_000) })).map((captured) => captured.bodyEncoding)).toEqual(['base64']);
  });

  it('reads one capture by its id, and nothing for another route, a foreign id or an expired one', async () => {
    const { store } = await newTable(db);
    const kept = await store.capturePayload({ route: 'github', receivedAt: at(500), headers: HEADERS, body: new TextEncoder().encode('{"b":2}'), recordIds: ['r2'], keepSeconds: 60 });
    const gone = await store.capturePayload({ route: 'github', receivedAt: at(-120_000), headers: {}, body: new Uint8Array(), recordIds: [], keepSeconds: 60 });
    expect(await store.getCapture('github', kept.id)).toEqual(kept);
    expect(await store.getCapture('other', kept.id)).toBeUndefined();
    expect(await store.getCapture('github', 'not-an-id')).toBeUndefined();
    expect(await store.getCapture('github', gone.id)).toBeUndefined();
  });

  it('leaves out any header whose name says credential, signature, hmac, token, secret or key', () => {
    expect(keptHeaders({ 'x-api-key': '1', 'stripe-signature': '2', 'x-shopify-hmac-sha256': '3', 'user-agent': 'GitHub-Hookshot' })).toEqual({ 'user-agent': 'GitHub-Hookshot' });
  });
});
