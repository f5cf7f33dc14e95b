import type { Server } from 'node:http';
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ResourceNotFoundException,
  UpdateItemCommand,
  UpdateTableCommand,
  type AttributeValue,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynalite } from '../../../local/shared/dynalite';
import { createDynaliteHandler } from '../../../local/shared/dynalite-handler';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const TABLE = 'memo';

let server: Server;
let client: DynamoDBClient;

const tableInput = (name: string, sortKeyType: 'S' | 'N' = 'S'): CreateTableCommandInput => ({
  TableName: name,
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: sortKeyType },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  BillingMode: 'PAY_PER_REQUEST',
});

const active = async (name: string): Promise<void> => {
  // dynalite makes a table ACTIVE on a timer, even with createTableMs 0.
  while ((await client.send(new DescribeTableCommand({ TableName: name }))).Table?.TableStatus !== 'ACTIVE')
    await new Promise((resolve) => setTimeout(resolve, 5));
};

const s = (value: string): AttributeValue => ({ S: value });
const n = (value: number): AttributeValue => ({ N: String(value) });

/** A claim-like update: the same expressions every time, only the values change. */
const claim = async (
  sk: string,
  expected: string,
  next: string,
  at: string,
): Promise<Record<string, AttributeValue> | undefined> => {
  try {
    const { Attributes } = await client.send(
      new UpdateItemCommand({
        TableName: TABLE,
        Key: { pk: s('claims'), sk: s(sk) },
        UpdateExpression:
          'SET #state = :next, #at = :at, #log = list_append(if_not_exists(#log, :empty), :entry) ADD #attempts :one REMOVE #token',
        ConditionExpression: '#state = :expected AND (attribute_not_exists(#at) OR #at <= :at)',
        ExpressionAttributeNames: {
          '#state': 'state',
          '#at': 'at',
          '#log': 'log',
          '#attempts': 'attempts',
          '#token': 'token',
        },
        ExpressionAttributeValues: {
          ':next': s(next),
          ':at': s(at),
          ':expected': s(expected),
          ':empty': { L: [] },
          ':entry': { L: [s(next)] },
          ':one': n(1),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
};

beforeAll(async () => {
  server = createDynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  client = new DynamoDBClient({
    region: 'local',
    endpoint: 'http://127.0.0.1:9',
    credentials,
    requestHandler: createDynaliteHandler(server),
  });
  await client.send(new CreateTableCommand(tableInput(TABLE)));
  await active(TABLE);
});
afterAll(async () => {
  client?.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('kept expression parses', () => {
  it('evaluates each request with its own values when the expressions repeat', async () => {
    for (const sk of ['a', 'b', 'c']) {
      await client.send(
        new PutItemCommand({ TableName: TABLE, Item: { pk: s('claims'), sk: s(sk), state: s('PENDING') } }),
      );
    }
    // The same shape three times: a parse kept with the first request's values would apply or
    // refuse the later ones as the first.
    expect(await claim('a', 'PENDING', 'SENDING', '2026-01-01T00:00:01Z')).toMatchObject({
      state: s('SENDING'),
      attempts: n(1),
      log: { L: [s('SENDING')] },
    });
    expect(await claim('b', 'SENT', 'FAILED', '2026-01-01T00:00:02Z')).toBeUndefined();
    expect(await claim('c', 'PENDING', 'PARKED', '2026-01-01T00:00:03Z')).toMatchObject({
      state: s('PARKED'),
      at: s('2026-01-01T00:00:03Z'),
      log: { L: [s('PARKED')] },
    });
    expect(await claim('a', 'SENDING', 'SENT', '2026-01-01T00:00:00Z')).toBeUndefined(); // `#at <= :at` refuses an earlier time
    expect(await claim('a', 'SENDING', 'SENT', '2026-01-01T00:00:04Z')).toMatchObject({
      state: s('SENT'),
      attempts: n(2),
      log: { L: [s('SENDING'), s('SENT')] },
    });
    const { Item } = await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: s('claims'), sk: s('b') } }));
    expect(Item).toEqual({ pk: s('claims'), sk: s('b'), state: s('PENDING') });
  });

  it('still refuses names and values an expression does not use, on every repeat', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await expect(
        client.send(
          new UpdateItemCommand({
            TableName: TABLE,
            Key: { pk: s('unused'), sk: s('x') },
            UpdateExpression: 'SET #state = :state',
            ExpressionAttributeNames: { '#state': 'state', '#other': 'other' },
            ExpressionAttributeValues: { ':state': s('SENT'), ':spare': s('x') },
          }),
        ),
      ).rejects.toThrow(/unused in expressions: keys: \{#other\}/);
    }
    // A value used by the condition and not the update is used: the request is valid each time.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await client.send(
        new UpdateItemCommand({
          TableName: TABLE,
          Key: { pk: s('unused'), sk: s('y') },
          UpdateExpression: 'SET #state = :state',
          ConditionExpression: 'attribute_not_exists(#state) OR #state <> :other',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':state': s(`S${attempt}`), ':other': s('NEVER') },
        }),
      );
    }
  });

  it('checks value types on every repeat: a shape with a value of another type is parsed again', async () => {
    const add = (value: AttributeValue) =>
      client.send(
        new UpdateItemCommand({
          TableName: TABLE,
          Key: { pk: s('types'), sk: s('x') },
          UpdateExpression: 'ADD #count :by',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':by': value },
        }),
      );
    await add(n(2));
    await add(n(3));
    await expect(add(s('3'))).rejects.toThrow(
      /Incorrect operand type for operator or function; operator: ADD, operand type: STRING/,
    );
    const { Item } = await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: s('types'), sk: s('x') } }));
    expect(Item?.['count']).toEqual(n(5));
  });

  it('checks BETWEEN bounds against each request’s values', async () => {
    const between = (from: string, to: string) =>
      client.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
          ExpressionAttributeValues: { ':pk': s('claims'), ':from': s(from), ':to': s(to) },
        }),
      );
    expect((await between('a', 'b')).Items?.map((item) => item['sk'])).toEqual([s('a'), s('b')]);
    await expect(between('c', 'a')).rejects.toThrow(/upper bound to be greater than or equal to lower bound/);
    expect((await between('b', 'c')).Items?.map((item) => item['sk'])).toEqual([s('b'), s('c')]);
  });
});

