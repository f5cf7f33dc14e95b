/**
 * What the benchmarks share: the relay config and secrets they run with, the service processes
 * (dynalite and the sandbox SMS service), the webhooks of the mix, API Gateway / stream events and
 * Lambda contexts to invoke the real handlers with, and a tap on the process's output to measure
 * (and silence) the log lines the handlers write.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { ensureTable } from '../functions/store';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const SANDBOX_API_KEY = 'bench-provider-key';
export const SANDBOX_SENDER_IDS = ['RELAY', 'ALERTS', 'DUKA', 'OPS-ALERT'] as const;

/** The values of the environment secret (`RELAY_SECRETS_FILE`). */
export const SECRETS = {
  providerApiKey: SANDBOX_API_KEY,
  'alerts-token': 'bench-alerts-token-7f3a9c',
  'shopify-secret': 'bench-shopify-signing-key-51c0e2',
  'generic-token': 'bench-generic-token-a81d44',
} as const;

/**
 * The relay config of the in-process benchmarks: one route per kind of webhook in the mix, written
 * the way an operator would (prod-like limits on the alert route, Liquid templates, a `when`,
 * literal plus templated recipients).
 */
export const BENCH_CONFIG_YAML = `# sms-relay benchmark config (written by bench/harness.ts)
provider:
  baseUrl: http://127.0.0.1:9
  defaultSenderId: RELAY
  timeoutMs: 10000
secrets: sms-relay/bench
retentionDays: 90
routes:
  alerts:
    source: alertmanager
    secret: alerts-token
    recipients: ["+255 712 345 678", "{{ commonAnnotations.oncall_phone }}"]
    when: "status == 'firing'"
    template: "[{{ status | upcase }}{% if alerts.size > 1 %} x{{ alerts.size }}{% endif %}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary | default: alerts.first.annotations.summary }}"
    senderId: ALERTS
    delivery: at-least-once
    limits:
      messages: 1000000
      window: 1h
  orders:
    source: shopify
    secret: shopify-secret
    recipients: ["0754111222", "{{ customer.phone }}"]
    senderId: DUKA
    template: "Order {{ name }}: {{ total_price | money: currency }} from {{ customer.first_name | default: billing_address.first_name }}"
  digest:
    source: generic
    secret: generic-token
    recipients: ["0712345678"]
    length: split
    maxParts: 2
    template: "{{ message }}"
`;

// ---------------------------------------------------------------------------------------------
// Workspace: config and secrets files

export interface Workspace {
  readonly dir: string;
  readonly configPath: string;
  readonly secretsPath: string;
  cleanup(): void;
}

