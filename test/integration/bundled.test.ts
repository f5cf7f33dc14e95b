import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteItemCommand, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type {
  APIGatewayProxyStructuredResultV2,
  AttributeValue as StreamAttributeValue,
  DynamoDBBatchResponse,
  DynamoDBRecord,
} from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { NOTICE_ROUTE, sleepUntil } from '../../functions/relay/ports';
import { createStore, ensureTable, MessageState, type MessageRecord, type MessageStore } from '../../functions/store';
import type { HandlerName } from '../../infra/bundle';
import { sharedHandlerBundles } from '../helpers/handler-bundles';
import { metricsNamespace } from '../../functions/core/metrics';
import { RELAY_CONFIG_FILE, stageFunctionAsset } from '../../infra/staging';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import { type Dynalite, startDynalite } from '../helpers/dynalite';
import { apiEvent, insertRecordOf, scheduledEvent, streamRecord } from '../functions/handlers/support';
import { alert } from './alert';

/**
 * The deployed code, end to end: the esbuild bundles the stack ships, each packaged with the config
 * exactly as `stageFunctionAsset` packages it, run one invocation per fresh Node process (a cold
 * start every time) against dynalite and the sandbox SMS service.
 */

const DRIVER = fileURLToPath(new URL('./driver.mjs', import.meta.url));
const RESULT_MARKER = '@@driver-result@@';

const API_KEY = `sms-key-${randomBytes(12).toString('hex')}`;
const ALERTS_TOKEN = `alerts-${randomBytes(12).toString('hex')}`;
const ONCALL = '255712345678';

const CONFIG = {
  // What a real environment says; PROVIDER_BASE_URL points the functions at the sandbox instead.
  provider: { baseUrl: 'https://sms.example.com/api', defaultSenderId: 'SMSRELAY', timeoutMs: 5_000 },
  secrets: 'sms-relay/integration',
  people: { asha: { phone: '0712345678' }, baraka: { phone: '0754111222' } },
  balance: { threshold: 100, notify: ['0712345678'] },
  routes: {
    alerts: {
      source: 'alertmanager',
      secret: 'alerts-token',
      recipients: ['{{ commonAnnotations.oncall_phone }}'],
      template: '[{{ status | upcase }}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary }}',
      senderId: 'ALERTS',
      // An alerting source defaults to at-least-once; this route shows the other policy.
      delivery: 'at-most-once',
    },
    'alerts-alo': {
      source: 'alertmanager',
      secret: 'alerts-token',
      recipients: ['{{ commonAnnotations.oncall_phone }}'],
      template: '[{{ status | upcase }}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary }}',
      senderId: 'ALERTS',
      delivery: 'at-least-once',
    },
    // Its secret is never put into the secret: a fresh deploy before put-secret-value.
    unset: { source: 'alertmanager', secret: 'unset-token', recipients: ['0712345678'] },
    // Paging: the sweeper bundle compiles the config (person: recipients) when an escalation is due.
    paged: {
      source: 'alertmanager',
      secret: 'alerts-token',
      recipients: ['person:asha'],
      template: '[{{ status | upcase }}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary }}',
      senderId: 'ALERTS',
      escalate: [{ after: '1m', to: ['person:baraka'] }],
      ack: { baseUrl: 'https://sms.example.co.tz' },
    },
  },
};

/** The namespace the stack gives this environment's functions (and its alarms read). */
const NAMESPACE = metricsNamespace('integration');

interface Invocation<T> {
  readonly result: T;
  /** The EMF lines the invocation wrote. */
  readonly emf: readonly Emf[];
  readonly initMs: number;
  readonly invokeMs: number;
}

