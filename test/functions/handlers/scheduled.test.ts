import { randomUUID } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { testWithSandbox } from '../../helpers/fixtures';
import { handler as balanceWatch } from '../../../functions/handlers/balance-watch';
import { handler as ingest } from '../../../functions/handlers/ingest';
import { lambdaRelay, resetLambdaRelay } from '../../../functions/handlers/wiring/context';
import { handler as sweeper } from '../../../functions/handlers/sweeper';
import { NOTICE_ROUTE } from '../../../functions/relay/ports';
import { createStore, ensureTable, MessageState, type MessageStore } from '../../../functions/store';
import { WAKE } from '../../../functions/core/defaults';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import {
  apiEvent,
  type Captured,
  captureStdout,
  handlerConfig,
  lambdaContext,
  ROUTE_TOKEN,
  scheduledEvent,
  stubEnvironment,
  writeConfig,
} from './support';

const API_KEY = `provider-key-${randomUUID()}`;
const test = testWithSandbox({ apiKey: API_KEY, senderIds: ['ALERTS', 'OPS', 'SMSRELAY'], balance: 1000, rate: 1 });
const secretsManager = mockClient(SecretsManagerClient);

let db: Dynalite;
let sandbox: RunningSandbox;
let store: MessageStore;
let out: Captured;

test.beforeAll(async ({ sandbox: service }) => {
  sandbox = service;
  db = await startDynalite();
});
afterAll(async () => {
  secretsManager.restore();
  await db?.close();
});
beforeEach(async () => {
  const tableName = `scheduled-${randomUUID()}`;
  await ensureTable(db.client, tableName);
  store = createStore({ client: db.client, tableName });
  const secretId = `sms-relay-${randomUUID()}`;
  secretsManager.reset();
  secretsManager
    .on(GetSecretValueCommand, { SecretId: secretId })
    .resolves({ SecretString: JSON.stringify({ providerApiKey: API_KEY, 'alerts-token': ROUTE_TOKEN }) });
  sandbox.clearMessages();
  sandbox.setBalance(1000);
  stubEnvironment({
    RELAY_CONFIG: writeConfig(handlerConfig()),
    TABLE_NAME: tableName,
    DYNAMODB_ENDPOINT: db.endpoint,
    SECRET_ID: secretId,
    PROVIDER_BASE_URL: sandbox.baseUrl,
    SWEEP_PENDING_GRACE_MS: '0',
  });
  resetLambdaRelay();
  out = captureStdout();
});
afterEach(() => {
  out.restore();
  vi.unstubAllEnvs();
});

/** A record the sweeper woke `WAKE.sendHereAfterMs` ago that no sender took: the stream lost it. */
async function untakenInStream(): Promise<string> {
  const id = await accepted();
  expect(await store.wake(id, { now: new Date(Date.now() - WAKE.sendHereAfterMs) })).toBe(true);
  return id;
}

async function accepted(): Promise<string> {
  const response = await ingest(
    apiEvent({
      route: 'ops',
      body: JSON.stringify({ message: `Backup ${randomUUID()} failed` }),
      headers: { authorization: `Bearer ${ROUTE_TOKEN}` },
    }),
  );
  expect(response.statusCode).toBe(202);
  return (JSON.parse(response.body!) as { ids: string[] }).ids[0]!;
}

describe('sweeper handler', () => {
  it('wakes what is due for the stream-fed sender, sending nothing itself, and logs its report', async () => {
    const id = await accepted();

    const report = await sweeper(scheduledEvent(), lambdaContext(55_000));

    expect(report).toEqual({
      sent: {},
      recovered: 0,
      summaries: 0,
      heartbeats: { silent: 0, back: 0 },
      digests: 0,
      errors: 0,
      deferred: 0,
      escalations: 0,
      woken: 1,
      failedSteps: [],
    });
    const record = await store.getMessage(id);
    expect(record?.state).toBe(MessageState.Pending);
    expect(record?.wokenAt).toBeDefined();
    expect(out.logs().find((line) => line['message'] === 'sweep finished')).toMatchObject({ sent: {}, woken: 1 });
  });

  it('sends itself a record woken WAKE.sendHereAfterMs ago that the stream never delivered', async () => {
    const id = await untakenInStream();

    expect(await sweeper(scheduledEvent(), lambdaContext(55_000))).toMatchObject({ sent: { sent: 1 }, woken: 0 });
    expect((await store.getMessage(id))?.state).toBe(MessageState.Sent);
  });

  it('starts no send when too little of its time-out is left', async () => {
    const id = await untakenInStream();

    expect(await sweeper(scheduledEvent(), lambdaContext(9_000))).toMatchObject({ sent: {} });
    expect((await store.getMessage(id))?.state).toBe(MessageState.Pending);
  });

  it('leaves fresh records to the stream for SWEEP_PENDING_GRACE_MS', async () => {
    vi.stubEnv('SWEEP_PENDING_GRACE_MS', '600000');
    await accepted();

    expect(await sweeper(scheduledEvent())).toMatchObject({ sent: {} });
  });
});

