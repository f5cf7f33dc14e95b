import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { APIGatewayProxyStructuredResultV2, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { reasonText } from '../../functions/core/reasons';
import { NOTICE_ROUTE } from '../../functions/relay/ports';
import {
  createStore,
  createTableInput,
  MessageState,
  type MessageRecord,
  type MessageStore,
} from '../../functions/store';
import { bundleHandlers, HANDLER_NAMES, type HandlerName } from '../../infra/bundle';
import { RELAY_CONFIG_FILE, stageFunctionAsset } from '../../infra/staging';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import { type Dynalite, startDynalite } from '../helpers/dynalite';
import { DYNAMODB_LOCAL_CREDENTIALS } from '../helpers/dynamodb-local';
import { type InvokeOutcome, mappingsByLane, StreamMapping } from '../helpers/stream-mapping';
import { apiEvent, scheduledEvent } from '../functions/handlers/support';
import { resourcesOfType, synthStack, type TestStack } from '../infra/support';
import { alert } from './alert';

/**
 * The relay as deployed, on AWS's own DynamoDB Local (`npm run test:aws`): the stack is
 * synthesized from a config, and everything the test runs comes from that template: the table
 * (key schema, indexes, stream view, TTL), each function's environment and time-out, and the
 * stream mapping's filters, batch size, bisect-on-error, partial batch responses and retry limit,
 * which a small poller (test/helpers/stream-mapping.ts) applies to the table's real stream, read
 * with the DynamoDB Streams API. The functions are the esbuild bundles the stack ships, each
 * invocation a fresh Node process; the SMS service is the sandbox, driven over its HTTP controls.
 * The sweeper is invoked by the test in a loop, in place of its schedule.
 */

const DRIVER = fileURLToPath(new URL('./driver.mjs', import.meta.url));
const RESULT_MARKER = '@@driver-result@@';
const ENVIRONMENT = 'awse2e';

const API_KEY = `sms-key-${randomBytes(12).toString('hex')}`;
const ALERTS_TOKEN = `alerts-${randomBytes(12).toString('hex')}`;
const ONCALL = '255712345678';

const ROUTE = {
  source: 'alertmanager',
  secret: 'alerts-token',
  recipients: ['{{ commonAnnotations.oncall_phone }}'],
  template: '[{{ status | upcase }}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary }}',
  senderId: 'ALERTS',
} as const;

const CONFIG_TEXT = stringify({
  // What a real environment says; PROVIDER_BASE_URL (the stack sets it) is pointed at the sandbox.
  provider: { baseUrl: 'https://sms.example.com/api', defaultSenderId: 'SMSRELAY', timeoutMs: 5_000 },
  secrets: `sms-relay/${ENVIRONMENT}`,
  balance: { threshold: 100, notify: ['0712345678'] },
  routes: {
    alerts: { ...ROUTE, delivery: 'at-most-once' },
    'alerts-alo': { ...ROUTE, delivery: 'at-least-once' },
  },
});

let scratch: string;
let synthesized: TestStack;
let db: Dynalite;
let streams: DynamoDBStreamsClient;
let sandbox: RunningSandbox;
let store: MessageStore;
/** The bulk lane's mapping: the routes here are not critical. */
let mapping: StreamMapping;
/** The critical lane's: the relay's own notices. */
let criticalMapping: StreamMapping;
const tableName = `awse2e-${randomUUID()}`;
let packages: Record<HandlerName, string>;
let secretsFile: string;

/** A resource's properties in the synthesized template. */
const propertiesOf = (type: string): Record<string, unknown> => {
  const found = resourcesOfType(synthesized.resources, type);
  expect(found, type).toHaveLength(1);
  return found[0]![1].Properties!;
};

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'sms-relay-awse2e-'));
  const { bundles } = bundleHandlers({ outDir: join(scratch, 'dist') });
  synthesized = synthStack(ENVIRONMENT, CONFIG_TEXT, join(scratch, 'dist'));
  // Packaged as the stack packages each function (RelayFunction: stageFunctionAsset).
  packages = Object.fromEntries(
    bundles.map((bundle) => [
      bundle.name,
      stageFunctionAsset({ bundleDir: bundle.dir, configText: CONFIG_TEXT, stagingRoot: join(scratch, 'assets') }),
    ]),
  ) as Record<HandlerName, string>;

  [db, sandbox] = await Promise.all([
    startDynalite(),
    startSandbox({ apiKey: API_KEY, senderIds: ['ALERTS', 'SMSRELAY'], balance: 1000, rate: 1 }),
  ]);
  streams = new DynamoDBStreamsClient({
    region: 'local',
    endpoint: db.endpoint,
    credentials: DYNAMODB_LOCAL_CREDENTIALS,
  });

  const streamArn = await createStackTable(tableName);
  store = createStore({ client: db.client, tableName });
  secretsFile = join(scratch, 'secrets.json');
  writeFileSync(secretsFile, JSON.stringify({ providerApiKey: API_KEY, 'alerts-token': ALERTS_TOKEN }));

  const lanes = laneSettings();
  [mapping, criticalMapping] = [lanes.bulk, lanes.critical].map(
    (settings) =>
      new StreamMapping({
        client: streams,
        streamArn,
        settings,
        invoke: async (event: DynamoDBStreamEvent) => await invoke('sender', event),
      }),
  ) as [StreamMapping, StreamMapping];
  await Promise.all([mapping.start(), criticalMapping.start()]);
}, 120_000);

