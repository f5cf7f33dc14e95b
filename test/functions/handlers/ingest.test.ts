import { randomUUID } from 'node:crypto';
import { DynamoDBClient, GetItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler } from '../../../functions/handlers/ingest';
import { resetLambdaRelay } from '../../../functions/handlers/wiring/context';
import { createStore, ensureTable, type MessageStore } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import {
  apiEvent,
  type Captured,
  captureStdout,
  handlerConfig,
  lambdaContext,
  ROUTE_TOKEN,
  stubEnvironment,
  writeConfig,
} from './support';

const API_KEY = `provider-key-${randomUUID()}`;
const secretsManager = mockClient(SecretsManagerClient);

let db: Dynalite;
let store: MessageStore;
let secretId: string;
let out: Captured;

beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  secretsManager.restore();
  await db?.close();
});

beforeEach(async () => {
  const tableName = `ingest-${randomUUID()}`;
  await ensureTable(db.client, tableName);
  store = createStore({ client: db.client, tableName });
  // Powertools caches secrets process-wide by name: a fresh name per test keeps tests apart.
  secretId = `arn:aws:secretsmanager:eu-west-1:123456789012:secret:sms-relay-${randomUUID()}`;
  secretsManager.reset();
  secretsManager
    .on(GetSecretValueCommand, { SecretId: secretId })
    .resolves({ SecretString: JSON.stringify({ providerApiKey: API_KEY, 'alerts-token': ROUTE_TOKEN }) });
  stubEnvironment({
    RELAY_CONFIG: writeConfig(handlerConfig()),
    TABLE_NAME: tableName,
    DYNAMODB_ENDPOINT: db.endpoint,
    SECRET_ID: secretId,
  });
  resetLambdaRelay();
  out = captureStdout();
});
afterEach(() => {
  out.restore();
  vi.unstubAllEnvs();
});

const alertmanagerBody = JSON.stringify({
  receiver: 'sms',
  status: 'firing',
  alerts: [
    {
      status: 'firing',
      labels: { alertname: 'DiskFull' },
      annotations: { summary: 'Call 0712345678 now' },
      fingerprint: 'f1',
    },
  ],
  commonLabels: { alertname: 'DiskFull' },
  commonAnnotations: { summary: 'Call 0712345678 now' },
  groupKey: 'g',
});

const expectNoLeaksIn = (captured: Captured): void => {
  const text = captured.lines().join('\n');
  for (const leak of ['712345678', '754111222', ROUTE_TOKEN, API_KEY]) expect(text).not.toContain(leak);
};