describe('kept table descriptions', () => {
  it('forgets a table deleted and created again with another key type', async () => {
    const name = 'memo-recreated';
    await client.send(new CreateTableCommand(tableInput(name, 'S')));
    await active(name);
    await client.send(new PutItemCommand({ TableName: name, Item: { pk: s('p'), sk: s('text') } }));

    await client.send(new DeleteTableCommand({ TableName: name }));
    while (
      await client.send(new DescribeTableCommand({ TableName: name })).then(
        () => true,
        () => false,
      )
    )
      await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(
      client.send(new PutItemCommand({ TableName: name, Item: { pk: s('p'), sk: s('text') } })),
    ).rejects.toBeInstanceOf(ResourceNotFoundException);

    await client.send(new CreateTableCommand(tableInput(name, 'N')));
    await active(name);
    // Validated against the new key schema, not the kept old one.
    await expect(
      client.send(new PutItemCommand({ TableName: name, Item: { pk: s('p'), sk: s('text') } })),
    ).rejects.toThrow(/Type mismatch for key/);
    await client.send(new PutItemCommand({ TableName: name, Item: { pk: s('p'), sk: n(1) } }));
  });

  it('describes a table as UpdateTable left it', async () => {
    const name = 'memo-updated';
    const throughput = async () =>
      (await client.send(new DescribeTableCommand({ TableName: name }))).Table?.ProvisionedThroughput
        ?.ReadCapacityUnits;
    const { BillingMode: _, ...provisioned } = tableInput(name);
    await client.send(
      new CreateTableCommand({
        ...provisioned,
        ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 },
      }),
    );
    await active(name);
    expect(await throughput()).toBe(1);
    await client.send(
      new UpdateTableCommand({
        TableName: name,
        ProvisionedThroughput: { ReadCapacityUnits: 2, WriteCapacityUnits: 1 },
      }),
    );
    await active(name);
    expect(await throughput()).toBe(2);
  });
});