/** The template's two sender mappings, by lane. */
const laneSettings = () =>
  mappingsByLane(
    resourcesOfType(synthesized.resources, 'AWS::Lambda::EventSourceMapping').map(([, each]) => each.Properties!),
  );

afterAll(async () => {
  await Promise.all([mapping?.stop(), criticalMapping?.stop()]);
  streams?.destroy();
  await Promise.all([db?.close(), sandbox?.close()]);
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

/** Creates a table as the template declares it (SSE and point-in-time recovery have no local effect); its stream's ARN. */
async function createStackTable(name: string): Promise<string> {
  const table = propertiesOf('AWS::DynamoDB::Table');
  const input: CreateTableCommandInput = {
    TableName: name,
    KeySchema: table['KeySchema'] as CreateTableCommandInput['KeySchema'],
    AttributeDefinitions: table['AttributeDefinitions'] as CreateTableCommandInput['AttributeDefinitions'],
    GlobalSecondaryIndexes: table['GlobalSecondaryIndexes'] as CreateTableCommandInput['GlobalSecondaryIndexes'],
    BillingMode: table['BillingMode'] as CreateTableCommandInput['BillingMode'],
    StreamSpecification: { StreamEnabled: true, ...(table['StreamSpecification'] as { StreamViewType: 'NEW_IMAGE' }) },
  };
  await db.client.send(new CreateTableCommand(input));
  const ttl = table['TimeToLiveSpecification'] as { AttributeName: string; Enabled: boolean };
  await db.client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: ttl }));
  const { Table: created } = await db.client.send(new DescribeTableCommand({ TableName: name }));
  return created!.LatestStreamArn!;
}

/**
 * The environment the template gives a function, its AWS references replaced by the local
 * stand-ins: the table's name, a secrets file for Secrets Manager, the sandbox for the provider,
 * DynamoDB Local's endpoint. A reference the test does not know fails it.
 */
