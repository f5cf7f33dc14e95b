import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AttributeValue,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable } from '../../../functions/store';
import { TABLE } from '../../../functions/store/table';
import { createDynalite } from '../../../local/shared/dynalite';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const newTable = async (): Promise<string> => {
  const name = `tx-${randomUUID()}`;
  await ensureTable(db.client, name);
  return name;
};

const s = (value: string): AttributeValue => ({ S: value });
const item = (pk: string, extra: Record<string, AttributeValue> = {}): Record<string, AttributeValue> => ({
  pk: s(pk),
  sk: s('X'),
  ...extra,
});
const put = (
  tableName: string,
  value: Record<string, AttributeValue>,
  options: { fresh?: boolean; allOld?: boolean } = {},
): TransactWriteItem => ({
  Put: {
    TableName: tableName,
    Item: value,
    ...(options.fresh === false ? {} : { ConditionExpression: 'attribute_not_exists(pk)' }),
    ...(options.allOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
  },
});
const read = async (tableName: string, pk: string): Promise<Record<string, AttributeValue> | undefined> =>
  (
    await db.client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: s(pk), sk: s('X') }, ConsistentRead: true }),
    )
  ).Item;
const cancelledBy = async (promise: Promise<unknown>): Promise<TransactionCanceledException> => {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(TransactionCanceledException);
  return error as TransactionCanceledException;
};

