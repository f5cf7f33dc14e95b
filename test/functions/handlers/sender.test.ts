import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  InternalServerError,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { testWithSandbox } from '../../helpers/fixtures';
import { handler as ingest } from '../../../functions/handlers/ingest';
import { lambdaRelay, resetLambdaRelay } from '../../../functions/handlers/wiring/context';
import { handler } from '../../../functions/handlers/sender';
import { createStore, ensureTable, MessageState, type MessageStore } from '../../../functions/store';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import {
  apiEvent,
  type Captured,
  captureStdout,
  handlerConfig,
  insertRecordOf,
  lambdaContext,
  ROUTE_TOKEN,
  streamEvent,
  streamRecord,
  stubEnvironment,
  writeConfig,
} from './support';

const API_KEY = `provider-key-${randomUUID()}`;
const test = testWithSandbox({ apiKey: API_KEY, senderIds: ['ALERTS', 'OPS', 'SMSRELAY'], balance: 1000, rate: 1 });
const secretsManager = mockClient(SecretsManagerClient);

let out: Captured;

afterAll(() => secretsManager.restore());

beforeEach(() => {
  secretsManager.reset();
  resetLambdaRelay();
  out = captureStdout();
});
afterEach(() => {
  out.restore();
  vi.unstubAllEnvs();
});

const image = (id: string) => ({
  pk: { S: `MSG#${id}` },
  sk: { S: 'MSG' },
  kind: { S: 'message' },
  id: { S: id },
  state: { S: 'PENDING' },
});

describe('sender handler, store mocked', () => {
  let dynamo: AwsClientStub<DynamoDBClient>;
  beforeAll(() => {
    dynamo = mockClient(DynamoDBClient);
  });
  beforeEach(() => {
    dynamo.reset();
    // The SMS service's circuit item, read before a claim: none (closed), as in a fresh table.
    dynamo.on(GetItemCommand).resolves({});
    stubEnvironment({
      RELAY_CONFIG: writeConfig(handlerConfig()),
      TABLE_NAME: 'sms-relay',
      SECRET_ID: `sms-relay-${randomUUID()}`,
    });
  });
  afterAll(() => {
    dynamo.restore();
  });

  it('reports only the records whose processing threw, by sequence number', async () => {
    // Claims: B's write fails; the others are already taken (a redelivered batch).
    dynamo.on(UpdateItemCommand).callsFake((input: UpdateItemCommandInput) => {
      if (input.Key?.['pk']?.S === 'MSG#B')
        throw new InternalServerError({ message: 'Internal server error', $metadata: {} });
      throw new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
    });
    const a = streamRecord('INSERT', image('A'));
    const b = streamRecord('INSERT', image('B'));
    const d = streamRecord('INSERT', image('D'));
    const records = [
      a,
      streamRecord('MODIFY', image('C')),
      b,
      streamRecord('INSERT', { pk: { S: 'DEDUPE#alerts#k' }, sk: { S: 'DEDUPE' } }),
      d,
    ];

    const response = await handler(streamEvent(records), lambdaContext());

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: b.dynamodb!.SequenceNumber }] });
    // Only the three new messages were claimed; the MODIFY and the dedupe guard were skipped.
    expect(
      dynamo
        .commandCalls(UpdateItemCommand)
        .map((call) => call.args[0].input.Key?.['pk']?.S)
        .sort(),
    ).toEqual(['MSG#A', 'MSG#B', 'MSG#D']);
    expect(out.logs().find((line) => line['message'] === 'send failed; the stream will retry it')).toMatchObject({
      level: 'ERROR',
      id: 'B',
    });
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });

  it('takes a redrive (a MODIFY leaving a message PENDING with no attempt), and no other MODIFY', async () => {
    dynamo
      .on(UpdateItemCommand)
      .rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
    const records = [
      streamRecord('MODIFY', { ...image('R'), attempts: { N: '0' } }),
      streamRecord('MODIFY', { ...image('T'), attempts: { N: '1' } }),
      streamRecord('MODIFY', { ...image('S'), state: { S: 'SENDING' }, attempts: { N: '0' } }),
    ];

    expect(await handler(streamEvent(records), lambdaContext())).toEqual({ batchItemFailures: [] });

    expect(dynamo.commandCalls(UpdateItemCommand).map((call) => call.args[0].input.Key?.['pk']?.S)).toEqual(['MSG#R']);
  });

  it('takes a woken record (a MODIFY of a PENDING message with wokenAt), whatever its attempts, and no woken one that left PENDING', async () => {
    dynamo
      .on(UpdateItemCommand)
      .rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
    const wokenAt = { S: '2026-12-04T10:00:00.000Z' };
    const records = [
      streamRecord('MODIFY', { ...image('W'), attempts: { N: '2' }, wokenAt }),
      streamRecord('MODIFY', { ...image('X'), state: { S: 'SENT' }, attempts: { N: '1' }, wokenAt }),
    ];

    expect(await handler(streamEvent(records), lambdaContext())).toEqual({ batchItemFailures: [] });

    expect(dynamo.commandCalls(UpdateItemCommand).map((call) => call.args[0].input.Key?.['pk']?.S)).toEqual(['MSG#W']);
  });

  it('starts no send it may not finish, and hands the records back to the stream', async () => {
    const records = [streamRecord('INSERT', image('A')), streamRecord('INSERT', image('B'))];

    // The provider time-out is 5 s; with 9 s left the 5 s margin is not there.
    const response = await handler(streamEvent(records), lambdaContext(9_000));

    expect(response.batchItemFailures.map(({ itemIdentifier }) => itemIdentifier)).toEqual(
      records.map((record) => record.dynamodb!.SequenceNumber),
    );
    expect(dynamo.commandCalls(UpdateItemCommand)).toHaveLength(0);
  });

  it('answers an empty batch, or one with nothing to send, with no failures', async () => {
    expect(await handler(streamEvent([]))).toEqual({ batchItemFailures: [] });
    expect(await handler(streamEvent([streamRecord('REMOVE', undefined)]))).toEqual({ batchItemFailures: [] });
  });

  it('fails the whole batch when the relay cannot start, so the stream retries it', async () => {
    vi.stubEnv('RELAY_CONFIG', '/nonexistent/relay-config.yaml');

    await expect(handler(streamEvent([streamRecord('INSERT', image('A'))]))).rejects.toThrow(
      '/nonexistent/relay-config.yaml',
    );
    expect(out.logs().find((line) => line['message'] === 'the relay cannot start')).toMatchObject({
      error: { name: 'ConfigError' },
    });
  });
});

