import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../../functions/store';
import type { StoreTable } from '../../../functions/store/store-table';
import { writeIf } from '../../../functions/store/write';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { countRequests } from '../../helpers/requests';
import { newTable, T0 } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const key = { pk: { S: 'TEST#1' }, sk: { S: 'TEST' } };

/** A table of its own with a client whose requests are counted. */
async function table(): Promise<{ context: StoreTable; requests: ReturnType<typeof countRequests> }> {
  const { tableName } = await newTable(db);
  const client = db.newClient();
  return { context: { client, tableName, clock: () => T0, readIndexes: true }, requests: countRequests(client) };
}

describe('writeIf: one conditional write, one outcome', () => {
  it('applies a put whose condition holds, and refuses the next with the item that refused it', async () => {
    const { context, requests } = await table();
    const put = { Item: { ...key, n: { N: '1' } }, ConditionExpression: 'attribute_not_exists(pk)' };
    expect(await writeIf(context, put)).toEqual({ applied: true, item: {} });
    expect(await writeIf(context, { ...put, Item: { ...key, n: { N: '2' } } }, { current: true })).toEqual({ applied: false, current: { ...key, n: { N: '1' } } });
    // dynalite sends no item with the refusal: one read after it, and only because it was asked for.
    expect(requests.byCommand()).toEqual({ PutItem: 2, GetItem: 1 });
    requests.reset();
    expect(await writeIf(context, put)).toEqual({ applied: false, current: undefined });
    expect(requests.byCommand()).toEqual({ PutItem: 1 });
  });

  it('applies an update with the item ReturnValues asked for, and refuses one on a missing item with no item', async () => {
    const { context } = await table();
    const add = { Key: key, UpdateExpression: 'ADD n :one', ConditionExpression: 'attribute_not_exists(n) OR n < :max', ExpressionAttributeValues: { ':one': { N: '1' }, ':max': { N: '2' } }, ReturnValues: 'ALL_NEW' as const };
    expect(await writeIf(context, add)).toEqual({ applied: true, item: { ...key, n: { N: '1' } } });
    expect(await writeIf(context, add)).toEqual({ applied: true, item: { ...key, n: { N: '2' } } });
    expect(await writeIf(context, add, { current: true })).toEqual({ applied: false, current: { ...key, n: { N: '2' } } });
    expect(await writeIf(context, { Key: { ...key, sk: { S: 'OTHER' } }, UpdateExpression: 'SET n = :one', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':one': { N: '1' } } }, { current: true })).toEqual({
      applied: false,
      current: undefined,
    });
  });

  it('throws what is not a refusal', async () => {
    const { context } = await table();
    await expect(writeIf(context, { Key: key, UpdateExpression: 'SET n = :missing' })).rejects.toMatchObject({ name: 'ValidationException' });
  });

  it('is what the store writes with: a lost claim is one refused update, nothing more', async () => {
    const { tableName } = await newTable(db);
    const client = db.newClient();
    const requests = countRequests(client);
    const store = createStore({ client, tableName, clock: () => T0 });
    const { ids: [id] } = await store.acceptWebhook({ route: 'a', dedupeKey: 'k', windowSeconds: 60, messages: [{ index: 0, part: 1, parts: 1, text: 'x', to: ['255712345678'], encoding: 'GSM-7', characters: 1, segments: 1, delivery: 'at-most-once' }] });
    expect(await store.claimMessage(id!)).toBeDefined();
    requests.reset();
    expect(await store.claimMessage(id!)).toBeUndefined();
    expect(requests.byCommand()).toEqual({ UpdateItem: 1 });
  });
});