describe('ingest handler', () => {
  it('reads a base64 body, mixed-case headers, the first query value and timeEpoch, and answers 202 JSON', async () => {
    const receivedAt = Date.parse('2025-06-02T08:00:00.000Z');
    const event = apiEvent({
      route: 'ops',
      body: JSON.stringify({ message: 'Backup failed on db-01' }),
      base64: true,
      headers: { 'Idempotency-Key': 'backup-2025-06-02', 'Content-Type': 'application/json' },
      // API Gateway joins a repeated parameter with commas; the raw string keeps the first exact.
      rawQueryString: `token=${ROUTE_TOKEN}&token=second`,
      queryStringParameters: { token: `${ROUTE_TOKEN},second` },
      timeEpoch: receivedAt,
    });

    const response = await handler(event, lambdaContext());

    expect(response.statusCode).toBe(202);
    expect(response.headers).toEqual({ 'content-type': 'application/json' });
    const body = JSON.parse(response.body!) as { status: string; ids: string[] };
    expect(body.status).toBe('accepted');
    expect(await store.getMessage(body.ids[0]!)).toMatchObject({
      route: 'ops',
      text: 'Backup failed on db-01',
      to: ['255754111222'],
      dedupeKey: 'generic:idempotency:backup-2025-06-02',
      createdAt: '2025-06-02T08:00:00.000Z',
      state: 'PENDING',
    });

    // The same Idempotency-Key, whatever its case, is the same delivery.
    const again = await handler(
      { ...event, headers: { 'idempotency-key': 'backup-2025-06-02', 'content-type': 'application/json' } },
      lambdaContext(),
    );
    expect(again.statusCode).toBe(200);
    expect(JSON.parse(again.body!)).toEqual({ status: 'duplicate', ids: body.ids });
    expectNoLeaksIn(out);
  });

  it('takes a plain body as UTF-8 bytes and works without a Lambda context (the local runtime)', async () => {
    const response = await handler(
      apiEvent({ route: 'alerts', body: alertmanagerBody, headers: { authorization: `Bearer ${ROUTE_TOKEN}` } }),
    );

    expect(response.statusCode).toBe(202);
    const [id] = (JSON.parse(response.body!) as { ids: string[] }).ids;
    expect((await store.getMessage(id!))?.text).toBe('[FIRING] DiskFull: Call 0712345678 now');
    expectNoLeaksIn(out);
  });

  it('answers a refused webhook with its status and a JSON reason', async () => {
    const response = await handler(
      apiEvent({ route: 'alerts', body: alertmanagerBody, headers: { authorization: 'Bearer nope' } }),
    );

    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body!)).toMatchObject({ error: 'unauthorized' });
    expect(response.body).not.toContain(ROUTE_TOKEN);
  });

  it('applies MAX_BODY_BYTES', async () => {
    vi.stubEnv('MAX_BODY_BYTES', '64');
    const response = await handler(
      apiEvent({ route: 'alerts', body: alertmanagerBody, headers: { authorization: `Bearer ${ROUTE_TOKEN}` } }),
    );

    expect(response.statusCode).toBe(413);
  });

  it.each([
    ['GET', { route: 'alerts', method: 'GET' }, 405, { allow: 'POST' }],
    ['no route', {}, 404, {}],
  ])('answers %s with a JSON error before reading anything', async (_case, event, status, headers) => {
    const response = await handler(apiEvent({ body: '{}', ...event }));

    expect(response).toMatchObject({ statusCode: status, headers: { 'content-type': 'application/json', ...headers } });
    expect(JSON.parse(response.body!)).toHaveProperty('error');
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });

  it('reads the secret once per container, not once per webhook', async () => {
    for (let i = 0; i < 3; i += 1) {
      const body = alertmanagerBody.replace('"f1"', `"f${i + 10}"`);
      expect(
        (await handler(apiEvent({ route: 'alerts', body, headers: { authorization: `Bearer ${ROUTE_TOKEN}` } })))
          .statusCode,
      ).toBe(202);
    }
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('publishes Accepted in the service-only series and per route, once per invocation', async () => {
    await handler(
      apiEvent({ route: 'alerts', body: alertmanagerBody, headers: { authorization: `Bearer ${ROUTE_TOKEN}` } }),
      lambdaContext(),
    );

    const emf = out.emf().map((line) => ({
      dimensions: (line['_aws'] as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] })
        .CloudWatchMetrics[0],
      route: line['route'],
      accepted: line['Accepted'],
    }));
    expect(emf).toEqual([
      {
        dimensions: {
          Namespace: 'SmsRelay',
          Dimensions: [['service', 'route']],
          Metrics: [{ Name: 'Accepted', Unit: 'Count' }],
        },
        route: 'alerts',
        accepted: 1,
      },
      {
        dimensions: {
          Namespace: 'SmsRelay',
          Dimensions: [['service']],
          Metrics: [{ Name: 'Accepted', Unit: 'Count' }],
        },
        route: undefined,
        accepted: 1,
      },
    ]);
    // Logs carry the Lambda context.
    expect(out.logs().find((line) => line['message'] === 'webhook accepted')).toMatchObject({
      function_name: 'sms-relay-test',
      route: 'alerts',
    });
  });

  describe('when nothing can be recorded', () => {
    it('answers 503 without details when the store fails', async () => {
      const dynamo = mockClient(DynamoDBClient);
      // The accept is one transaction; the route's mute is read beside it (none): the accept is what fails.
      dynamo
        .on(TransactWriteItemsCommand)
        .rejects(new Error('socket hang up talking to dynamodb.eu-west-1.amazonaws.com'));
      dynamo.on(GetItemCommand).resolves({});
      try {
        const response = await handler(
          apiEvent({ route: 'alerts', body: alertmanagerBody, headers: { authorization: `Bearer ${ROUTE_TOKEN}` } }),
        );

        expect(response).toEqual({
          statusCode: 503,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ error: 'the relay could not record this webhook; please retry' }),
        });
        expect(out.logs().find((line) => line['message'] === 'webhook not recorded')).toMatchObject({
          level: 'ERROR',
          route: 'alerts',
          error: { message: 'socket hang up talking to dynamodb.eu-west-1.amazonaws.com' },
        });
      } finally {
        dynamo.restore();
      }
    });

    it('answers 503 when the secret cannot be read', async () => {
      secretsManager.on(GetSecretValueCommand, { SecretId: secretId }).rejects(new Error('connect ETIMEDOUT'));

      const response = await handler(
        apiEvent({ route: 'alerts', body: alertmanagerBody, headers: { authorization: `Bearer ${ROUTE_TOKEN}` } }),
      );

      expect(response.statusCode).toBe(503);
      expect(await store.listByRoute('alerts')).toEqual({ items: [] });
    });

    it('answers 503 and logs every problem when the environment is incomplete', async () => {
      vi.stubEnv('TABLE_NAME', undefined);
      vi.stubEnv('SECRET_ID', undefined);

      const response = await handler(
        apiEvent({ route: 'alerts', body: alertmanagerBody, headers: { authorization: `Bearer ${ROUTE_TOKEN}` } }),
      );

      expect(response.statusCode).toBe(503);
      expect(out.logs().find((line) => line['message'] === 'the relay cannot start')).toMatchObject({
        error: {
          name: 'EnvironmentError',
          problems: [
            'TABLE_NAME is required (the DynamoDB table)',
            expect.stringMatching(/^SECRET_ID, PROVIDER_SECRET_ID or RELAY_SECRETS_FILE/),
          ],
        },
      });
    });
  });
});
