import { describe, expect, it } from 'vitest';
import { insertedMessageId } from '../../../functions/handlers/sender';
import { webhookOf } from '../../../functions/handlers/ingest';
import { httpApiEvent, insertRecord, lambdaContext, scheduledEvent, WEBHOOK_ROUTE_KEY } from '../../../local/runtime/events';

const receivedAt = new Date('2025-03-12T19:03:58.123Z');
/** Not valid UTF-8 and not JSON: only a byte-exact transport keeps a signature over it valid. */
const bytes = new Uint8Array([0x7b, 0xff, 0x00, 0x0d, 0x0a, 0xe2, 0x82, 0x7d]);

describe('the HTTP API payload 2.0 event', () => {
  const event = httpApiEvent({
    method: 'POST',
    rawPath: '/hooks/notify',
    rawQueryString: 'token=a%2Bb&x=1&x=2',
    rawHeaders: ['Content-Type', 'application/json', 'X-Dup', 'one', 'x-dup', 'two', 'Cookie', 'a=1; b=2', 'User-Agent', 'curl/8'],
    route: 'notify',
    body: bytes,
    sourceIp: '127.0.0.1',
    domainName: '127.0.0.1:3000',
    protocol: 'HTTP/1.1',
    receivedAt,
  });

  it('is shaped as API Gateway delivers it', () => {
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: WEBHOOK_ROUTE_KEY,
      rawPath: '/hooks/notify',
      rawQueryString: 'token=a%2Bb&x=1&x=2',
      cookies: ['a=1', 'b=2'],
      headers: { 'content-type': 'application/json', 'x-dup': 'one,two', 'user-agent': 'curl/8' },
      queryStringParameters: { token: 'a+b', x: '1,2' },
      pathParameters: { route: 'notify' },
      isBase64Encoded: true,
      requestContext: {
        http: { method: 'POST', path: '/hooks/notify', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'curl/8' },
        routeKey: WEBHOOK_ROUTE_KEY,
        stage: '$default',
        time: '12/Mar/2025:19:03:58 +0000',
        timeEpoch: receivedAt.getTime(),
      },
    });
    expect(event.headers).not.toHaveProperty('cookie');
  });

  it('reaches the ingest handler with the exact bytes, headers, query and time', () => {
    const webhook = webhookOf(event, 'notify');
    expect(webhook.body).toEqual(bytes);
    expect(webhook.headers).toMatchObject({ 'content-type': 'application/json', cookie: 'a=1; b=2' });
    expect(webhook.query).toEqual({ token: 'a+b', x: '1' });
    expect(webhook.receivedAt).toEqual(receivedAt);
  });
});

describe('the stream record', () => {
  it('carries the new image the sender reads the message id from', () => {
    const item = { pk: { S: 'MSG#01J' }, sk: { S: 'MSG' }, id: { S: '01J' }, state: { S: 'PENDING' }, attempts: { N: '0' }, raw: { B: new Uint8Array([1, 2]) } };
    const record = insertRecord(item, '100000000000000000001', { tableName: 'sms-relay', region: 'local', label: '2025-01-01T00:00:00.000' }, receivedAt);
    expect(record).toMatchObject({
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      eventSourceARN: 'arn:aws:dynamodb:local:000000000000:table/sms-relay/stream/2025-01-01T00:00:00.000',
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(receivedAt.getTime() / 1000),
        Keys: { pk: { S: 'MSG#01J' }, sk: { S: 'MSG' } },
        NewImage: { id: { S: '01J' }, state: { S: 'PENDING' }, attempts: { N: '0' }, raw: { B: 'AQI=' } },
        SequenceNumber: '100000000000000000001',
        StreamViewType: 'NEW_IMAGE',
      },
    });
    expect(insertedMessageId(record)).toBe('01J');
  });
});

describe('scheduled events and the invocation context', () => {
  it('look like EventBridge and Lambda', () => {
    expect(scheduledEvent('SweepSchedule', 'local', receivedAt)).toMatchObject({
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      time: '2025-03-12T19:03:58Z',
      resources: ['arn:aws:events:local:000000000000:rule/SweepSchedule'],
    });
    const context = lambdaContext('sweeper', 55_000);
    expect(context.functionName).toBe('sms-relay-local-sweeper');
    expect(context.getRemainingTimeInMillis()).toBeGreaterThan(50_000);
    expect(context.getRemainingTimeInMillis()).toBeLessThanOrEqual(55_000);
  });
});
