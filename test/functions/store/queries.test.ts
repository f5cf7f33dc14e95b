import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidCursorError, type MessageRecord, type MessageStore, type Page } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { at, message, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const lastError = { name: 'TimeoutError', message: 'timed out' };

/** Accepts one message per entry, the n-th at n seconds past T0, and returns the ids in order. */
const acceptEach = async (store: MessageStore, routes: readonly string[]): Promise<string[]> => {
  const ids: string[] = [];
  for (const [n, route] of routes.entries()) {
    const { ids: [id] } = await store.acceptWebhook({
      route,
      dedupeKey: `k${n}`,
      windowSeconds: 60,
      messages: [message({ text: `m${n}` })],
      now: at(n * 1000),
    });
    ids.push(id ?? '');
  }
  return ids;
};

const collect = async (next: (cursor?: string) => Promise<Page<MessageRecord>>): Promise<string[][]> => {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await next(cursor);
    pages.push(page.items.map((record) => record.id));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return pages;
};

describe('getMessage', () => {
  it('returns undefined for an unknown id', async () => {
    const { store } = await newTable(db);
    expect(await store.getMessage('01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeUndefined();
  });
});

describe('listByState', () => {
  it('pages through one state oldest first, leaving other states and non-message items out', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'a', 'b', 'a', 'b']);
    await store.claimMessage(ids[1] ?? '', { now: at(10_000) });
    // Limit and balance items live in the same table and must never show up in a listing.
    await store.reserveLimit({ route: 'a', messages: { max: 5, windowSeconds: 60 }, now: at(0) });
    await store.updateBalanceState({ balance: 5, threshold: 10, now: at(0) });

    const pages = await collect((cursor) => store.listByState('PENDING', { limit: 2, ...(cursor ? { cursor } : {}) }));

    expect(pages.flat()).toEqual([ids[0], ids[2], ids[3], ids[4]]);
    expect(pages[0]).toHaveLength(2);
    expect((await store.listByState('SENDING')).items.map((record) => record.id)).toEqual([ids[1]]);
  });

  it('selects by time: since inclusive, before exclusive, newest first on request', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'a', 'a', 'a']);
    const page = await store.listByState('PENDING', { since: at(1000), before: at(3000) });
    expect(page.items.map((record) => record.id)).toEqual([ids[1], ids[2]]);
    expect(page.cursor).toBeUndefined();
    expect((await store.listByState('PENDING', { before: at(1000) })).items.map((record) => record.id)).toEqual([ids[0]]);
    expect((await store.listByState('PENDING', { since: at(3000) })).items.map((record) => record.id)).toEqual([ids[3]]);
    expect((await store.listByState('PENDING', { newestFirst: true })).items.map((record) => record.id)).toEqual(
      [...ids].reverse(),
    );
    expect((await store.listByState('PENDING', { since: at(3000), before: at(1000) })).items).toEqual([]);
  });

  it('refuses a cursor it did not make and a page size out of range', async () => {
    const { store } = await newTable(db);
    await expect(store.listByState('PENDING', { cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
    const numeric = Buffer.from(JSON.stringify({ pk: { N: '1' } })).toString('base64url');
    await expect(store.listByState('PENDING', { cursor: numeric })).rejects.toBeInstanceOf(InvalidCursorError);
    await expect(store.listByState('PENDING', { limit: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('listByRoute', () => {
  it('pages through one route in order of acceptance, whatever the state', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'b', 'a', 'a', 'b', 'a']);
    await store.claimMessage(ids[2] ?? '', { now: at(10_000) });

    const pages = await collect((cursor) => store.listByRoute('a', { limit: 3, ...(cursor ? { cursor } : {}) }));

    expect(pages.flat()).toEqual([ids[0], ids[2], ids[3], ids[5]]);
    const since = await store.listByRoute('a', { since: at(3000), newestFirst: true });
    expect(since.items.map((record) => record.id)).toEqual([ids[5], ids[3]]);
  });
});

describe('findStaleSending', () => {
  it('lists SENDING records claimed before the cut-off', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'a', 'a']);
    await store.claimMessage(ids[0] ?? '', { now: at(10_000) });
    await store.claimMessage(ids[1] ?? '', { now: at(50_000) });

    const stale = await store.findStaleSending({ olderThan: at(50_000) });

    expect(stale.items.map((record) => [record.id, record.claimToken !== undefined])).toEqual([[ids[0], true]]);
  });
});

describe('findDuePending', () => {
  it('lists PENDING records without a next attempt or whose next attempt has come', async () => {
    const { store } = await newTable(db);
    const ids = await acceptEach(store, ['a', 'a', 'a']);
    for (const [n, id] of ids.slice(0, 2).entries()) {
      const record = await store.claimMessage(id, { now: at(10_000) });
      await store.releaseForRetry(id, record?.claimToken ?? '', {
        nextAttemptAt: at(60_000 * (n + 1)),
        lastError,
        now: at(10_000),
      });
    }

    const due = async (now: number, updatedBefore?: number) =>
      (await store.findDuePending({ now: at(now), ...(updatedBefore === undefined ? {} : { updatedBefore: at(updatedBefore) }) })).items
        .map((record) => record.id)
        .sort();

    expect(await due(59_999)).toEqual([ids[2]]);
    expect(await due(60_000)).toEqual([ids[0], ids[2]].sort());
    expect(await due(120_000)).toEqual([...ids].sort());
    // Leave fresh records to the stream-triggered sender.
    expect(await due(120_000, 2000)).toEqual([]);
  });
});