describe('two secrets, as the stack deploys them: ingest given the route secrets, the sweeper and the balance watch the provider key', () => {
  let routesId: string;
  let providerId: string;
  beforeEach(() => {
    routesId = `sms-relay/${randomUUID()}`;
    providerId = `${routesId}/provider`;
    // Neither holds the other's value: a send proves the key came from the provider secret.
    secretsManager
      .on(GetSecretValueCommand, { SecretId: routesId })
      .resolves({ SecretString: JSON.stringify({ 'alerts-token': ROUTE_TOKEN }) });
    secretsManager
      .on(GetSecretValueCommand, { SecretId: providerId })
      .resolves({ SecretString: JSON.stringify({ providerApiKey: API_KEY }) });
  });
  const asFunction = (variables: Record<string, string | undefined>): void => {
    for (const [name, value] of Object.entries(variables)) vi.stubEnv(name, value);
    resetLambdaRelay();
  };
  const secretsRead = (): unknown[] =>
    secretsManager.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input.SecretId);

  it('ingest authenticates with the route secrets alone, the sweeper sends with the provider key alone', async () => {
    asFunction({ SECRET_ID: routesId, PROVIDER_SECRET_ID: undefined });
    const id = await accepted();
    expect(secretsRead()).toEqual([routesId]);

    asFunction({ SECRET_ID: undefined, PROVIDER_SECRET_ID: providerId });
    await store.wake(id, { now: new Date(Date.now() - WAKE.sendHereAfterMs) });
    expect(await sweeper(scheduledEvent(), lambdaContext(55_000))).toMatchObject({ sent: { sent: 1 } });
    expect((await store.getMessage(id))?.state).toBe(MessageState.Sent);
    expect(secretsRead()).toEqual([routesId, providerId]);
  });

  it('a function not given the route secrets says so, and never reads another secret for them', async () => {
    asFunction({ SECRET_ID: undefined, PROVIDER_SECRET_ID: providerId });
    const { context } = await lambdaRelay();
    await expect(context.secrets.get('alerts-token')).rejects.toThrow(
      /this function has no route secrets \(SECRET_ID is unset\)/,
    );
    expect(secretsRead()).toEqual([]);
  });

  it('the balance watch reads the balance with the provider key alone', async () => {
    asFunction({ SECRET_ID: undefined, PROVIDER_SECRET_ID: providerId });
    await balanceWatch(scheduledEvent(), lambdaContext(30_000));
    expect(secretsRead()).toEqual([providerId]);
    expect(out.logs().find((line) => line['message'] === 'balance')).toMatchObject({ balance: 1000 });
  });
});

describe('balance-watch handler', () => {
  it('publishes the balance and records one notice below the threshold', async () => {
    sandbox.setBalance(50);

    expect(await balanceWatch(scheduledEvent(), lambdaContext())).toMatchObject({
      balance: 50,
      threshold: 100,
      alerted: true,
      currency: 'TZS',
    });
    expect(await balanceWatch(scheduledEvent(), lambdaContext())).toMatchObject({ balance: 50, alerted: false });

    const notices = (await store.listByRoute(NOTICE_ROUTE)).items;
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ state: MessageState.Pending, to: ['255712345678'] });
    const gauges = out.emf().filter((line) => line['RemainingBalance'] !== undefined);
    expect(gauges).toHaveLength(2);
    expect(gauges[0]).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: 'SmsRelay',
            Dimensions: [['service']],
            Metrics: [
              { Name: 'BalanceReadFailed', Unit: 'Count' },
              { Name: 'RemainingBalance', Unit: 'None' },
            ],
          },
        ],
      },
      service: 'sms-relay',
      BalanceReadFailed: 0,
      RemainingBalance: 50,
    });
  });

  it('takes BALANCE_THRESHOLD over the config', async () => {
    vi.stubEnv('BALANCE_THRESHOLD', '10');
    sandbox.setBalance(50);

    expect(await balanceWatch(scheduledEvent())).toMatchObject({ balance: 50, threshold: 10, alerted: false });
    expect((await store.listByRoute(NOTICE_ROUTE)).items).toHaveLength(0);
  });
});