/** A temporary directory with the bench config and the secrets file. */
export function createWorkspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-bench-'));
  const configPath = join(dir, 'relay.yaml');
  const secretsPath = join(dir, 'secrets.json');
  writeFileSync(configPath, BENCH_CONFIG_YAML);
  writeFileSync(secretsPath, JSON.stringify(SECRETS));
  return { dir, configPath, secretsPath, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------------------------
// Services: dynalite + sandbox in a child process

export interface Services {
  readonly dynamoEndpoint: string;
  readonly sandboxUrl: string;
  /** Requests the sandbox recorded on `POST /v1/sms/send` since the last `clearSandbox()`. */
  sendRequests(): Promise<number>;
  /** Messages the sandbox delivered since the last `clearSandbox()`. */
  sandboxMessages(): Promise<readonly { readonly phoneNumbers: readonly string[]; readonly message: string }[]>;
  clearSandbox(): Promise<void>;
  close(): Promise<void>;
}

/** Starts `bench/services.ts` in its own process and waits for its endpoints. */
export async function startServices(): Promise<Services> {
  const child: ChildProcess = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', join(REPO_ROOT, 'bench', 'services.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, BENCH_SANDBOX_API_KEY: SANDBOX_API_KEY, BENCH_SANDBOX_SENDER_IDS: SANDBOX_SENDER_IDS.join(',') },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const endpoints = await new Promise<{ dynamoEndpoint: string; sandboxUrl: string }>((resolvePromise, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('bench services did not start within 60 s')), 60_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolvePromise(JSON.parse(line) as { dynamoEndpoint: string; sandboxUrl: string });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    child.once('exit', (code) => reject(new Error(`bench services exited with ${code}`)));
  });
  const control = async (method: string, path: string): Promise<unknown> => {
    const response = await fetch(`${endpoints.sandboxUrl}/_sandbox/${path}`, { method });
    if (!response.ok) throw new Error(`sandbox ${method} ${path}: ${response.status}`);
    return await response.json();
  };
  return {
    ...endpoints,
    sendRequests: async () => {
      const { requests } = (await control('GET', 'requests')) as { requests: { path: string; method: string }[] };
      return requests.filter((request) => request.method === 'POST' && request.path === '/v1/sms/send').length;
    },
    sandboxMessages: async () => ((await control('GET', 'messages')) as { messages: { phoneNumbers: string[]; message: string }[] }).messages,
    clearSandbox: async () => {
      await control('DELETE', 'requests');
      await control('DELETE', 'messages');
    },
    close: async () => {
      const exited = new Promise<void>((resolvePromise) => child.once('exit', () => resolvePromise()));
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A DynamoDB client for the benchmark's own calls, configured like the handlers' local one. */
export function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ region: 'local', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
}

/** Creates the relay table `name` (both indexes, stream) on the local DynamoDB. */
export async function createTable(endpoint: string, name: string): Promise<void> {
  const client = localDynamoClient(endpoint);
  try {
    await ensureTable(client, name);
  } finally {
    client.destroy();
  }
}

/** Every item of `table` (the benchmark's own read, not measured). */
export async function scanTable(endpoint: string, table: string): Promise<Record<string, AttributeValue>[]> {
  const client = localDynamoClient(endpoint);
  const items: Record<string, AttributeValue>[] = [];
  try {
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  } finally {
    client.destroy();
  }
  return items;
}

// ---------------------------------------------------------------------------------------------
// The handlers' environment

export interface RelayEnvOptions {
  readonly workspace: Workspace;
  readonly services: Services;
  readonly tableName: string;
  /** Where the handlers' DynamoDB client goes (a counting proxy); default the services' dynalite. */
  readonly dynamoEndpoint?: string;
}

/** The environment contract of `functions/handlers/runtime/env.ts`, pointed at the bench services. */
export function relayEnv({ workspace, services, tableName, dynamoEndpoint }: RelayEnvOptions): Record<string, string> {
  return {
    RELAY_CONFIG: workspace.configPath,
    TABLE_NAME: tableName,
    DYNAMODB_ENDPOINT: dynamoEndpoint ?? services.dynamoEndpoint,
    RELAY_SECRETS_FILE: workspace.secretsPath,
    PROVIDER_BASE_URL: services.sandboxUrl,
    AWS_REGION: 'us-east-1',
    POWERTOOLS_SERVICE_NAME: 'sms-relay',
    POWERTOOLS_METRICS_NAMESPACE: 'SmsRelay',
    MAX_BODY_BYTES: '262144',
  };
}

type HandlerModules = {
  readonly ingest: typeof import('../functions/handlers/ingest');
  readonly sender: typeof import('../functions/handlers/sender');
  readonly context: typeof import('../functions/handlers/runtime/context');
};

let modules: HandlerModules | undefined;

/** The real handler modules (TypeScript sources, one module graph), imported once. */
export async function handlerModules(): Promise<HandlerModules> {
  modules ??= {
    ingest: await import('../functions/handlers/ingest'),
    sender: await import('../functions/handlers/sender'),
    context: await import('../functions/handlers/runtime/context'),
  };
  return modules;
}

/**
 * Sets the handlers' environment in this process and forgets their cached runtime, so the next
 * invocation builds its context (config, clients) from it: a container cold start, minus the
 * module loading.
 */
export async function useRelayEnv(env: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(env)) process.env[name] = value;
  (await handlerModules()).context.resetRelayRuntime();
}

// ---------------------------------------------------------------------------------------------
// Webhooks

/** One webhook as its sender posts it. */
export interface WebhookRequest {
  readonly route: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

const fixture = (path: string): unknown => JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', path), 'utf8'));

type Json = Record<string, unknown>;

export interface AlertOptions {
  /** Makes the group unique (alert name, group key, fingerprints). */
  readonly id: string;
  readonly status?: 'firing' | 'resolved';
  /** Alerts in the group. @default 1 */
  readonly alerts?: number;
  /** The group's on-call phone: a second recipient unless it is the literal one. @default the literal one */
  readonly oncallPhone?: string;
}

/**
 * An Alertmanager notification shaped like `test/fixtures/alertmanager/firing-grouped.json`, with
 * `alerts` alerts of one group, authenticated by the route's Bearer token.
 */
export function alertmanagerWebhook({ id, status = 'firing', alerts = 1, oncallPhone = '0712345678' }: AlertOptions): WebhookRequest {
  const base = fixture('alertmanager/firing-grouped.json') as Json & { alerts: Json[] };
  const template = base.alerts[0] as Json & { labels: Json; annotations: Json };
  const alertname = `CheckoutLatencyHigh${id}`;
  const group = Array.from({ length: alerts }, (_, index) => ({
    ...template,
    status,
    labels: { ...template.labels, alertname, instance: `api-${String(index + 1).padStart(2, '0')}.internal:8080` },
    annotations: {
      ...template.annotations,
      oncall_phone: oncallPhone,
      summary: `p99 latency of checkout-api on api-${String(index + 1).padStart(2, '0')} is above 2 s for 5 minutes`,
    },
    fingerprint: createHmac('sha256', 'fp').update(`${id}/${index}`).digest('hex').slice(0, 16),
  }));
  const body = {
    ...base,
    status,
    alerts: group,
    groupLabels: { alertname },
    commonLabels: { alertname, job: 'checkout-api', severity: 'critical' },
    commonAnnotations: { oncall_phone: oncallPhone, runbook_url: 'https://runbooks.example.com/checkout-latency' },
    groupKey: `{}/{severity="critical"}:{alertname="${alertname}"}`,
  };
  return {
    route: 'alerts',
    body: JSON.stringify(body, null, 2),
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Alertmanager/0.27.0',
      authorization: `Bearer ${SECRETS['alerts-token']}`,
    },
  };
}

