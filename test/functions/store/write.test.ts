import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../../functions/store';
import type { StoreTable } from '../../../functions/store/store-table';
import { type AttributeValue, GetItemCommand, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { writeAllIf, writeIf } from '../../../functions/store/write';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { countRequests } from '../../helpers/requests';
import { newTable, T0 } from './fixtures';
import { SPEND_WINDOW_MS } from '../../../functions/core/defaults';

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
  return {
    context: {
      client,
      tableName,
      clock: () => T0,
      readIndexes: true,
      onUndecodable: () => undefined,
      spendWindowMs: SPEND_WINDOW_MS,
    },
    requests: countRequests(client),
  };
}

describe('writeIf: one conditional write, one outcome', () => {
  it('applies a put whose condition holds, and refuses the next with the item that refused it', async () => {
    const { context, requests } = await table();
    const put = { Item: { ...key, n: { N: '1' } }, ConditionExpression: 'attribute_not_exists(pk)' };
    expect(await writeIf(context, put)).toEqual({ applied: true, item: {} });
    expect(await writeIf(context, { ...put, Item: { ...key, n: { N: '2' } } }, { current: true })).toEqual({
      applied: false,
      current: { ...key, n: { N: '1' } },
    });
    // dynalite sends no item with the refusal: one read after it, and only because it was asked for. DynamoDB Local sends it, as AWS does.
    expect(requests.byCommand()).toEqual(db.engine === 'dynalite' ? { PutItem: 2, GetItem: 1 } : { PutItem: 2 });
    requests.reset();
    expect(await writeIf(context, put)).toEqual({ applied: false, current: undefined });
    expect(requests.byCommand()).toEqual({ PutItem: 1 });
  });

  it('applies an update with the item ReturnValues asked for, and refuses one on a missing item with no item', async () => {
    const { context } = await table();
    const add = {
      Key: key,
      UpdateExpression: 'ADD n :one',
      ConditionExpression: 'attribute_not_exists(n) OR n < :max',
      ExpressionAttributeValues: { ':one': { N: '1' }, ':max': { N: '2' } },
      ReturnValues: 'ALL_NEW' as const,
    };
    expect(await writeIf(context, add)).toEqual({ applied: true, item: { ...key, n: { N: '1' } } });
    expect(await writeIf(context, add)).toEqual({ applied: true, item: { ...key, n: { N: '2' } } });
    expect(await writeIf(context, add, { current: true })).toEqual({
      applied: false,
      current: { ...key, n: { N: '2' } },
    });
    expect(
      await writeIf(
        context,
        {
          Key: { ...key, sk: { S: 'OTHER' } },
          UpdateExpression: 'SET n = :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': { N: '1' } },
        },
        { current: true },
      ),
    ).toEqual({
      applied: false,
      current: undefined,
    });
  });

  it('throws what is not a refusal', async () => {
    const { context } = await table();
    await expect(writeIf(context, { Key: key, UpdateExpression: 'SET n = :missing' })).rejects.toMatchObject({
      name: 'ValidationException',
    });
  });

  it('is what the store writes with: a lost claim is one refused update, nothing more', async () => {
    const { tableName } = await newTable(db);
    const client = db.newClient();
    const requests = countRequests(client);
    const store = createStore({ client, tableName, clock: () => T0 });
    const {
      ids: [id],
    } = await store.acceptWebhook({
      route: 'a',
      dedupeKey: 'k',
      windowSeconds: 60,
      messages: [
        {
          index: 0,
          part: 1,
          parts: 1,
          text: 'x',
          to: ['255712345678'],
          encoding: 'GSM-7',
          characters: 1,
          segments: 1,
          delivery: 'at-most-once',
        },
      ],
    });
    expect(await store.claimMessage(id!)).toBeDefined();
    requests.reset();
    expect(await store.claimMessage(id!)).toBeUndefined();
    expect(requests.byCommand()).toEqual({ UpdateItem: 1 });
  });
});

describe('writeAllIf: conditional puts written all or none, in one request, with the same kind of outcome', () => {
  const other = { pk: { S: 'TEST#2' }, sk: { S: 'TEST' } };
  const fresh = (item: Record<string, AttributeValue>) => ({
    put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
  });

  it('applies every put in one request, and refuses them all with each refusing item, where asked for, from the refusal', async () => {
    const { context, requests } = await table();
    expect(await writeAllIf(context, [fresh({ ...key, n: { N: '1' } }), fresh(other)])).toEqual({ applied: true });
    expect(requests.byCommand()).toEqual({ TransactWriteItems: 1 });
    requests.reset();

    const third = { pk: { S: 'TEST#3' }, sk: { S: 'TEST' } };
    const refused = await writeAllIf(context, [
      { ...fresh({ ...key, n: { N: '2' } }), current: true },
      fresh(third),
      fresh(other),
    ]);

    expect(refused).toEqual({
      applied: false,
      puts: [
        { refused: true, current: { ...key, n: { N: '1' } } },
        { refused: false },
        { refused: true, current: undefined },
      ],
    });
    // The local store, as DynamoDB, sends the item with the refusal: no read.
    expect(requests.byCommand()).toEqual({ TransactWriteItems: 1 });
    const { Item } = await context.client.send(new GetItemCommand({ TableName: context.tableName, Key: third }));
    expect(Item).toBeUndefined();
  });

  it('reads the refusing item after the refusal only when the refusal lacks it', async () => {
    const { context, requests } = await table();
    await writeAllIf(context, [fresh({ ...key, n: { N: '1' } })]);
    context.client.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (error) {
          if (error instanceof TransactionCanceledException)
            for (const reason of error.CancellationReasons ?? []) delete reason.Item;
          throw error;
        }
      },
      { step: 'initialize', name: 'dropItems' },
    );
    requests.reset();
    expect(await writeAllIf(context, [{ ...fresh(key), current: true }])).toEqual({
      applied: false,
      puts: [{ refused: true, current: { ...key, n: { N: '1' } } }],
    });
    expect(requests.byCommand()).toEqual({ TransactWriteItems: 1, GetItem: 1 });
  });

  it('sends a transaction cancelled by a concurrent one again (TransactionConflict, which DynamoDB answers and dynalite cannot), up to 3 times', async () => {
    const { context, requests } = await table();
    let conflicts = 0;
    const conflict = () =>
      new TransactionCanceledException({
        message: 'Transaction cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'TransactionConflict' }],
      });
    context.client.middlewareStack.add(
      (next) => async (args) => {
        if (conflicts < 2) {
          conflicts += 1;
          throw conflict();
        }
        return await next(args);
      },
      { step: 'initialize', name: 'conflicts' },
    );
    expect(await writeAllIf(context, [fresh(key)])).toEqual({ applied: true });
    expect(requests.byCommand()).toEqual({ TransactWriteItems: 3 });

    conflicts = -1;
    await expect(writeAllIf(context, [fresh(other)])).rejects.toBeInstanceOf(TransactionCanceledException);
  });

  it('throws what is not a refusal', async () => {
    const { context } = await table();
    const twoWritesToOneItem = writeAllIf(context, [fresh(key), fresh(key)]);
    // DynamoDB Local cancels a transaction with two writes to one item where AWS (and dynalite here) refuse it as invalid.
    if (db.engine === 'dynamodb-local')
      return void (await expect(twoWritesToOneItem).resolves.toMatchObject({ applied: false }));
    await expect(twoWritesToOneItem).rejects.toMatchObject({ name: 'ValidationException' });
  });
});
