import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type {
  APIGatewayProxyEventV2,
  AttributeValue as StreamAttributeValue,
  Context,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  ScheduledEvent,
} from 'aws-lambda';
import { vi } from 'vitest';
import { stringify } from 'yaml';
import type { RelayConfigInput, SingleProviderConfigInput } from '../../../functions/core/config/schema';

const scratch = mkdtempSync(join(tmpdir(), 'handler-test-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

/** Writes a config YAML into a fresh directory and returns its path. */
export function writeConfig(config: RelayConfigInput): string {
  const dir = mkdtempSync(join(scratch, 'config-'));
  const path = join(dir, 'relay-config.yaml');
  writeFileSync(path, stringify(config));
  return path;
}

export const ROUTE_TOKEN = `route-token-${randomUUID()}`;

/** Two routes: `alerts` (Alertmanager, Bearer) and `ops` (generic: Bearer or `?token=`). */
export function handlerConfig(baseUrl = 'http://127.0.0.1:9'): SingleProviderConfigInput {
  return {
    provider: { baseUrl, defaultSenderId: 'SMSRELAY', timeoutMs: 5_000 },
    secrets: 'sms-relay/test',
    balance: { threshold: 100, notify: ['0712345678'] },
    routes: {
      alerts: {
        source: 'alertmanager',
        secret: 'alerts-token',
        recipients: ['0712345678'],
        senderId: 'ALERTS',
        delivery: 'at-most-once',
      },
      ops: { source: 'generic', secret: 'alerts-token', recipients: ['0754111222'], senderId: 'OPS' },
    },
  };
}

export interface Captured {
  /** Every line written to stdout or stderr since capture began. */
  lines(): string[];
  /** The lines that are JSON objects, parsed. */
  json(): Record<string, unknown>[];
  /** EMF lines: the ones with `_aws`. */
  emf(): Record<string, unknown>[];
  /** Log lines: JSON with a `level`. */
  logs(): Record<string, unknown>[];
  restore(): void;
}

/**
 * Captures what Powertools writes (its own `Console` over stdout, and stderr for warnings and
 * errors), the way CloudWatch Logs receives both.
 */
export function captureStdout(): Captured {
  const chunks: string[] = [];
  const capture = (chunk: string | Uint8Array): boolean => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(capture),
    vi.spyOn(process.stderr, 'write').mockImplementation(capture),
  ];
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line.trim() !== '');
  const json = () =>
    lines().flatMap((line) => {
      try {
        const value: unknown = JSON.parse(line);
        return value !== null && typeof value === 'object' ? [value as Record<string, unknown>] : [];
      } catch {
        return [];
      }
    });
  return {
    lines,
    json,
    emf: () => json().filter((line) => '_aws' in line),
    logs: () => json().filter((line) => 'level' in line),
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}

/** An HTTP API (payload format 2.0) event for `POST /hooks/{route}`. */
export function apiEvent({
  route,
  body,
  base64 = false,
  headers = {},
  rawQueryString = '',
  queryStringParameters,
  method = 'POST',
  timeEpoch = Date.now(),
}: {
  route?: string;
  body?: string;
  base64?: boolean;
  headers?: Record<string, string>;
  rawQueryString?: string;
  queryStringParameters?: Record<string, string>;
  method?: string;
  timeEpoch?: number;
}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /hooks/{route}',
    rawPath: `/hooks/${route ?? ''}`,
    rawQueryString,
    headers,
    ...(queryStringParameters === undefined ? {} : { queryStringParameters }),
    ...(route === undefined ? {} : { pathParameters: { route } }),
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method, path: `/hooks/${route ?? ''}`, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' },
      requestId: randomUUID(),
      routeKey: 'POST /hooks/{route}',
      stage: '$default',
      time: new Date(timeEpoch).toISOString(),
      timeEpoch,
    },
    ...(body === undefined ? {} : { body: base64 ? Buffer.from(body, 'utf8').toString('base64') : body }),
    isBase64Encoded: base64,
  };
}

let sequence = 1000;

/** A stream record as the DynamoDB stream delivers it (NEW_IMAGE). */
export function streamRecord(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  newImage: Record<string, StreamAttributeValue> | undefined,
): DynamoDBRecord {
  sequence += 1;
  return {
    eventID: randomUUID(),
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'eu-west-1',
    dynamodb: {
      ...(newImage === undefined ? {} : { NewImage: newImage }),
      SequenceNumber: String(sequence).padStart(21, '0'),
      SizeBytes: 100,
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

export const streamEvent = (records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });

export const scheduledEvent = (): ScheduledEvent => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: new Date().toISOString(),
  region: 'eu-west-1',
  resources: ['arn:aws:events:eu-west-1:123456789012:rule/sweep'],
  detail: {},
});

/** A Lambda context with a fixed amount of time left. */
export function lambdaContext(remainingMs = 60_000): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'sms-relay-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:sms-relay-test',
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/sms-relay-test',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Sets the handlers' environment for one test (vitest restores it). */
export function stubEnvironment(values: Record<string, string | undefined>): void {
  for (const name of [
    'RELAY_CONFIG',
    'LAMBDA_TASK_ROOT',
    'TABLE_NAME',
    'DYNAMODB_ENDPOINT',
    'SECRET_ID',
    'RELAY_SECRETS_FILE',
    'PROVIDER_BASE_URL',
    'PROVIDER_API_KEY',
    'MAX_BODY_BYTES',
    'RETRY_MAX_ATTEMPTS',
    'RETRY_BASE_DELAY_MS',
    'STALE_SENDING_MS',
    'SWEEP_PENDING_GRACE_MS',
    'BALANCE_THRESHOLD',
    'POWERTOOLS_SERVICE_NAME',
    'POWERTOOLS_METRICS_NAMESPACE',
    'POWERTOOLS_DEV',
    'POWERTOOLS_METRICS_DISABLED',
    'AWS_EXECUTION_ENV',
  ]) {
    vi.stubEnv(name, undefined);
  }
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  for (const [name, value] of Object.entries(values)) vi.stubEnv(name, value);
}

/**
 * The stream record DynamoDB writes when a message record is inserted: its NEW_IMAGE is the item
 * exactly as stored, read raw from the table.
 */
export async function insertRecordOf(client: DynamoDBClient, tableName: string, id: string): Promise<DynamoDBRecord> {
  const { Item: item } = await client.send(
    new GetItemCommand({
      TableName: tableName,
      Key: { pk: { S: `MSG#${id}` }, sk: { S: 'MSG' } },
      ConsistentRead: true,
    }),
  );
  if (item === undefined) throw new Error(`no item for ${id}`);
  return streamRecord('INSERT', item as Record<string, StreamAttributeValue>);
}
