import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { RouteSchema } from '../../../../functions/core/config/schema';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import { isSnsUrl, SNS, sns } from '../../../../functions/core/sources/sns';
import type { AuthContext, FetchedDocument, SourceFetch } from '../../../../functions/core/sources/types';
import {
  SNS_TEST_CERT,
  SNS_TEST_CERT_URL,
  signSnsMessage,
  snsFixture,
  snsHeaders,
  type SnsMessage,
} from '../../../helpers/sns';
import { webhookOf } from './helpers';
import { GSM_PRINTABLE, renderDefault } from './pack-helpers';

const TOKEN = 'sns-route-token-0123456789';
const RECEIVED_AT = new Date('2025-11-21T09:15:22Z');
const SENT_AT = new Date('2025-11-21T09:15:21.432Z');
const ALARM_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';
const DOC_TOPIC = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
const ROUTE = RouteSchema.parse({
  source: 'sns',
  secret: 'sns-token',
  recipients: ['0712345678'],
  topics: [ALARM_TOPIC, DOC_TOPIC],
});
const DOCUMENTS = new Map([[SNS_TEST_CERT_URL, SNS_TEST_CERT]]);
const CONTEXT: AuthContext = { secret: TOKEN, toleranceSeconds: 300, route: ROUTE, documents: DOCUMENTS };

const OTHER_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

function delivery(
  message: SnsMessage,
  { headers = snsHeaders(message), token = TOKEN }: { headers?: Record<string, string>; token?: string | null } = {},
) {
  return webhookOf({
    body: JSON.stringify(message),
    headers,
    query: token === null ? {} : { token },
    receivedAt: RECEIVED_AT,
  });
}

const signed = (name: string, options: Parameters<typeof signSnsMessage>[1] = {}): SnsMessage =>
  signSnsMessage(snsFixture(name), { at: SENT_AT, ...options });

function fetcher(answers: Record<string, FetchedDocument | Error>): SourceFetch & { calls: string[] } {
  const calls: string[] = [];
  const fetch = vi.fn(async (url: string) => {
    calls.push(url);
    const answer = answers[url];
    if (answer === undefined) return { status: 404, body: 'not found' };
    if (answer instanceof Error) throw answer;
    return answer;
  });
  return Object.assign(fetch, { calls });
}

