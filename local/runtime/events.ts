import { randomUUID } from 'node:crypto';
import type { AttributeValue as SdkAttributeValue } from '@aws-sdk/client-dynamodb';
import type {
  APIGatewayProxyEventV2,
  AttributeValue as StreamAttributeValue,
  Context,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  ScheduledEvent,
} from 'aws-lambda';
import { TABLE } from '../../functions/store';

/** The local stand-in for an AWS account id in ARNs and request contexts. */
export const LOCAL_ACCOUNT_ID = '000000000000';

/** The route key the deployed HTTP API uses for webhooks; the ingest handler sees it verbatim. */
export const WEBHOOK_ROUTE_KEY = 'POST /hooks/{route}';

export interface WebhookRequest {
  readonly method: string;
  /** The path as received, without the query string, e.g. `/hooks/github`. */
  readonly rawPath: string;
  readonly rawQueryString: string;
  /** Node's `rawHeaders`: names and values alternating, in order, original case. */
  readonly rawHeaders: readonly string[];
  readonly route: string;
  readonly body: Uint8Array;
  readonly sourceIp: string;
  /** `host:port` the request was sent to. */
  readonly domainName: string;
  readonly protocol: string;
  readonly receivedAt: Date;
}

/**
 * The API Gateway HTTP API (payload format 2.0) event for a webhook, as the deployed API hands it
 * to the ingest function: lower-cased header names with repeated values joined by commas, cookies
 * moved out of the headers, repeated query parameters joined by commas, and the body base64-encoded
 * so the bytes the sender signed arrive unchanged.
 *
 * @example
 * ```ts
 * const event = httpApiEvent({ method: 'POST', rawPath: '/hooks/notify', rawQueryString: '', rawHeaders: request.rawHeaders,
 *   route: 'notify', body, sourceIp: '127.0.0.1', domainName: '127.0.0.1:3000', protocol: 'HTTP/1.1', receivedAt: new Date() });
 * event.isBase64Encoded; // true
 * ```
 */
export function httpApiEvent(request: WebhookRequest): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index]!.toLowerCase();
    const value = request.rawHeaders[index + 1]!;
    if (name === 'cookie') {
      cookies.push(...value.split(';').map((cookie) => cookie.trim()).filter((cookie) => cookie !== ''));
      continue;
    }
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const query = queryParameters(request.rawQueryString);
  const epoch = request.receivedAt.getTime();
  return {
    version: '2.0',
    routeKey: WEBHOOK_ROUTE_KEY,
    rawPath: request.rawPath,
    rawQueryString: request.rawQueryString,
    ...(cookies.length === 0 ? {} : { cookies }),
    headers,
    ...(query === undefined ? {} : { queryStringParameters: query }),
    pathParameters: { route: request.route },
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: 'local',
      domainName: request.domainName,
      domainPrefix: request.domainName.split('.')[0] ?? request.domainName,
      http: {
        method: request.method,
        path: request.rawPath,
        protocol: request.protocol,
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: WEBHOOK_ROUTE_KEY,
      stage: '$default',
      time: requestTime(request.receivedAt),
      timeEpoch: epoch,
    },
    body: Buffer.from(request.body).toString('base64'),
    isBase64Encoded: true,
  };
}

function queryParameters(rawQueryString: string): Record<string, string> | undefined {
  if (rawQueryString === '') return undefined;
  const parameters: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    parameters[name] = parameters[name] === undefined ? value : `${parameters[name]},${value}`;
  }
  return parameters;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** API Gateway's `requestContext.time` format: `12/Mar/2020:19:03:58 +0000`. */
function requestTime(at: Date): string {
  const two = (value: number): string => String(value).padStart(2, '0');
  return `${two(at.getUTCDate())}/${MONTHS[at.getUTCMonth()]}/${at.getUTCFullYear()}:${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())} +0000`;
}

export interface StreamSource {
  readonly tableName: string;
  readonly region: string;
  /** Part of the stream ARN: a table gets a new stream label each time streams are enabled. */
  readonly label: string;
}

/**
 * A DynamoDB Streams record of an `INSERT` with its new image, as the event source mapping
 * delivers it: binary attributes base64-encoded, keys and size filled in.
 *
 * @example
 * ```ts
 * const record = insertRecord(item, '100000000000000000001', { tableName: 'sms-relay', region: 'local', label: '2025-01-01T00:00:00.000' });
 * ```
 */
export function insertRecord(
  item: Readonly<Record<string, SdkAttributeValue>>,
  sequenceNumber: string,
  { tableName, region, label }: StreamSource,
  now: Date = new Date(),
): DynamoDBRecord {
  const image = Object.fromEntries(Object.entries(item).map(([name, value]) => [name, streamValue(value)]));
  const keys = Object.fromEntries(
    [TABLE.partitionKey, TABLE.sortKey].flatMap((name) => (image[name] === undefined ? [] : [[name, image[name]]])),
  );
  return {
    eventID: randomUUID().replaceAll('-', ''),
    eventName: 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(now.getTime() / 1000),
      Keys: keys,
      NewImage: image,
      SequenceNumber: sequenceNumber,
      SizeBytes: Buffer.byteLength(JSON.stringify(image)),
      StreamViewType: 'NEW_IMAGE',
    },
    eventSourceARN: `arn:aws:dynamodb:${region}:${LOCAL_ACCOUNT_ID}:table/${tableName}/stream/${label}`,
  };
}

/** Wraps stream records into the event the sender function receives. */
export function streamEvent(records: readonly DynamoDBRecord[]): DynamoDBStreamEvent {
  return { Records: [...records] };
}

function streamValue(value: SdkAttributeValue): StreamAttributeValue {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((bytes) => Buffer.from(bytes).toString('base64')) };
  if (value.L !== undefined) return { L: value.L.map(streamValue) };
  if (value.M !== undefined) return { M: Object.fromEntries(Object.entries(value.M).map(([name, inner]) => [name, streamValue(inner)])) };
  // The remaining kinds (S, N, SS, NS, BOOL, NULL) have the same JSON shape in both.
  return value as StreamAttributeValue;
}

/**
 * The EventBridge scheduled event a rule delivers to its target.
 *
 * @example
 * ```ts
 * await handlers.sweeper(scheduledEvent('SweepSchedule', 'local'), lambdaContext('sweeper', 55_000));
 * ```
 */
export function scheduledEvent(ruleName: string, region: string, now: Date = new Date()): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: LOCAL_ACCOUNT_ID,
    time: `${now.toISOString().slice(0, 19)}Z`,
    region,
    resources: [`arn:aws:events:${region}:${LOCAL_ACCOUNT_ID}:rule/${ruleName}`],
    detail: {},
  };
}

/**
 * A Lambda invocation context for a local call: the same fields a handler may read on AWS, with
 * the remaining time counted down from the function's time-out.
 *
 * @example
 * ```ts
 * lambdaContext('ingest', 10_000).getRemainingTimeInMillis(); // ≈ 10000
 * ```
 */
export function lambdaContext(functionName: string, timeoutMs: number, region = 'local'): Context {
  const deadline = Date.now() + timeoutMs;
  const name = `sms-relay-local-${functionName}`;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT_ID}:function:${name}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