function environment(name: HandlerName): Record<string, string> {
  const fn = synthesized.resources[synthesized.functionId(name)]!.Properties!;
  const variables = (fn['Environment'] as { Variables: Record<string, unknown> }).Variables;
  const replaced: Record<string, string | undefined> = {
    TABLE_NAME: tableName,
    SECRET_ID: undefined,
    PROVIDER_SECRET_ID: undefined,
    PROVIDER_BASE_URL: sandbox.baseUrl,
  };
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(variables)) {
    if (key in replaced) {
      if (replaced[key] !== undefined) env[key] = replaced[key];
    } else if (typeof value === 'string') {
      env[key] = value;
    } else {
      throw new Error(
        `${name}: the template sets ${key} to ${JSON.stringify(value)}, which this test has no local stand-in for`,
      );
    }
  }
  expect(env['RELAY_CONFIG']).toBe(RELAY_CONFIG_FILE);
  return {
    ...env,
    PATH: process.env['PATH'] ?? '',
    LAMBDA_TASK_ROOT: packages[name],
    DYNAMODB_ENDPOINT: db.endpoint,
    RELAY_SECRETS_FILE: secretsFile,
    AWS_REGION: 'local',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    // The function's time-out, as getRemainingTimeInMillis counts it down.
    DRIVER_TIMEOUT_MS: String((fn['Timeout'] as number) * 1000),
  };
}