describe('sns.authenticate', () => {
  it.each(['notification.json', 'subscription-confirmation.json', 'cloudwatch-alarm.json'])(
    'accepts %s signed with SignatureVersion 1 and 2',
    (name) => {
      expect(sns.authenticate(delivery(signed(name, { version: '1' })), CONTEXT)).toEqual({ ok: true });
      expect(sns.authenticate(delivery(signed(name, { version: '2' })), CONTEXT)).toEqual({ ok: true });
    },
  );

  it('accepts the UnsubscribeConfirmation shape', () => {
    const message = { ...snsFixture('subscription-confirmation.json'), Type: 'UnsubscribeConfirmation' };
    expect(sns.authenticate(delivery(signSnsMessage(message, { at: SENT_AT })), CONTEXT)).toEqual({ ok: true });
  });

  it('refuses a Message, Subject or TopicArn changed after signing', () => {
    const message = signed('notification.json');
    expect(sns.authenticate(delivery({ ...message, Message: 'Hello world?' }), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('does not verify'),
    });
    expect(sns.authenticate(delivery({ ...message, Subject: 'Other' }), CONTEXT).ok).toBe(false);
    const { Subject: _dropped, ...withoutSubject } = message;
    expect(sns.authenticate(delivery(withoutSubject), CONTEXT).ok).toBe(false);
    const moved = { ...message, TopicArn: ALARM_TOPIC };
    expect(sns.authenticate(delivery(moved), CONTEXT).ok).toBe(false);
  });

  it('refuses a message signed with another key (a forger cannot use SNS certificates)', () => {
    expect(sns.authenticate(delivery(signed('cloudwatch-alarm.json', { key: OTHER_KEY })), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('does not verify'),
    });
  });

  it('refuses a validly signed message of a topic the route does not list', () => {
    const message = signSnsMessage(
      { ...snsFixture('cloudwatch-alarm.json'), TopicArn: 'arn:aws:sns:eu-west-1:999999999999:ops-alarms' },
      { at: SENT_AT },
    );
    expect(sns.authenticate(delivery(message), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('not one of this route'),
    });
    expect(
      sns.authenticate(delivery(signed('cloudwatch-alarm.json')), {
        ...CONTEXT,
        route: { ...ROUTE, topics: [DOC_TOPIC] },
      }).ok,
    ).toBe(false);
    const { route: _none, ...withoutRoute } = CONTEXT;
    expect(sns.authenticate(delivery(signed('cloudwatch-alarm.json')), withoutRoute).ok).toBe(false);
  });

  it('refuses an x-amz-sns-topic-arn or message-type header that contradicts the body', () => {
    const message = signed('cloudwatch-alarm.json');
    expect(
      sns.authenticate(
        delivery(message, { headers: { ...snsHeaders(message), 'x-amz-sns-topic-arn': DOC_TOPIC } }),
        CONTEXT,
      ),
    ).toEqual({
      ok: false,
      reason: expect.stringContaining('x-amz-sns-topic-arn'),
    });
    expect(
      sns.authenticate(
        delivery(message, {
          headers: { ...snsHeaders(message), 'x-amz-sns-message-type': 'SubscriptionConfirmation' },
        }),
        CONTEXT,
      ).ok,
    ).toBe(false);
  });

  it.each([
    ['http', 'http://sns.eu-west-1.amazonaws.com/SimpleNotificationService-abc.pem'],
    ['a look-alike suffix', 'https://sns.eu-west-1.amazonaws.com.evil.example/SimpleNotificationService-abc.pem'],
    ['a look-alike prefix', 'https://evilsns.eu-west-1.amazonaws.com/SimpleNotificationService-abc.pem'],
    ['user info', 'https://sns.eu-west-1.amazonaws.com@evil.example/SimpleNotificationService-abc.pem'],
    ['a port', 'https://sns.eu-west-1.amazonaws.com:8443/SimpleNotificationService-abc.pem'],
    ['another AWS host', 'https://s3.eu-west-1.amazonaws.com/SimpleNotificationService-abc.pem'],
    ['a path elsewhere', 'https://sns.eu-west-1.amazonaws.com/redirect?to=https://evil.example/cert.pem'],
    ['a traversal', 'https://sns.eu-west-1.amazonaws.com/a/../SimpleNotificationService-abc.pem/..%2F..%2Fx'],
  ])('refuses a SigningCertURL with %s, even when a document is served for it', (_label, certUrl) => {
    const message = signed('cloudwatch-alarm.json', { certUrl });
    const documents = new Map([[certUrl, SNS_TEST_CERT]]);
    expect(sns.authenticate(delivery(message), { ...CONTEXT, documents })).toEqual({
      ok: false,
      reason: expect.stringContaining('SigningCertURL'),
    });
  });

  it('refuses when the certificate was not obtained', () => {
    expect(sns.authenticate(delivery(signed('notification.json')), { ...CONTEXT, documents: new Map() })).toEqual({
      ok: false,
      reason: expect.stringContaining('could not be obtained'),
    });
  });

  it('refuses a stale message (older than SNS retries plus the tolerance) and one from the future', () => {
    const stale = new Date(RECEIVED_AT.getTime() - (SNS.maxAgeSeconds + 301) * 1000);
    expect(sns.authenticate(delivery(signed('notification.json', { at: stale })), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('older'),
    });
    const late = new Date(RECEIVED_AT.getTime() - (SNS.maxAgeSeconds + 299) * 1000);
    expect(sns.authenticate(delivery(signed('notification.json', { at: late })), CONTEXT)).toEqual({ ok: true });
    const ahead = new Date(RECEIVED_AT.getTime() + 301 * 1000);
    expect(sns.authenticate(delivery(signed('notification.json', { at: ahead })), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('ahead'),
    });
  });

  it("requires the route's token (?token= in the endpoint URL, or a Bearer header)", () => {
    const message = signed('notification.json');
    expect(sns.authenticate(delivery(message, { token: null }), CONTEXT).ok).toBe(false);
    expect(sns.authenticate(delivery(message, { token: 'wrong' }), CONTEXT).ok).toBe(false);
    expect(
      sns.authenticate(
        delivery(message, { token: null, headers: { ...snsHeaders(message), authorization: `Bearer ${TOKEN}` } }),
        CONTEXT,
      ),
    ).toEqual({ ok: true });
    expect(sns.authenticate(delivery(message), { ...CONTEXT, secret: '' }).ok).toBe(false);
  });

  it('refuses other signature versions, a SubscribeURL off SNS, and bodies that are not SNS messages', () => {
    const v3 = { ...signed('notification.json'), SignatureVersion: '3' };
    expect(sns.authenticate(delivery(v3), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('SignatureVersion'),
    });
    const elsewhere = signSnsMessage(
      {
        ...snsFixture('subscription-confirmation.json'),
        SubscribeURL: 'https://evil.example/?Action=ConfirmSubscription',
      },
      { at: SENT_AT },
    );
    expect(sns.authenticate(delivery(elsewhere), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('SubscribeURL'),
    });
    for (const body of ['', 'not json', '[]', '{"Type":"Other"}', '{"Type":"Notification"}']) {
      expect(sns.authenticate(webhookOf({ body, query: { token: TOKEN }, receivedAt: RECEIVED_AT }), CONTEXT).ok).toBe(
        false,
      );
    }
  });
});

