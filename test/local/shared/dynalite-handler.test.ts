import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynaliteHandler, type SdkHttpResponse } from '../../../local/shared/dynalite-handler';
import { RuntimeError } from '../../../local/shared/errors';

const dynalite = createRequire(import.meta.url)('dynalite') as (options: { readonly createTableMs?: number }) => Server;
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const TABLE = 'things';

let server: Server;
let client: DynamoDBClient;
/** Every raw answer the in-process client received, to check what dynalite sent. */
const answers: SdkHttpResponse[] = [];

beforeAll(async () => {
  // Not listening: the handler needs no port.
  server = dynalite({ createTableMs: 0 });
  client = new DynamoDBClient({
    region: 'local',
    endpoint: 'http://127.0.0.1:9',
    credentials,
    requestHandler: createDynaliteHandler(server),
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      const output = await next(args);
      answers.push(output.response as SdkHttpResponse);
      return output;
    },
    { step: 'deserialize', name: 'keepAnswer' },
  );
  await client.send(
    new CreateTableCommand({
      TableName: TABLE,
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'N' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  // dynalite makes a table ACTIVE on a timer, even with createTableMs 0.
  while ((await client.send(new DescribeTableCommand({ TableName: TABLE }))).Table?.TableStatus !== 'ACTIVE')
    await new Promise((resolve) => setTimeout(resolve, 5));
});
afterAll(async () => {
  client?.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the in-process dynalite handler', () => {
  it('puts, gets and queries through the SDK', async () => {
    await client.send(
      new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'a' }, sk: { N: '1' }, text: { S: 'hello ✓' } } }),
    );
    await client.send(
      new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'a' }, sk: { N: '2' }, text: { S: 'again' } } }),
    );
    const got = await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'a' }, sk: { N: '1' } } }));
    expect(got.Item).toEqual({ pk: { S: 'a' }, sk: { N: '1' }, text: { S: 'hello ✓' } });
    const listed = await client.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'a' } },
        ScanIndexForward: false,
      }),
    );
    expect(listed.Items?.map((item) => item['sk']?.N)).toEqual(['2', '1']);
  });

  it('turns a refused condition into ConditionalCheckFailedException with the item', async () => {
    await client.send(
      new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'b' }, sk: { N: '1' }, state: { S: 'SENT' } } }),
    );
    const refused = client.send(
      new UpdateItemCommand({
        TableName: TABLE,
        Key: { pk: { S: 'b' }, sk: { N: '1' } },
        UpdateExpression: 'SET #state = :next',
        ConditionExpression: '#state = :expected',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':next': { S: 'SENDING' }, ':expected': { S: 'PENDING' } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    await expect(refused).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    await expect(refused).rejects.toMatchObject({ $metadata: { httpStatusCode: 400 } });
    const unchanged = await client.send(
      new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'b' }, sk: { N: '1' } } }),
    );
    expect(unchanged.Item?.['state']).toEqual({ S: 'SENT' });
  });

  it("hands over dynalite's answer as sent: its CRC32 matches the body, its request id is kept", async () => {
    answers.length = 0;
    const got = await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'a' }, sk: { N: '2' } } }));
    const [answer] = answers;
    expect(answer?.statusCode).toBe(200);
    expect(Number(answer?.headers['x-amz-crc32'])).toBe(crc32(answer!.body));
    expect(got.$metadata.requestId).toBe(answer?.headers['x-amzn-requestid']);
    expect(got.$metadata.requestId).toMatch(/^[A-Z0-9]{52}$/);
  });

  it("goes through dynalite's authentication check: an unsigned request is refused as dynalite refuses it over HTTP", async () => {
    const { response } = await createDynaliteHandler(server).handle({
      method: 'POST',
      path: '/',
      headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.ListTables' },
      body: '{}',
    });
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(Buffer.from(response.body).toString('utf8'))).toMatchObject({
      __type: 'com.amazon.coral.service#MissingAuthenticationTokenException',
    });
    expect(Number(response.headers['x-amz-crc32'])).toBe(crc32(response.body));
  });

  it('answers alongside the HTTP endpoint: a client over HTTP reads what was written in process', async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const overHttp = new DynamoDBClient({
      region: 'local',
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      credentials,
    });
    try {
      await client.send(
        new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'c' }, sk: { N: '1' }, text: { S: 'in process' } } }),
      );
      const got = await overHttp.send(
        new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'c' }, sk: { N: '1' } } }),
      );
      expect(got.Item?.['text']).toEqual({ S: 'in process' });
    } finally {
      overHttp.destroy();
    }
  });

  it('refuses requests once destroyed, without reaching dynalite', async () => {
    const handler = createDynaliteHandler(server);
    const closed = new DynamoDBClient({
      region: 'local',
      endpoint: 'http://127.0.0.1:9',
      credentials,
      requestHandler: handler,
    });
    closed.destroy();
    await expect(
      closed.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'a' }, sk: { N: '1' } } })),
    ).rejects.toThrow(RuntimeError);
  });
});