describe('sender handler, against dynalite and the sandbox', () => {
  let db: Dynalite;
  let sandbox: RunningSandbox;
  let store: MessageStore;
  let tableName: string;
  let secretId: string;

  test.beforeAll(async ({ sandbox: service }) => {
    sandbox = service;
    db = await startDynalite();
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    tableName = `sender-${randomUUID()}`;
    await ensureTable(db.client, tableName);
    store = createStore({ client: db.client, tableName });
    secretId = `sms-relay-${randomUUID()}`;
    sandbox.clearMessages();
    sandbox.clearRequests();
    stubEnvironment({
      RELAY_CONFIG: writeConfig(handlerConfig()),
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: db.endpoint,
      SECRET_ID: secretId,
      PROVIDER_BASE_URL: sandbox.baseUrl,
    });
  });

  async function accepted(): Promise<string> {
    const response = await ingest(
      apiEvent({
        route: 'alerts',
        body: JSON.stringify({
          status: 'firing',
          alerts: [{ status: 'firing', fingerprint: randomUUID(), labels: { alertname: 'DiskFull' } }],
        }),
        headers: { authorization: `Bearer ${ROUTE_TOKEN}` },
      }),
    );
    expect(response.statusCode).toBe(202);
    return (JSON.parse(response.body!) as { ids: string[] }).ids[0]!;
  }

  it('re-reads the secret after a 401 (the key was rotated) and sends, logging only masked numbers', async () => {
    // The container read the secret before the rotation; Secrets Manager now holds the new key.
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretId })
      .resolvesOnce({ SecretString: JSON.stringify({ providerApiKey: 'the-old-key', 'alerts-token': ROUTE_TOKEN }) })
      .resolves({ SecretString: JSON.stringify({ providerApiKey: API_KEY, 'alerts-token': ROUTE_TOKEN }) });
    const id = await accepted();

    const response = await handler(streamEvent([await insertRecordOf(db.client, tableName, id)]), lambdaContext());

    expect(response).toEqual({ batchItemFailures: [] });
    expect((await store.getMessage(id))?.state).toBe(MessageState.Sent);
    expect(sandbox.requests().map((request) => request.status)).toEqual([401, 200]);
    expect(sandbox.messages()).toEqual([
      expect.objectContaining({ phoneNumbers: ['255712345678'], senderId: 'ALERTS' }),
    ]);
    // One read for the ingest (cached for the sender), one forced by the 401.
    expect(secretsManager.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input)).toEqual([
      { SecretId: secretId },
      { SecretId: secretId },
    ]);

    const text = out.lines().join('\n');
    for (const leak of ['712345678', API_KEY, 'the-old-key', ROUTE_TOKEN]) expect(text).not.toContain(leak);
    expect(out.logs().find((line) => line['message'] === 'sms')).toMatchObject({
      level: 'INFO',
      id,
      state: 'SENT',
      to: ['2557****678'],
    });
    const sent = out.emf().filter((line) => line['Sent'] !== undefined);
    expect(sent.map((line) => line['route'])).toEqual(['alerts', undefined]);
  });

  it('skips a record delivered again by the stream: one SMS, no failure', async () => {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretId })
      .resolves({ SecretString: JSON.stringify({ providerApiKey: API_KEY, 'alerts-token': ROUTE_TOKEN }) });
    const id = await accepted();
    const record = await insertRecordOf(db.client, tableName, id);

    expect(await handler(streamEvent([record]))).toEqual({ batchItemFailures: [] });
    expect(await handler(streamEvent([record, record]))).toEqual({ batchItemFailures: [] });

    expect(sandbox.messages()).toHaveLength(1);
  });

  it("a warm container reads the secret once and sends every invocation's SMS over one connection", async () => {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretId })
      .resolves({ SecretString: JSON.stringify({ providerApiKey: API_KEY, 'alerts-token': ROUTE_TOKEN }) });
    const ids = [await accepted(), await accepted(), await accepted()];

    for (const id of ids)
      expect(await handler(streamEvent([await insertRecordOf(db.client, tableName, id)]), lambdaContext())).toEqual({
        batchItemFailures: [],
      });

    expect(sandbox.messages()).toHaveLength(3);
    expect(new Set(sandbox.requests().map((request) => request.connection)).size).toBe(1);
    // Ingest's read is the container's cached value for the sender as well (Powertools' maxAge).
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it("writes the day's spend counter its sends counted before it returns, as Lambda may freeze the container after", async () => {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretId })
      .resolves({ SecretString: JSON.stringify({ providerApiKey: API_KEY, 'alerts-token': ROUTE_TOKEN }) });
    const ids = [await accepted(), await accepted()];
    const { context } = await lambdaRelay();
    const steps: string[] = [];
    const flush = context.store.flushSpend;
    const flushing = vi.spyOn(context.store, 'flushSpend').mockImplementation(async () => {
      steps.push('flush');
      await flush();
      steps.push('flushed');
    });

    const records = await Promise.all(ids.map(async (id) => await insertRecordOf(db.client, tableName, id)));
    expect(await handler(streamEvent(records), lambdaContext())).toEqual({ batchItemFailures: [] });
    steps.push('returned');

    expect(steps).toEqual(['flush', 'flushed', 'returned']);
    flushing.mockRestore();
    // Written in the table, read as it is (a read through the store would write an open window first).
    const day = new Date().toISOString().slice(0, 10);
    const counter = await db.client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'SPEND' }, sk: { S: `D#${day}` } } }),
    );
    expect(counter.Item).toMatchObject({ sends: { N: '2' }, 'credits:alerts': { N: '2' } });
  });

  it('after a probe in another container closed the circuit on probation, a batch sends one trial, not 4 at once: one UNKNOWN, the rest wait PENDING', async () => {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretId })
      .resolves({ SecretString: JSON.stringify({ providerApiKey: API_KEY, 'alerts-token': ROUTE_TOKEN }) });
    const ids: string[] = [];
    for (let count = 0; count < 8; count += 1) ids.push(await accepted());
    // Another container saw 3 sends fail, and then its probe found the balance endpoint answering.
    const failure = { threshold: 3, firstProbeAt: () => new Date(), error: 'server-error 503' };
    for (let count = 0; count < 3; count += 1) await store.circuit.failed(failure);
    await store.circuit.succeeded({ probation: 2 });
    // The balance endpoint answers; every send fails.
    sandbox.injectFault({ kind: 'status', status: 503, count: 100 });

    const records = await Promise.all(ids.map(async (id) => await insertRecordOf(db.client, tableName, id)));
    expect(await handler(streamEvent(records), lambdaContext())).toEqual({ batchItemFailures: [] });

    expect(sandbox.requests().filter((request) => request.path === '/v1/sms/send')).toHaveLength(1);
    const states = await Promise.all(ids.map(async (id) => (await store.getMessage(id))?.state));
    expect(states.filter((state) => state === MessageState.Unknown)).toHaveLength(1);
    expect(states.filter((state) => state === MessageState.Pending)).toHaveLength(7);
    expect((await store.getCircuit()).openedAt).toBeDefined();
    sandbox.clearFaults();
  });
});