describe('isSnsUrl', () => {
  it.each([
    'https://sns.us-east-1.amazonaws.com/x',
    'https://sns.us-gov-west-1.amazonaws.com/x',
    'https://sns.cn-north-1.amazonaws.com.cn/x',
    'https://sns.eusc-de-east-1.amazonaws.eu/x',
    'https://sns.us-iso-east-1.c2s.ic.gov/x',
    'https://sns.us-isob-east-1.sc2s.sgov.gov/x',
    'https://sns.eu-isoe-west-1.cloud.adc-e.uk/x',
    'https://sns.us-isof-south-1.csp.hci.ic.gov/x',
  ])('accepts the SNS host of every partition: %s', (url) => {
    expect(isSnsUrl(url)).toBe(true);
  });

  it.each([
    'https://sns.amazonaws.com/x',
    'https://sns.us-east-1.amazonaws.com./x',
    'https://SNS.evil/x',
    'https://sns.us-east-1.amazonaws.co/x',
    'not a url',
    42,
  ])('refuses %s', (url) => {
    expect(isSnsUrl(url)).toBe(false);
  });
});

describe('sns.prefetch', () => {
  const good = { status: 200, body: SNS_TEST_CERT };

  it('fetches the certificate once per fetcher, then serves it from the cache', async () => {
    const fetch = fetcher({ [SNS_TEST_CERT_URL]: good });
    const webhook = delivery(signed('notification.json'));
    expect((await sns.prefetch!(webhook, fetch, CONTEXT)).documents.get(SNS_TEST_CERT_URL)).toBe(SNS_TEST_CERT);
    expect((await sns.prefetch!(webhook, fetch, CONTEXT)).documents.get(SNS_TEST_CERT_URL)).toBe(SNS_TEST_CERT);
    expect(fetch.calls).toEqual([SNS_TEST_CERT_URL]);
  });

  it('bounds the cache', async () => {
    const answers = Object.fromEntries(
      Array.from({ length: SNS.certificateCacheSize + 1 }, (_, index) => [
        SNS_TEST_CERT_URL.replace('test.pem', `${index}.pem`),
        good,
      ]),
    );
    const fetch = fetcher(answers);
    for (const url of Object.keys(answers))
      await sns.prefetch!(delivery(signed('notification.json', { certUrl: url })), fetch, CONTEXT);
    const first = Object.keys(answers)[0]!;
    await sns.prefetch!(delivery(signed('notification.json', { certUrl: first })), fetch, CONTEXT);
    expect(fetch.calls.filter((url) => url === first)).toHaveLength(2);
  });

  it('fetches nothing without the token, for a topic the route does not accept, or for a URL off SNS', async () => {
    const fetch = fetcher({});
    await sns.prefetch!(delivery(signed('notification.json'), { token: 'wrong' }), fetch, CONTEXT);
    await sns.prefetch!(
      delivery(signed('notification.json', { certUrl: 'https://evil.example/SimpleNotificationService-a.pem' })),
      fetch,
      CONTEXT,
    );
    await sns.prefetch!(webhookOf({ body: 'nope', query: { token: TOKEN } }), fetch, CONTEXT);
    await sns.prefetch!(
      delivery(
        signSnsMessage(
          { ...snsFixture('notification.json'), TopicArn: 'arn:aws:sns:us-west-2:999999999999:MyTopic' },
          { at: SENT_AT },
        ),
      ),
      fetch,
      CONTEXT,
    );
    expect(fetch.calls).toEqual([]);
  });

  it('reports a failure a retry may fix as unavailable, and a refusal as no document', async () => {
    const webhook = delivery(signed('notification.json'));
    expect(
      await sns.prefetch!(webhook, fetcher({ [SNS_TEST_CERT_URL]: new Error('ETIMEDOUT') }), CONTEXT),
    ).toMatchObject({ unavailable: expect.stringContaining('ETIMEDOUT') });
    expect(
      await sns.prefetch!(webhook, fetcher({ [SNS_TEST_CERT_URL]: { status: 503, body: '' } }), CONTEXT),
    ).toMatchObject({ unavailable: expect.stringContaining('503') });
    const missing = await sns.prefetch!(webhook, fetcher({}), CONTEXT);
    expect(missing.unavailable).toBeUndefined();
    expect(missing.documents.size).toBe(0);
    const notPem = await sns.prefetch!(
      webhook,
      fetcher({ [SNS_TEST_CERT_URL]: { status: 200, body: '<html>' } }),
      CONTEXT,
    );
    expect(notPem.documents.size).toBe(0);
  });
});