let scratch: string;
let db: Dynalite;
let sandbox: RunningSandbox;
let store: MessageStore;
let tableName: string;
let packages: Record<HandlerName, string>;
let secretsFile: string;
/** Everything the functions wrote, stdout and stderr, for the leak check. */
const output: string[] = [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'sms-relay-bundled-'));
  const { bundles } = sharedHandlerBundles();
  const configText = stringify(CONFIG);
  packages = Object.fromEntries(
    bundles.map((bundle) => [
      bundle.name,
      stageFunctionAsset({ bundleDir: bundle.dir, configText, stagingRoot: join(scratch, 'assets') }),
    ]),
  ) as Record<HandlerName, string>;

  [db, sandbox] = await Promise.all([
    startDynalite(),
    startSandbox({ apiKey: API_KEY, senderIds: ['ALERTS', 'SMSRELAY'], balance: 1000, rate: 1 }),
  ]);
  tableName = `bundled-${randomUUID()}`;
  await ensureTable(db.client, tableName);
  store = createStore({ client: db.client, tableName });
  secretsFile = join(scratch, 'secrets.json');
  writeFileSync(secretsFile, JSON.stringify({ providerApiKey: API_KEY, 'alerts-token': ALERTS_TOKEN }));
}, 120_000);

afterAll(async () => {
  await Promise.all([db?.close(), sandbox?.close()]);
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

/** The environment the stack gives each function, with the local replacements for AWS. */
function environment(name: HandlerName): Record<string, string> {
  const common = {
    PATH: process.env['PATH'] ?? '',
    LAMBDA_TASK_ROOT: packages[name],
    RELAY_CONFIG: RELAY_CONFIG_FILE,
    TABLE_NAME: tableName,
    POWERTOOLS_SERVICE_NAME: 'sms-relay',
    POWERTOOLS_METRICS_NAMESPACE: NAMESPACE,
    DYNAMODB_ENDPOINT: db.endpoint,
    RELAY_SECRETS_FILE: secretsFile,
    AWS_REGION: 'local',
    // As on Lambda: the handlers build their runtime while the bundle loads.
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
  };
  const provider = { PROVIDER_BASE_URL: sandbox.baseUrl, RETRY_BASE_DELAY_MS: '0', SWEEP_PENDING_GRACE_MS: '0' };
  switch (name) {
    case 'ingest':
      return { ...common, MAX_BODY_BYTES: '262144' };
    case 'balance-watch':
      return { ...common, ...provider, BALANCE_THRESHOLD: '100' };
    default:
      return { ...common, ...provider };
  }
}

/**
 * One invocation of a bundled handler in its own process; with `each`, `event` is an array of
 * events invoked one after the other in that one process (a warm container).
 */
async function invoke<T>(
  name: HandlerName,
  event: unknown,
  replaced: Record<string, string> = {},
  { each = false }: { each?: boolean } = {},
): Promise<Invocation<T>> {
  const args = [DRIVER, join(packages[name], 'index.mjs'), ...(each ? ['--each'] : [])];
  const child = spawn(process.execPath, args, {
    cwd: scratch,
    env: { ...environment(name), ...replaced },
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
  output.push(stdout, stderr);
  const line = stdout.split('\n').find((each) => each.startsWith(RESULT_MARKER));
  if (code !== 0 || line === undefined) throw new Error(`${name} exited with ${code}:\n${stdout}\n${stderr}`);
  const outcome = JSON.parse(line.slice(RESULT_MARKER.length)) as {
    result?: T;
    error?: { name: string; message: string };
    initMs: number;
    invokeMs: number;
  };
  if (outcome.error !== undefined) throw new Error(`${name} threw ${outcome.error.name}: ${outcome.error.message}`);
  return { result: outcome.result as T, emf: emfOf(stdout), initMs: outcome.initMs, invokeMs: outcome.invokeMs };
}

/** An EMF line as CloudWatch reads it: the directive, the dimension values and the metric values. */
interface Emf {
  readonly _aws: {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  readonly [key: string]: unknown;
}

function emfOf(text: string): Emf[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{"_aws"'))
    .map((line) => JSON.parse(line) as Emf);
}

/**
 * The datapoints of `name` an invocation published, as the series the alarms read: namespace,
 * dimension names, dimension values and value.
 */
function datapoints(
  emf: readonly Emf[],
  name: string,
): { namespace: string; dimensions: Record<string, unknown>; value: unknown; unit: string | undefined }[] {
  return emf.flatMap((line) =>
    line._aws.CloudWatchMetrics.filter((directive) => directive.Metrics.some((metric) => metric.Name === name)).map(
      (directive) => ({
        namespace: directive.Namespace,
        dimensions: Object.fromEntries(directive.Dimensions[0]!.map((dimension) => [dimension, line[dimension]])),
        value: line[name],
        unit: directive.Metrics.find((metric) => metric.Name === name)?.Unit,
      }),
    ),
  );
}

/** A webhook of `route` as API Gateway hands it to the ingest function, signed with the alerts' token. */
const webhookEvent = (route: string, body: string, timeEpoch: number): unknown =>
  apiEvent({
    route,
    body,
    timeEpoch,
    headers: { authorization: `Bearer ${ALERTS_TOKEN}`, 'content-type': 'application/json' },
  });

/** The ids of the records a 202 answer names. */
function acceptedIds(result: APIGatewayProxyStructuredResultV2): string[] {
  expect(result.headers).toEqual({ 'content-type': 'application/json' });
  expect(result.statusCode).toBe(202);
  return (JSON.parse(result.body!) as { ids: string[] }).ids;
}

async function ingest(
  route: string,
  body: string,
  { timeEpoch = Date.now() }: { timeEpoch?: number } = {},
): Promise<{ status: number; body: { status: string; ids: string[] }; emf: readonly Emf[] }> {
  const { result, emf } = await invoke<APIGatewayProxyStructuredResultV2>(
    'ingest',
    webhookEvent(route, body, timeEpoch),
  );
  expect(result.headers).toEqual({ 'content-type': 'application/json' });
  return { status: result.statusCode!, body: JSON.parse(result.body!) as { status: string; ids: string[] }, emf };
}

/**
 * Webhooks a test only needs recorded, one after the other in one warm ingest process (the cold
 * start of each is the first test's): the first record's id of each, in order.
 */
async function ingestWarm(
  route: string,
  bodies: readonly string[],
  { timeEpoch = Date.now() }: { timeEpoch?: number } = {},
): Promise<string[]> {
  const { result } = await invoke<APIGatewayProxyStructuredResultV2[]>(
    'ingest',
    bodies.map((body) => webhookEvent(route, body, timeEpoch)),
    {},
    { each: true },
  );
  expect(result).toHaveLength(bodies.length);
  return result.map((each) => acceptedIds(each)[0]!);
}

async function sendWithMetrics(...ids: string[]): Promise<Invocation<DynamoDBBatchResponse>> {
  const records: DynamoDBRecord[] = [];
  for (const id of ids) records.push(await insertRecordOf(db.client, tableName, id));
  return await invoke<DynamoDBBatchResponse>('sender', { Records: records });
}

async function send(...ids: string[]): Promise<DynamoDBBatchResponse> {
  return (await sendWithMetrics(...ids)).result;
}

async function record(id: string): Promise<MessageRecord> {
  const found = await store.getMessage(id);
  if (found === undefined) throw new Error(`no record ${id}`);
  return found;
}

/**
 * Stands in for the stream's mappings after a sweep: the records it woke (`wokenAt`, still PENDING),
 * handed to the sender bundle as the MODIFY events the lanes' filters pass.
 */
async function sendWoken(): Promise<void> {
  const woken = (await store.findDuePending({ limit: 1_000 })).items.filter((each) => each.wokenAt !== undefined);
  if (woken.length === 0) return;
  const records = await Promise.all(
    woken.map(async (each) => ({
      ...(await insertRecordOf(db.client, tableName, each.id)),
      eventName: 'MODIFY' as const,
    })),
  );
  await invoke('sender', { Records: records });
}

describe('the bundled handlers', { timeout: 180_000 }, () => {
  const firstAlert = alert('Disk /var/lib/postgresql on db-01 is 94% full');
  let firstId: string;

  it('ingest records a signed Alertmanager webhook and answers 202', async () => {
    const response = await ingest('alerts', firstAlert);

    expect(response.status).toBe(202);
    expect(response.body.status).toBe('accepted');
    firstId = response.body.ids[0]!;
    expect(await record(firstId)).toMatchObject({ state: MessageState.Pending, to: [ONCALL], route: 'alerts' });
  });

  it('the sender, fed the stream INSERT, sends exactly that SMS', async () => {
    expect(await send(firstId)).toEqual({ batchItemFailures: [] });

    expect(await record(firstId)).toMatchObject({ state: MessageState.Sent, attempts: 1 });
    expect(sandbox.messages()).toEqual([
      expect.objectContaining({
        phoneNumbers: [ONCALL],
        senderId: 'ALERTS',
        message: '[FIRING] DiskAlmostFull: Disk /var/lib/postgresql on db-01 is 94% full',
      }),
    ]);
  });

  it('a repeated delivery is a 200 duplicate, and a redelivered stream record sends nothing', async () => {
    const { status, body } = await ingest('alerts', firstAlert);

    expect({ status, body }).toEqual({ status: 200, body: { status: 'duplicate', ids: [firstId] } });
    expect((await store.listByRoute('alerts')).items).toHaveLength(1);
    expect(await send(firstId)).toEqual({ batchItemFailures: [] });
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('a warm sender carries the sends of several invocations over one connection to the service', async () => {
    const invocations = 4;
    const ids = await ingestWarm(
      'alerts',
      Array.from({ length: invocations }, (_, n) => alert(`Disk on web-0${n} is 91% full`)),
    );
    const events = [];
    // One record per batch: the sends of one batch run side by side, each on a socket of its own.
    for (const id of ids) events.push({ Records: [await insertRecordOf(db.client, tableName, id)] });
    sandbox.clearRequests();

    const { result } = await invoke<DynamoDBBatchResponse[]>('sender', events, {}, { each: true });

    expect(result).toEqual(ids.map(() => ({ batchItemFailures: [] })));
    for (const id of ids) expect(await record(id)).toMatchObject({ state: MessageState.Sent });
    const sends = sandbox.requests().filter((request) => request.path === '/v1/sms/send');
    expect(sends).toHaveLength(invocations);
    expect(new Set(sandbox.requests().map((request) => request.connection)).size).toBe(1);
  });

  it('a send that certainly did not go out is retried by the sender at its backoff, without a sweep', async () => {
    const baseDelayMs = 2_000;
    const { body } = await ingest('alerts', alert('Disk on db-07 is 97% full'));
    const id = body.ids[0]!;
    // A 401 sends nothing (and the secret holds the same key), twice: two retries, at 2 s and 4 s.
    sandbox.injectFault({ kind: 'status', status: 401, count: 2 });

    const records = [await insertRecordOf(db.client, tableName, id)];
    const { result } = await invoke<DynamoDBBatchResponse>(
      'sender',
      { Records: records },
      { RETRY_BASE_DELAY_MS: String(baseDelayMs) },
    );

    expect(result).toEqual({ batchItemFailures: [] });
    const sent = await record(id);
    expect(sent).toMatchObject({ state: MessageState.Sent, attempts: 3 });
    expect(sent.history.map((entry) => entry.state)).toEqual([
      'PENDING',
      'SENDING',
      'PENDING',
      'SENDING',
      'PENDING',
      'SENDING',
      'SENT',
    ]);
    // Each retry's claim against the time its failure was settled plus its backoff, from the
    // record's own timestamps: never early (the claim refuses a record not yet due), at most 2 s late.
    const at = sent.history.map((entry) => Date.parse(entry.at));
    for (const [claim, settled, backoff] of [
      [3, 2, baseDelayMs],
      [5, 4, 2 * baseDelayMs],
    ] as const) {
      expect(at[claim]! - (at[settled]! + backoff)).toBeGreaterThanOrEqual(0);
      expect(at[claim]! - (at[settled]! + backoff)).toBeLessThanOrEqual(2_000);
    }
    expect(sandbox.messages().filter((message) => message.message.includes('db-07'))).toHaveLength(1);
  });

  it('a retry due after the invocation could still send it is left PENDING, woken by the sweeper once due, and sent from that stream event', async () => {
    const { body } = await ingest('alerts', alert('Disk on db-08 is 97% full'));
    const id = body.ids[0]!;
    sandbox.injectFault({ kind: 'status', status: 401 });

    // 12 s left, a 5 s backoff, and a send needs the provider's 5 s time-out plus a 5 s margin.
    const records = [await insertRecordOf(db.client, tableName, id)];
    const { result } = await invoke<DynamoDBBatchResponse>(
      'sender',
      { Records: records },
      { RETRY_BASE_DELAY_MS: '5000', DRIVER_TIMEOUT_MS: '12000' },
    );

    expect(result).toEqual({ batchItemFailures: [] });
    const pending = await record(id);
    expect(pending).toMatchObject({ state: MessageState.Pending, attempts: 1, nextAttemptAt: expect.any(String) });
    expect((await invoke('sweeper', scheduledEvent())).result).toMatchObject({ sent: {} });

    // Once due, the sweeper (the safety net) wakes it: a MODIFY the lane's mapping hands the sender.
    // On a busy machine the sweep above can start after the retry fell due, and is the one that wakes it.
    if ((await record(id)).wokenAt === undefined) {
      await sleepUntil(new Date(pending.nextAttemptAt!));
      // (Records earlier tests left due are woken too.)
      const swept = (await invoke<{ sent: object; woken: number }>('sweeper', scheduledEvent())).result;
      expect(swept.sent).toEqual({});
      expect(swept.woken).toBeGreaterThanOrEqual(1);
    }
    // Woken only once due, whichever sweep did it.
    const wokenAt = (await record(id)).wokenAt;
    expect(Date.parse(wokenAt!)).toBeGreaterThanOrEqual(Date.parse(pending.nextAttemptAt!));
    const woken = { ...(await insertRecordOf(db.client, tableName, id)), eventName: 'MODIFY' as const };
    expect(woken.dynamodb?.NewImage?.['wokenAt']?.S).toBeDefined();
    expect((await invoke('sender', { Records: [woken] })).result).toEqual({ batchItemFailures: [] });
    expect(await record(id)).toMatchObject({ state: MessageState.Sent, attempts: 2 });
  });

  it('an ambiguous failure on an at-most-once route leaves the message UNKNOWN: one SMS, never two', async () => {
    const { body } = await ingest('alerts', alert('Disk on db-02 is 95% full'));
    const id = body.ids[0]!;
    // The service sends the SMS, then fails the request.
    sandbox.injectFault({ kind: 'status', status: 500, deliver: true });

    expect(await send(id)).toEqual({ batchItemFailures: [] });
    expect(await record(id)).toMatchObject({
      state: MessageState.Unknown,
      lastError: { status: 500, delivery: 'maybe-sent' },
    });

    expect((await invoke('sweeper', scheduledEvent())).result).toMatchObject({ sent: {}, recovered: 0 });
    expect(sandbox.messages().filter((message) => message.message.includes('db-02'))).toHaveLength(1);
  });

  it('an ambiguous failure on an at-least-once route is retried (by the sender, at its backoff of 0 here): SENT, and delivered twice', async () => {
    const { body } = await ingest('alerts-alo', alert('Disk on db-03 is 96% full'));
    const id = body.ids[0]!;
    sandbox.injectFault({ kind: 'status', status: 500, deliver: true });

    expect(await send(id)).toEqual({ batchItemFailures: [] });
    expect(await record(id)).toMatchObject({
      state: MessageState.Sent,
      attempts: 2,
      lastError: { status: 500, delivery: 'maybe-sent' },
    });

    expect((await invoke('sweeper', scheduledEvent())).result).toMatchObject({ sent: {} });
    // At-least-once means exactly this: the on-call engineer cannot miss it, and may get it twice.
    expect(sandbox.messages().filter((message) => message.message.includes('db-03'))).toHaveLength(2);
  });

  it('the balance watch below the threshold records one notice, once', async () => {
    sandbox.setBalance(50);

    expect((await invoke('balance-watch', scheduledEvent())).result).toMatchObject({
      balance: 50,
      threshold: 100,
      alerted: true,
      currency: 'TZS',
    });
    const second = await invoke('balance-watch', scheduledEvent());
    expect(second.result).toMatchObject({ balance: 50, alerted: false });
    // Every run publishes it, 0 when the balance was read: the BalanceWatchNotRunning alarm counts runs by it.
    expect(datapoints(second.emf, 'BalanceReadFailed')).toEqual([
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, value: 0, unit: 'Count' },
    ]);

    const notices = (await store.listByRoute(NOTICE_ROUTE)).items;
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ state: MessageState.Pending, to: [ONCALL], senderId: 'SMSRELAY' });
    expect(notices[0]!.text).toMatch(/^sms-relay: SMS balance is TZS 50, below the threshold of 100\./);
  });

  it('a send the balance does not cover is PARKED', async () => {
    sandbox.setBalance(0);
    const { body } = await ingest('alerts', alert('Disk on db-04 is 97% full'));
    const id = body.ids[0]!;

    expect(await send(id)).toEqual({ batchItemFailures: [] });

    expect(await record(id)).toMatchObject({ state: MessageState.Parked, lastError: { status: 402 } });
    expect(sandbox.messages().filter((message) => message.message.includes('db-04'))).toHaveLength(0);
  });

  it('a redriven record is sent by the sender from its stream MODIFY, as a new one is: one SMS', async () => {
    const [parked] = (await store.listByState(MessageState.Parked)).items.filter((each) => each.text.includes('db-04'));
    sandbox.setBalance(1000);
    await store.requeue(parked!.id, { from: MessageState.Parked });

    const { Item: item } = await db.client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: `MSG#${parked!.id}` }, sk: { S: 'MSG' } },
        ConsistentRead: true,
      }),
    );
    const modify = streamRecord('MODIFY', item as Record<string, StreamAttributeValue>);
    expect(
      await invoke<DynamoDBBatchResponse>('sender', { Records: [modify, modify] }).then(({ result }) => result),
    ).toEqual({ batchItemFailures: [] });

    expect(await record(parked!.id)).toMatchObject({ state: MessageState.Sent, redrives: 1 });
    // The same event twice (a redelivered batch) sends once: the claim is conditional.
    expect(sandbox.messages().filter((message) => message.message.includes('db-04'))).toHaveLength(1);
  });

  it('a 503 from the provider on an at-most-once route: UNKNOWN, and the Unknown metric the MessagesUnknown alarm reads', async () => {
    const { body } = await ingest('alerts', alert('Disk on db-05 is 98% full'));
    const id = body.ids[0]!;
    sandbox.setBalance(1000);
    sandbox.injectFault({ kind: 'status', status: 503 });

    const { result, emf } = await sendWithMetrics(id);

    expect(result).toEqual({ batchItemFailures: [] });
    expect(await record(id)).toMatchObject({
      state: MessageState.Unknown,
      lastError: { status: 503, delivery: 'maybe-sent' },
    });
    expect(datapoints(emf, 'Unknown')).toEqual([
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay', route: 'alerts' }, value: 1, unit: 'Count' },
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, value: 1, unit: 'Count' },
    ]);
  });

  it('a route whose secret is missing: 500, nothing recorded, and the RouteMisconfigured metric', async () => {
    const { status, body, emf } = await ingest('unset', alert('Disk on db-06 is 99% full'));

    expect({ status, body }).toEqual({
      status: 500,
      body: { error: 'the relay is misconfigured for this route; nothing was recorded' },
    });
    expect((await store.listByRoute('unset')).items).toEqual([]);
    expect(datapoints(emf, 'RouteMisconfigured')).toEqual([
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay', route: 'unset' }, value: 1, unit: 'Count' },
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, value: 1, unit: 'Count' },
    ]);
  });

  it("a wrong secret: 401 and the route's Rejected metric", async () => {
    const { emf, result } = await invoke<APIGatewayProxyStructuredResultV2>(
      'ingest',
      apiEvent({
        route: 'alerts',
        body: alert('x'),
        headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' },
      }),
    );

    expect(result.statusCode).toBe(401);
    expect(datapoints(emf, 'Rejected')).toContainEqual({
      namespace: NAMESPACE,
      dimensions: { service: 'sms-relay', route: 'alerts' },
      value: 1,
      unit: 'Count',
    });
  });

  it('a sweep publishes the backlog: due PENDING records and the age of the oldest', async () => {
    // Recorded ten minutes ago and never sent (its stream record lost): due since then.
    sandbox.setBalance(1000);
    // Whatever earlier tests left due (the low-balance notice) goes first.
    await invoke('sweeper', scheduledEvent());
    await sendWoken();
    const tenMinutesAgo = Date.now() - 600_000;
    const { body } = await ingest('alerts', alert('Disk on db-07 is 90% full'), { timeEpoch: tenMinutesAgo });
    const id = body.ids[0]!;

    const { result, emf } = await invoke<{ sent: Record<string, number>; woken: number }>('sweeper', scheduledEvent());

    expect(result).toMatchObject({ sent: {}, woken: 1 });
    await sendWoken();
    expect(await record(id)).toMatchObject({ state: MessageState.Sent });
    expect(datapoints(emf, 'PendingDue')).toEqual([
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, value: 1, unit: 'Count' },
    ]);
    const [age] = datapoints(emf, 'OldestPendingAgeSeconds');
    expect(age).toMatchObject({ namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, unit: 'Seconds' });
    // Above the PendingBacklog alarm's 300 s: this sweep's own run would have alarmed.
    expect(age!.value).toBeGreaterThanOrEqual(600);

    const quiet = await invoke('sweeper', scheduledEvent());
    expect(datapoints(quiet.emf, 'PendingDue')).toEqual([
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, value: 0, unit: 'Count' },
    ]);
    expect(datapoints(quiet.emf, 'OldestPendingAgeSeconds')).toMatchObject([{ value: 0 }]);
  });

  it('a sweep publishes what is stuck now, and counts and logs a record this version cannot read while sending the others', async () => {
    // Whatever earlier tests left due goes first.
    await invoke('sweeper', scheduledEvent());
    await sendWoken();
    const [newer, plain] = (await ingestWarm(
      'alerts',
      [alert('Disk on db-08 is 91% full'), alert('Disk on db-09 is 92% full')],
      { timeEpoch: Date.now() - 60_000 },
    )) as [string, string];
    // As a newer version would write it, read after a rollback.
    const key = { pk: { S: `MSG#${newer}` }, sk: { S: 'MSG' } };
    await db.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET #notice = :notice',
        ExpressionAttributeNames: { '#notice': 'notice' },
        ExpressionAttributeValues: { ':notice': { S: 'heartbeat-silent-v2' } },
      }),
    );
    // Counted here by listing, not by the sweeper's count queries.
    const inState = async (state: MessageState): Promise<number> =>
      (await store.listByState(state, { limit: 1000 })).items.length;
    const expected = {
      UnknownNow: await inState(MessageState.Unknown),
      ParkedNow: await inState(MessageState.Parked),
      FailedNow: await inState(MessageState.Failed),
      HeldNow: await inState(MessageState.Held),
      DeferredOverdue: 0,
    };

    try {
      const { result, emf } = await invoke<{ sent: Record<string, number>; woken: number }>(
        'sweeper',
        scheduledEvent(),
      );

      expect(result).toMatchObject({ sent: {}, woken: 1 });
      for (const [name, value] of Object.entries(expected))
        expect(datapoints(emf, name), name).toEqual([
          { namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, value, unit: 'Count' },
        ]);
      expect(datapoints(emf, 'UndecodableRecords')).toEqual([
        { namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, value: 1, unit: 'Count' },
      ]);
      const logged = output.slice(-2).join('\n');
      expect(logged).toContain(`"id":"${newer}"`);
      expect(logged).toContain('unknown notice heartbeat-silent-v2');
      await sendWoken();
      expect(await record(plain)).toMatchObject({ state: MessageState.Sent });
    } finally {
      await db.client.send(new DeleteItemCommand({ TableName: tableName, Key: key }));
    }
  });

  it('a balance watch that cannot read the balance ends normally and publishes BalanceReadFailed', async () => {
    // The provider unreachable: nothing listens on the discard port.
    const { result, emf } = await invoke('balance-watch', scheduledEvent(), {
      PROVIDER_BASE_URL: 'http://127.0.0.1:9',
    });

    expect(result).toMatchObject({ unread: true });
    expect(datapoints(emf, 'BalanceReadFailed')).toEqual([
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, value: 1, unit: 'Count' },
    ]);
    expect(datapoints(emf, 'RemainingBalance')).toEqual([]);
  });

  it('the sweeper bundle escalates an incident whose step is due: the config compiled on demand, one SMS with its own link, once', async () => {
    sandbox.setBalance(1000);
    await invoke('sweeper', scheduledEvent());
    await sendWoken();
    // Opened two minutes ago (its first SMS then): the one-minute step is due.
    const { status } = await ingest('paged', alert('Disk on db-09 is 95% full'), { timeEpoch: Date.now() - 120_000 });
    expect(status).toBe(202);
    const [incident] = await store.listOpenIncidents();
    expect(incident).toMatchObject({ route: 'paged', actions: 0 });
    const before = sandbox.messages().length;

    const { emf } = await invoke('sweeper', scheduledEvent());
    // The escalation's INSERT never reached a sender here: the next sweep wakes it for the stream.
    await invoke('sweeper', scheduledEvent());
    await sendWoken();

    const escalations = sandbox
      .messages()
      .slice(before)
      .filter((sent) => sent.phoneNumbers.includes('255754111222'));
    expect(escalations.map((sent) => sent.message)).toEqual([
      expect.stringMatching(
        /^\[FIRING\] DiskAlmostFull: Disk on db-09 is 95% full https:\/\/sms\.example\.co\.tz\/a\/[A-Za-z0-9_-]{22}$/,
      ),
    ]);
    expect(await store.getIncident(incident!.id)).toMatchObject({ actions: 1, level: 1 });
    expect(datapoints(emf, 'EscalationsSent')).toEqual([
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay', route: 'paged' }, value: 1, unit: 'Count' },
      { namespace: NAMESPACE, dimensions: { service: 'sms-relay' }, value: 1, unit: 'Count' },
    ]);
    // Closed, so the sweeps of the tests after it compile nothing.
    await store.closeIncident(incident!.id, { state: 'ACKNOWLEDGED', by: 'cli' });
  });

  it("wrote EMF to the environment's namespace only, and no secret or full phone number anywhere", () => {
    const text = output.join('\n');
    for (const leak of [API_KEY, ALERTS_TOKEN, '712345678']) expect(text).not.toContain(leak);
    const emf = text
      .split('\n')
      .filter((line) => line.startsWith('{"_aws"'))
      .map(
        (line) =>
          JSON.parse(line) as {
            _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] };
            route?: string;
            Sent?: unknown;
          },
      );
    expect(emf.length).toBeGreaterThan(0);
    expect(new Set(emf.map((line) => line._aws.CloudWatchMetrics[0]!.Namespace))).toEqual(new Set([NAMESPACE]));
    const sent = emf.filter((line) => line.Sent !== undefined);
    expect(sent.some((line) => line.route === 'alerts')).toBe(true);
    expect(sent.some((line) => line._aws.CloudWatchMetrics[0]!.Dimensions[0]!.join() === 'service')).toBe(true);
  });
});