/**
 * A Shopify `orders/create` delivery (`test/fixtures/shopify/orders-create.json`) for order
 * `#<1000 + n>`, signed with the route's key like Shopify signs it (HMAC-SHA256 of the raw body,
 * base64).
 */
export function shopifyOrderWebhook(n: number, eventId: string = randomUUID()): WebhookRequest {
  const base = fixture('shopify/orders-create.json') as Json;
  const body = JSON.stringify({ ...base, name: `#${1000 + n}`, order_number: 1000 + n }, null, 2);
  return {
    route: 'orders',
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Shopify-Captain-Hook',
      'x-shopify-topic': 'orders/create',
      'x-shopify-shop-domain': 'duka-la-neema.myshopify.com',
      'x-shopify-api-version': '2024-10',
      'x-shopify-webhook-id': randomUUID(),
      'x-shopify-event-id': eventId,
      'x-shopify-triggered-at': new Date().toISOString(),
      'x-shopify-hmac-sha256': createHmac('sha256', SECRETS['shopify-secret']).update(body).digest('base64'),
    },
  };
}

/** A generic JSON webhook whose message (about 230 GSM-7 characters) needs two SMS parts. */
export function longGenericWebhook(id: string): WebhookRequest {
  const message =
    `Nightly report ${id}: backups of db-01, db-02 and db-03 completed, replication lag peaked at 41 s at 02:10, ` +
    `disk usage on the archive volume is 87 % and growing 1.5 % a day; the rotation job will run again at 04:00 (run ${id}).`;
  return {
    route: 'digest',
    body: JSON.stringify({ message, source: 'cron@ops-01' }),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRETS['generic-token']}`, 'user-agent': 'curl/8.5.0' },
  };
}

/**
 * The fixed mix of `providerCalls` and the cost model, and how many SMS parts an optimal relay
 * sends for each (one provider call per part, all of its recipients in that one call):
 * - 20 Alertmanager groups firing, every other one with a second on-call recipient, every fourth
 *   one grouping 3 alerts: 1 part each;
 * - 10 Shopify orders to the shop and the customer (2 recipients): 1 part each;
 * - 5 generic messages split into 2 parts: 2 each;
 * - 5 duplicates (Alertmanager retrying 5 of the groups above): 0;
 * - 5 resolved groups, filtered out by the route's `when`: 0.
 */
export function webhookMix(tag: string): { readonly requests: readonly WebhookRequest[]; readonly optimalCalls: number; readonly parts: readonly number[] } {
  const requests: WebhookRequest[] = [];
  const parts: number[] = [];
  const firing: WebhookRequest[] = [];
  for (let i = 0; i < 20; i += 1) {
    const webhook = alertmanagerWebhook({
      id: `${tag}F${i}`,
      alerts: i % 4 === 0 ? 3 : 1,
      oncallPhone: i % 2 === 0 ? `0754 ${String(100 + i).padStart(3, '0')} 222` : '0712345678',
    });
    firing.push(webhook);
    requests.push(webhook);
    parts.push(1);
  }
  for (let i = 0; i < 10; i += 1) {
    requests.push(shopifyOrderWebhook(i));
    parts.push(1);
  }
  for (let i = 0; i < 5; i += 1) {
    requests.push(longGenericWebhook(`${tag}-${i}`));
    parts.push(2);
  }
  for (let i = 0; i < 5; i += 1) {
    requests.push(firing[i * 3] as WebhookRequest);
    parts.push(0);
  }
  for (let i = 0; i < 5; i += 1) {
    requests.push(alertmanagerWebhook({ id: `${tag}R${i}`, status: 'resolved' }));
    parts.push(0);
  }
  return { requests, parts, optimalCalls: parts.reduce((sum, value) => sum + value, 0) };
}

// ---------------------------------------------------------------------------------------------
// Events and Lambda contexts

/** The API Gateway HTTP API (payload 2.0) event of `POST /hooks/{route}` for `webhook`. */
export function apiGatewayEvent(webhook: WebhookRequest, now: number = Date.now()): APIGatewayProxyEventV2 {
  const requestId = randomUUID();
  return {
    version: '2.0',
    routeKey: 'POST /hooks/{route}',
    rawPath: `/hooks/${webhook.route}`,
    rawQueryString: '',
    headers: {
      ...webhook.headers,
      'content-length': String(Buffer.byteLength(webhook.body)),
      host: 'abcdef1234.execute-api.us-east-1.amazonaws.com',
      'x-amzn-trace-id': `Root=1-${Math.floor(now / 1000).toString(16)}-${requestId.replace(/-/g, '').slice(0, 24)}`,
      'x-forwarded-for': '203.0.113.10',
      'x-forwarded-port': '443',
      'x-forwarded-proto': 'https',
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'abcdef1234',
      domainName: 'abcdef1234.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abcdef1234',
      http: { method: 'POST', path: `/hooks/${webhook.route}`, protocol: 'HTTP/1.1', sourceIp: '203.0.113.10', userAgent: webhook.headers['user-agent'] ?? '' },
      requestId,
      routeKey: 'POST /hooks/{route}',
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    pathParameters: { route: webhook.route },
    body: webhook.body,
    isBase64Encoded: false,
  };
}

/**
 * A Lambda context like the runtime passes: the logger adds its fields to every line (so log sizes
 * are the deployed ones), and the sender reads the remaining time.
 */
export function lambdaContext(name: 'ingest' | 'sender', memoryMb: number, timeoutMs: number): Context {
  const functionName = `SmsRelay-prod-Relay${name === 'ingest' ? 'Ingest' : 'Sender'}Function7C1A3F8E-2D6B9054E94D`;
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `2026/11/22/[$LATEST]${randomUUID().replace(/-/g, '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

let sequence = 100_000_000_000_000_000_000n;

/**
 * The stream records Lambda hands the sender for new message records, after the event source's
 * filter (INSERT of a PENDING message), `batchSize` (10) at a time.
 */
export function streamBatches(images: readonly Record<string, AttributeValue>[], batchSize = 10): DynamoDBStreamEvent[] {
  const records: DynamoDBRecord[] = images.map((image) => {
    sequence += 1n;
    return {
      eventID: randomUUID().replace(/-/g, ''),
      eventName: 'INSERT',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
        Keys: { pk: image['pk'], sk: image['sk'] } as never,
        NewImage: image as never,
        SequenceNumber: sequence.toString(),
        SizeBytes: JSON.stringify(image).length,
        StreamViewType: 'NEW_IMAGE',
      },
      eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/sms-relay/stream/2026-11-22T00:00:00.000',
    };
  });
  const batches: DynamoDBStreamEvent[] = [];
  for (let start = 0; start < records.length; start += batchSize) batches.push({ Records: records.slice(start, start + batchSize) });
  return batches;
}

/** The message records the stream filter lets through to the sender: PENDING messages. */
export function pendingMessages(items: readonly Record<string, AttributeValue>[]): Record<string, AttributeValue>[] {
  return items
    .filter((item) => item['id']?.S !== undefined && item['state']?.S === 'PENDING')
    .sort((a, b) => (a['id']!.S! < b['id']!.S! ? -1 : 1));
}

// ---------------------------------------------------------------------------------------------
// Output tap

export interface TapReading {
  readonly bytes: number;
  readonly lines: number;
}

/**
 * Replaces `process.stdout.write` and `process.stderr.write` (where Powertools' own `Console`
 * writes) with a counter: the handlers' log lines are measured, not printed. `passThrough` also
 * prints them.
 */
export function tapOutput({ passThrough = false }: { readonly passThrough?: boolean } = {}): { read(): TapReading; reset(): void; restore(): void } {
  const originals = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  let bytes = 0;
  let lines = 0;
  const counter =
    (original: typeof process.stdout.write) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      bytes += Buffer.byteLength(text);
      lines += text.split('\n').filter((line) => line.trim() !== '').length;
      if (passThrough) return (original as (chunk: string, ...args: unknown[]) => boolean)(text, ...rest);
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    };
  process.stdout.write = counter(originals.out) as typeof process.stdout.write;
  process.stderr.write = counter(originals.err) as typeof process.stderr.write;
  return {
    read: () => ({ bytes, lines }),
    reset: () => {
      bytes = 0;
      lines = 0;
    },
    restore: () => {
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
    },
  };
}

/** Prints a progress line to the real standard error, even while the output is tapped. */
export function progress(message: string): void {
  const write = Object.getPrototypeOf(process.stderr).write as (this: NodeJS.WriteStream, chunk: string) => boolean;
  write.call(process.stderr, `[bench] ${message}\n`);
}