describe('sns.parse, control and dedupe', () => {
  it('exposes a JSON Message (a CloudWatch alarm) as MessageJson, and leaves text Messages alone', () => {
    const alarm = sns.parse(delivery(signed('cloudwatch-alarm.json'))) as {
      MessageJson: { AlarmName: string; Trigger: { Threshold: number } };
    };
    expect(alarm.MessageJson.AlarmName).toBe('HighCPU');
    expect(alarm.MessageJson.Trigger.Threshold).toBe(80);
    expect(sns.parse(delivery(signed('notification.json')))).not.toHaveProperty('MessageJson');
    expect(sns.parse(delivery({ ...signed('notification.json'), Message: '{"broken' }))).not.toHaveProperty(
      'MessageJson',
    );
  });

  it('refuses a body that is not an SNS message', () => {
    expect(() => sns.parse(webhookOf({ body: '{"alerts":[]}' }))).toThrow(BadPayloadError);
  });

  it('turns a SubscriptionConfirmation into a confirmation of its SubscribeURL, an UnsubscribeConfirmation into a record, a Notification into neither', () => {
    const confirmation = signed('subscription-confirmation.json');
    expect(sns.control!(sns.parse(delivery(confirmation)), delivery(confirmation))).toEqual({
      reason: `SNS subscription to ${DOC_TOPIC} confirmed by the relay`,
      confirmUrl: confirmation['SubscribeURL'],
    });
    const unsubscribe = { ...confirmation, Type: 'UnsubscribeConfirmation' };
    expect(sns.control!(unsubscribe, delivery(unsubscribe))).toEqual({ reason: expect.stringContaining('ended') });
    expect(
      sns.control!(sns.parse(delivery(signed('notification.json'))), delivery(signed('notification.json'))),
    ).toBeUndefined();
    expect(sns.ping(undefined, delivery(signed('notification.json')))).toBeUndefined();
  });

  it('keys on MessageId, which every retry keeps', () => {
    const first = delivery(signed('cloudwatch-alarm.json'));
    expect(sns.dedupe(sns.parse(first), first)).toEqual({
      key: 'sns:5f8d2a8e-6c1b-5e4f-9a7d-3b2c1d0e9f8a',
      windowSeconds: SNS.dedupeWindowSeconds,
    });
    expect(() => sns.dedupe({ Type: 'Notification' }, first)).toThrow(BadPayloadError);
  });
});

describe('sns default template', () => {
  it('turns a CloudWatch alarm into one SMS with its state, name, reason and region', () => {
    const text = renderDefault(sns, sns.parse(delivery(signed('cloudwatch-alarm.json'))));
    expect(text).toBe(
      '[ALARM] HighCPU: Threshold Crossed: 1 out of the last 1 datapoints [92.5 (21/11/25 09:10:00)] was greater than or equal to the threshold (80.0) (... (eu-west-1)',
    );
    expect(text.length).toBe(160);
    expect(text).toMatch(GSM_PRINTABLE);
  });

  it('keeps a short reason whole, and falls back to the display Region without an ARN', () => {
    const body = {
      Type: 'Notification',
      TopicArn: 'x',
      MessageJson: { AlarmName: 'Disk', NewStateValue: 'OK', NewStateReason: 'Back to normal', Region: 'EU (Ireland)' },
    };
    expect(renderDefault(sns, body)).toBe('[OK] Disk: Back to normal (EU (Ireland))');
  });

  it('shows Subject and Message of any other notification', () => {
    expect(renderDefault(sns, sns.parse(delivery(signed('notification.json'))))).toBe('My First Message: Hello world!');
    expect(renderDefault(sns, { Type: 'Notification', Message: 'Deploy finished' })).toBe('Deploy finished');
  });
});