/** One invocation of a bundled handler in a fresh process (a cold start), as Lambda runs it. */
async function invoke(name: HandlerName, event: unknown): Promise<InvokeOutcome> {
  const child = spawn(process.execPath, [DRIVER, join(packages[name], 'index.mjs')], {
    cwd: scratch,
    env: environment(name),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(JSON.stringify(event));
  const code = await new Promise<number | null>((resolve, reject) =>
    child.once('error', reject).once('close', resolve),
  );
  const line = stdout.split('\n').find((each) => each.startsWith(RESULT_MARKER));
  if (code !== 0 || line === undefined) return { functionError: `${name} exited with ${code}: ${stderr.slice(-2000)}` };
  const outcome = JSON.parse(line.slice(RESULT_MARKER.length)) as {
    result?: never;
    error?: { name: string; message: string };
  };
  if (outcome.error !== undefined) return { functionError: `${outcome.error.name}: ${outcome.error.message}` };
  return { result: outcome.result };
}

async function call<T>(name: HandlerName, event: unknown): Promise<T> {
  const outcome = await invoke(name, event);
  if ('functionError' in outcome) throw new Error(outcome.functionError);
  return outcome.result as T;
}

/** A webhook through the ingest bundle; its message's id. */
async function ingest(route: string, summary: string): Promise<string> {
  const result = await call<APIGatewayProxyStructuredResultV2>(
    'ingest',
    apiEvent({
      route,
      body: alert(summary),
      headers: { authorization: `Bearer ${ALERTS_TOKEN}`, 'content-type': 'application/json' },
    }),
  );
  expect(result.statusCode).toBe(202);
  return (JSON.parse(result.body!) as { ids: string[] }).ids[0]!;
}

async function record(id: string): Promise<MessageRecord> {
  const found = await store.getMessage(id);
  if (found === undefined) throw new Error(`no record ${id}`);
  return found;
}

/** Polls `check` until it gives a value, or fails after `timeoutMs` saying what it waited for. */
async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  {
    timeoutMs = 30_000,
    between = async (): Promise<unknown> => undefined,
    mapping: watched = mapping,
  }: { timeoutMs?: number; between?: () => Promise<unknown>; mapping?: StreamMapping } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    watched.check();
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await between();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const inState = (id: string, state: MessageState) => async (): Promise<MessageRecord | undefined> => {
  const now = await record(id);
  return now.state === state ? now : undefined;
};

const delivered = (text: string): number =>
  sandbox.messages().filter((message) => message.message.includes(text)).length;

/** A control request to the sandbox over HTTP, as a person or script drives it. */
async function control(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<void> {
  const response = await fetch(`${sandbox.baseUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${path}`).toBe(200);
}

describe("the relay on the stack's table in DynamoDB Local, fed by its stream", { timeout: 60_000 }, () => {
  it("creates the table the template declares, which is the store's own createTableInput", () => {
    const table = propertiesOf('AWS::DynamoDB::Table');
    const local = createTableInput(tableName);
    expect(local.KeySchema).toEqual(table['KeySchema']);
    expect(new Set(local.AttributeDefinitions!.map((each) => JSON.stringify(each)))).toEqual(
      new Set((table['AttributeDefinitions'] as unknown[]).map((each) => JSON.stringify(each))),
    );
    expect(local.GlobalSecondaryIndexes).toEqual(table['GlobalSecondaryIndexes']);
    expect(local.BillingMode).toBe(table['BillingMode']);
    expect(local.StreamSpecification).toEqual({ StreamEnabled: true, ...(table['StreamSpecification'] as object) });
    expect(HANDLER_NAMES.map((name) => environment(name)['TABLE_NAME'])).toEqual(HANDLER_NAMES.map(() => tableName));
  });

  it('a plain alert: webhook → ingest → record → stream → filter → sender → SMS, SENT', async () => {
    const id = await ingest('alerts', 'Disk on db-01 is 94% full');

    const sent = await waitFor('the alert SENT', inState(id, MessageState.Sent));
    await waitFor("the sender's invocation to end", async () => (mapping.invocations.length > 0 ? true : undefined));

    expect(sent).toMatchObject({ attempts: 1, to: [ONCALL] });
    expect(sandbox.messages()).toEqual([
      expect.objectContaining({
        phoneNumbers: [ONCALL],
        senderId: 'ALERTS',
        message: '[FIRING] DiskAlmostFull: Disk on db-01 is 94% full',
      }),
    ]);
    // Only the message's INSERT passed the filters: not the dedupe guard's, not the sender's own updates.
    expect(mapping.invocations.flatMap((invocation) => invocation.sequenceNumbers)).toHaveLength(1);
  });

  it('a redrive: a PARKED record requeued after a top-up passes the MODIFY filter and goes out once', async () => {
    await control('POST', '/_sandbox/balance', { balance: 0 });
    const id = await ingest('alerts', 'Disk on db-04 is 97% full');
    const parked = await waitFor('the alert PARKED', inState(id, MessageState.Parked));
    // The sender bundle stores the reasons table's one wording, the one the terminal, logs and console show.
    expect(parked.reason).toBe(reasonText('insufficientBalance'));

    await control('POST', '/_sandbox/balance', { balance: 1000 });
    await store.requeue(id, { from: MessageState.Parked });

    expect(await waitFor('the redriven alert SENT', inState(id, MessageState.Sent))).toMatchObject({ redrives: 1 });
    expect(delivered('db-04')).toBe(1);
    // The 402 recorded a low-balance notice, sent in the critical lane beside this one: settled
    // before the next test moves the balance again.
    await waitFor("the 402's notice settled", async () => {
      const notices = (await store.listByRoute(NOTICE_ROUTE)).items;
      const waiting = notices.filter(
        (notice) => notice.state === MessageState.Pending || notice.state === MessageState.Sending,
      );
      return notices.length > 0 && waiting.length === 0 ? notices : undefined;
    });
  });

  it('the balance watch below the threshold records its notice, which the stream hands the sender: one low-balance SMS', async () => {
    await control('POST', '/_sandbox/balance', { balance: 50 });

    expect(await call('balance-watch', scheduledEvent())).toMatchObject({ balance: 50, threshold: 100, alerted: true });

    // The redrive's 402 recorded a notice of its own, dropped as stale after the top-up: this one says 50.
    const [notice] = await waitFor('the notice recorded', async () => {
      const items = (await store.listByRoute(NOTICE_ROUTE)).items.filter((each) =>
        each.text.startsWith('sms-relay: SMS balance is TZS 50'),
      );
      return items.length > 0 ? items : undefined;
    });
    await waitFor('the notice SENT', inState(notice!.id, MessageState.Sent));
    expect(
      sandbox.messages().filter((message) => message.message.startsWith('sms-relay: SMS balance is TZS 50')),
    ).toHaveLength(1);
    await control('POST', '/_sandbox/balance', { balance: 1000 });
  });

  it('a record the sender cannot claim: reported per item, retried from its sequence number, then the failure queue; the others in its batch sent', async () => {
    await mapping.pause();
    const before = mapping.invocations.length;
    const first = await ingest('alerts', 'Disk on db-11 is 91% full');
    // As a newer version might write it: attempts as a string, which the claim's ADD refuses, every time.
    const { Item: template } = await db.client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: `MSG#${first}` }, sk: { S: 'MSG' } },
        ConsistentRead: true,
      }),
    );
    const bad = `bad-${randomUUID()}`;
    await db.client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { ...template!, pk: { S: `MSG#${bad}` }, id: { S: bad }, attempts: { S: '0' } },
      }),
    );
    const last = await ingest('alerts', 'Disk on db-12 is 92% full');
    // The three INSERTs (and the guards', filtered out) reach the sender in one batch. DynamoDB Local
    // has each write's stream record as soon as the write answers (AWS: within about a second).
    mapping.resume();

    const [failure] = await waitFor('the failure queue', async () =>
      mapping.failureQueue.length > 0 ? mapping.failureQueue : undefined,
    );

    const invocations = mapping.invocations.slice(before);
    const [firstSeq, badSeq, lastSeq] = invocations[0]!.sequenceNumbers;
    expect(invocations[0]!.sequenceNumbers).toHaveLength(3);
    // Each invocation reported the bad record alone; Lambda retried from it (1 + MaximumRetryAttempts).
    expect(invocations.map((each) => each.outcome)).toEqual(
      invocations.map(() => ({ result: { batchItemFailures: [{ itemIdentifier: badSeq }] } })),
    );
    expect(invocations.slice(1).map((each) => each.sequenceNumbers)).toEqual([
      [badSeq, lastSeq],
      [badSeq, lastSeq],
      [badSeq, lastSeq],
    ]);
    expect(failure).toMatchObject({
      requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 4 },
      DDBStreamBatchInfo: { startSequenceNumber: badSeq, endSequenceNumber: lastSeq, batchSize: 2 },
    });
    expect(firstSeq).toBeDefined();
    for (const id of [first, last]) expect(await record(id)).toMatchObject({ state: MessageState.Sent, attempts: 1 });
    // Refused before any change: still PENDING as written, for the failure queue's runbook.
    const { Item: left } = await db.client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: `MSG#${bad}` }, sk: { S: 'MSG' } },
        ConsistentRead: true,
      }),
    );
    expect(left).toMatchObject({ state: { S: MessageState.Pending }, attempts: { S: '0' } });
    expect([delivered('db-11'), delivered('db-12')]).toEqual([1, 1]);
  });

  it('a send whose answer is lost (delivered, then the connection reset): at-least-once retries it and it arrives, a duplicate allowed', async () => {
    await control('POST', '/_sandbox/faults', { kind: 'reset', deliver: true });
    const id = await ingest('alerts-alo', 'Disk on db-21 is 93% full');

    expect(await waitFor('the at-least-once alert SENT', inState(id, MessageState.Sent))).toMatchObject({
      attempts: 2,
    });
    expect(delivered('db-21')).toBe(2);
  });

  it('a send whose answer is lost on an at-most-once route: UNKNOWN, never sent again', async () => {
    await control('POST', '/_sandbox/faults', { kind: 'reset', deliver: true });
    const id = await ingest('alerts', 'Disk on db-22 is 93% full');

    expect(await waitFor('the at-most-once alert UNKNOWN', inState(id, MessageState.Unknown))).toMatchObject({
      attempts: 1,
    });
    await call('sweeper', scheduledEvent());
    expect(await record(id)).toMatchObject({ state: MessageState.Unknown });
    expect(delivered('db-22')).toBe(1);
  });

  it('the provider outage: messages wait PENDING while the circuit is open, and go out once it closes', async () => {
    await control('POST', '/_sandbox/outage', { status: 503 });
    const ids: string[] = [];
    for (const host of ['db-31', 'db-32', 'db-33', 'db-34'])
      ids.push(await ingest('alerts-alo', `Disk on ${host} is 95% full`));

    await waitFor('the circuit open', async () =>
      (await store.getCircuit()).openedAt === undefined ? undefined : true,
    );
    // Every sender invocation has ended: what it left is in the table.
    await waitFor('the sender idle', async () => {
      const seen = new Set(mapping.invocations.flatMap((each) => each.sequenceNumbers)).size;
      const states = await Promise.all(ids.map(async (id) => (await record(id)).state));
      return seen >= ids.length && states.every((state) => state === MessageState.Pending) ? true : undefined;
    });
    expect(sandbox.messages().filter((message) => /db-3\d/.test(message.message))).toEqual([]);

    await control('DELETE', '/_sandbox/outage');
    await waitFor(
      'every message SENT',
      async () =>
        (await Promise.all(ids.map(record))).every((each) => each.state === MessageState.Sent) ? true : undefined,
      {
        timeoutMs: 60_000,
        // The sweeper on its schedule: it probes the circuit and sends what waited.
        between: async () => await call('sweeper', scheduledEvent()),
      },
    );
    expect(['db-31', 'db-32', 'db-33', 'db-34'].map(delivered)).toEqual([1, 1, 1, 1]);
    expect((await store.getCircuit()).openedAt).toBeUndefined();
  });

  it('sent nothing to the failure queue but the record it could not claim, and never invoked the sender with a function error', () => {
    expect(mapping.failureQueue).toHaveLength(1);
    expect(criticalMapping.failureQueue).toEqual([]);
    for (const each of [mapping, criticalMapping])
      expect(each.invocations.filter((invocation) => 'functionError' in invocation.outcome)).toEqual([]);
  });
});