describe('dynalite with TransactWriteItems (the local store)', () => {
  it('writes every put of a transaction, and reports two write units per item as DynamoDB charges them', async () => {
    const table = await newTable();
    const answer = await db.client.send(
      new TransactWriteItemsCommand({
        TransactItems: [put(table, item('A', { n: s('1') })), put(table, item('B'))],
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    expect(await read(table, 'A')).toEqual(item('A', { n: s('1') }));
    expect(await read(table, 'B')).toEqual(item('B'));
    expect(answer.ConsumedCapacity).toEqual([{ TableName: table, CapacityUnits: 4 }]);
  });

  it('writes nothing when one condition fails, and gives one reason per put, with the item where ALL_OLD asked for it', async () => {
    const table = await newTable();
    await db.client.send(new PutItemCommand({ TableName: table, Item: item('GUARD', { owner: s('first') }) }));
    await db.client.send(new PutItemCommand({ TableName: table, Item: item('OTHER', { owner: s('other') }) }));

    const error = await cancelledBy(
      db.client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            put(table, item('GUARD', { owner: s('second') }), { allOld: true }),
            put(table, item('NEW')),
            put(table, item('OTHER')),
          ],
        }),
      ),
    );

    expect(error.message).toBe(
      'Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None, ConditionalCheckFailed]',
    );
    expect(error.CancellationReasons).toEqual([
      {
        Code: 'ConditionalCheckFailed',
        Message: 'The conditional request failed',
        Item: item('GUARD', { owner: s('first') }),
      },
      { Code: 'None' },
      { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
    ]);
    expect(error.$metadata.httpStatusCode).toBe(400);
    expect(await read(table, 'NEW')).toBeUndefined();
    expect(await read(table, 'GUARD')).toEqual(item('GUARD', { owner: s('first') }));
  });

  it('checks a condition with names and values against the item as it stands', async () => {
    const table = await newTable();
    await db.client.send(new PutItemCommand({ TableName: table, Item: item('G', { windowEndsAt: { N: '100' } }) }));
    const guard = (now: number): TransactWriteItem => ({
      Put: {
        TableName: table,
        Item: item('G', { windowEndsAt: { N: String(now + 60) } }),
        ConditionExpression: 'attribute_not_exists(#pk) OR windowEndsAt <= :now',
        ExpressionAttributeNames: { '#pk': 'pk' },
        ExpressionAttributeValues: { ':now': { N: String(now) } },
      },
    });
    await cancelledBy(db.client.send(new TransactWriteItemsCommand({ TransactItems: [guard(99)] })));
    await db.client.send(new TransactWriteItemsCommand({ TransactItems: [guard(100)] }));
    expect((await read(table, 'G'))?.['windowEndsAt']).toEqual({ N: '160' });
  });

  it('writes the index entries of the items it puts', async () => {
    const table = await newTable();
    const record = item('MSG#1', {
      state: s('PENDING'),
      updatedAt: s('2026-01-01T00:00:00.000Z'),
      route: s('orders'),
      createdAt: s('2026-01-01T00:00:00.000Z'),
      id: s('1'),
      text: s('hello'),
    });
    await db.client.send(new TransactWriteItemsCommand({ TransactItems: [put(table, record)] }));

    const byState = await db.client.send(
      new QueryCommand({
        TableName: table,
        IndexName: TABLE.indexes.byState.name,
        KeyConditionExpression: '#s = :s',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':s': s('PENDING') },
      }),
    );
    // The index holds its projection, never the text.
    expect(byState.Items).toEqual([
      {
        pk: s('MSG#1'),
        sk: s('X'),
        state: s('PENDING'),
        updatedAt: record['updatedAt'],
        route: s('orders'),
        createdAt: record['createdAt'],
        id: s('1'),
      },
    ]);
    const byRoute = await db.client.send(
      new QueryCommand({
        TableName: table,
        IndexName: TABLE.indexes.byRoute.name,
        KeyConditionExpression: '#r = :r',
        ExpressionAttributeNames: { '#r': 'route' },
        ExpressionAttributeValues: { ':r': s('orders') },
      }),
    );
    expect(byRoute.Items).toHaveLength(1);
  });

  it('lets exactly one of many racing transactions on the same guard through, and nothing of the others', async () => {
    const table = await newTable();
    const racers = Array.from({ length: 20 }, (_, n) => `racer-${n}`);
    // Each racer also puts items of its own (many, so that racers interleave), before or after the
    // guard: the key order differs between racers, and no two deadlock.
    const own = (racer: string): TransactWriteItem[] =>
      Array.from({ length: 40 }, (_, k) => put(table, item(`OWN#${racer}#${k}`)));
    const outcomes = await Promise.allSettled(
      racers.map((racer, n) => {
        const guard = put(table, item('GUARD', { owner: s(racer) }), { allOld: true });
        return db.client.send(
          new TransactWriteItemsCommand({
            TransactItems: n % 2 === 0 ? [guard, ...own(racer)] : [...own(racer), guard],
          }),
        );
      }),
    );

    const winners = racers.filter((_, n) => outcomes[n]!.status === 'fulfilled');
    expect(winners).toHaveLength(1);
    expect((await read(table, 'GUARD'))?.['owner']).toEqual(s(winners[0]!));
    for (const [n, outcome] of outcomes.entries()) {
      if (outcome.status === 'fulfilled') continue;
      const reasons = (outcome.reason as TransactionCanceledException).CancellationReasons ?? [];
      const guard = reasons[n % 2 === 0 ? 0 : 40];
      expect(guard).toMatchObject({ Code: 'ConditionalCheckFailed', Item: { owner: s(winners[0]!) } });
      expect(await read(table, `OWN#${racers[n]}#0`)).toBeUndefined();
    }
  });

  it('refuses two operations on one item, more than 100, and actions it does not implement, as ValidationException', async () => {
    const table = await newTable();
    const send = (items: TransactWriteItem[]) =>
      db.client.send(new TransactWriteItemsCommand({ TransactItems: items }));
    await expect(send([put(table, item('A')), put(table, item('A'))])).rejects.toMatchObject({
      name: 'ValidationException',
      message: 'Transaction request cannot include multiple operations on one item',
    });
    await expect(send(Array.from({ length: 101 }, (_, n) => put(table, item(`N${n}`))))).rejects.toMatchObject({
      name: 'ValidationException',
    });
    await expect(
      send([
        {
          Update: {
            TableName: table,
            Key: { pk: s('A'), sk: s('X') },
            UpdateExpression: 'SET n = :n',
            ExpressionAttributeValues: { ':n': s('1') },
          },
        },
      ]),
    ).rejects.toMatchObject({
      name: 'ValidationException',
    });
    await expect(send([put(`missing-${randomUUID()}`, item('A'))])).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    expect(await read(table, 'A')).toBeUndefined();
    // 100 is allowed.
    await send(Array.from({ length: 100 }, (_, n) => put(table, item(`N${n}`))));
    expect(await read(table, 'N99')).toEqual(item('N99'));
  });

  it('keeps one request listener on the server, which answers transactions', async () => {
    const server = createDynalite({ createTableMs: 0 });
    expect(server.listeners('request')).toHaveLength(1);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const body = await new Promise<string>((resolve, reject) => {
        const call = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            headers: {
              'x-amz-target': 'DynamoDB_20120810.TransactWriteItems',
              'content-type': 'application/x-amz-json-1.0',
            },
          },
          (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => (text += chunk.toString()));
            response.on('end', () => resolve(text));
          },
        );
        call.on('error', reject);
        call.end(JSON.stringify({ TransactItems: [] }));
      });
      expect(JSON.parse(body)).toMatchObject({ __type: 'com.amazon.coral.validate#ValidationException' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