describe("the poller, as the template's mapping on a function that fails", { timeout: 60_000 }, () => {
  it('bisects a batch on a function error, retries the failing half, and gives the record it cannot pass to the failure queue', async () => {
    // The relay's sender reports failures per record and never fails a whole invocation, so a
    // function that throws on a marked record stands in for it here; everything else is real.
    const name = `awse2e-bisect-${randomUUID()}`;
    const streamArn = await createStackTable(name);
    const settings = laneSettings().bulk;
    const seen: string[][] = [];
    const failing = new StreamMapping({
      client: streams,
      streamArn,
      settings,
      invoke: async (event) => {
        seen.push(event.Records.map((each) => each.dynamodb!.NewImage!['id']!.S!));
        return event.Records.some((each) => each.dynamodb!.NewImage!['poison'] !== undefined)
          ? { functionError: 'Error: poisoned' }
          : { result: { batchItemFailures: [] } };
      },
    });
    await failing.start();
    await failing.pause();
    try {
      for (const n of [0, 1, 2, 3, 4]) {
        const item = {
          pk: { S: `MSG#m${n}` },
          sk: { S: 'MSG' },
          id: { S: `m${n}` },
          state: { S: MessageState.Pending },
          lane: { S: 'bulk' },
          ...(n === 3 ? { poison: { BOOL: true } } : {}),
        };
        await db.client.send(new PutItemCommand({ TableName: name, Item: item }));
      }
      // Not a message of the filters: never handed over.
      await db.client.send(
        new PutItemCommand({ TableName: name, Item: { pk: { S: 'GUARD#x' }, sk: { S: 'GUARD' }, id: { S: 'guard' } } }),
      );
      failing.resume();

      await waitFor(
        'the last record delivered',
        async () => (seen.some((batch) => batch.includes('m4') && batch.length === 1) ? true : undefined),
        { mapping: failing },
      );

      expect(seen).toEqual([
        ['m0', 'm1', 'm2', 'm3', 'm4'],
        ['m0', 'm1', 'm2'],
        ['m3', 'm4'],
        ['m3'],
        ['m3'],
        ['m3'],
        ['m3'],
        ['m4'],
      ]);
      expect(settings.maximumRetryAttempts).toBe(3);
      expect(failing.failureQueue).toEqual([
        expect.objectContaining({
          requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 4 },
          responseContext: { functionError: 'Error: poisoned' },
          DDBStreamBatchInfo: expect.objectContaining({ batchSize: 1, streamArn }),
        }),
      ]);
    } finally {
      await failing.stop();
    }
  });
});
