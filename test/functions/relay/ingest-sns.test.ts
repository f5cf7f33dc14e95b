import { describe, expect, it } from 'vitest';
import type { FetchedDocument, SourceFetch } from '../../../functions/core/sources/types';
import { ingestWebhook } from '../../../functions/relay/ingest';
import { MessageState } from '../../../functions/store';
import {
  SNS_TEST_CERT,
  SNS_TEST_CERT_URL,
  signSnsMessage,
  snsFixture,
  snsHeaders,
  type SnsMessage,
} from '../../helpers/sns';
import { harness, type Harness, OPS, secretValues, useRelayServers } from './support';

/**
 * SNS through `ingestWebhook`: the certificate comes from the context's injected `fetch` (the only
 * way a test certificate is trusted), and a subscription confirmation is a GET through the same port.
 */

const servers = useRelayServers({});
const TOKEN = 'sns-ingest-test-token-0123456789';
const ALARM_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';
const DOC_TOPIC = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
const ALARM_TEXT =
  '[ALARM] HighCPU: Threshold Crossed: 1 out of the last 1 datapoints [92.5 (21/11/25 09:10:00)] was greater than or equal to the threshold (80.0) (... (eu-west-1)';

interface Fetcher extends SourceFetch {
  readonly calls: string[];
}

function fetcher(answers: Record<string, FetchedDocument | Error>): Fetcher {
  const calls: string[] = [];
  const fetch = async (url: string): Promise<FetchedDocument> => {
    calls.push(url);
    const answer = answers[url];
    if (answer instanceof Error) throw answer;
    return answer ?? { status: 404, body: '' };
  };
  return Object.assign(fetch, { calls });
}

async function snsRelay(): Promise<Harness> {
  return await harness({
    db: servers.db,
    baseUrl: servers.sandbox.baseUrl,
    secrets: secretValues({ 'sns-token': TOKEN }),
    config: (config) => ({
      ...config,
      routes: {
        ...config.routes,
        aws: { source: 'sns', secret: 'sns-token', topics: [ALARM_TOPIC, DOC_TOPIC], recipients: [`+${OPS}`] },
      },
    }),
  });
}

async function post(
  relay: Harness,
  fetch: SourceFetch,
  message: SnsMessage,
  { token = TOKEN, headers = snsHeaders(message) } = {},
) {
  return await ingestWebhook(
    { ...relay.context, fetch },
    {
      routeId: 'aws',
      body: new TextEncoder().encode(JSON.stringify(message)),
      headers,
      query: { token },
      receivedAt: relay.clock.now,
    },
  );
}

const certificate = { [SNS_TEST_CERT_URL]: { status: 200, body: SNS_TEST_CERT } };

describe('ingestWebhook with an sns route', () => {
  it('records a genuine CloudWatch alarm as one SMS with the exact text, and its retry as a duplicate', async () => {
    const relay = await snsRelay();
    const fetch = fetcher(certificate);
    const message = signSnsMessage(snsFixture('cloudwatch-alarm.json'), { at: relay.clock.now, version: '2' });
    const first = await post(relay, fetch, message);
    expect(first).toMatchObject({ status: 202, body: { status: 'accepted' } });
    const [record] = await relay.records('aws');
    expect(record).toMatchObject({ state: MessageState.Pending, text: ALARM_TEXT, to: [OPS] });

    relay.clock.advance(20_000);
    expect(await post(relay, fetch, message)).toEqual({
      outcome: 'duplicate',
      status: 200,
      ids: first.ids,
      lanes: ['bulk'],
      body: { status: 'duplicate', ids: first.body['ids'] },
    });
    expect(await relay.records('aws')).toHaveLength(1);
    // The certificate was fetched once and then served from the cache.
    expect(fetch.calls).toEqual([SNS_TEST_CERT_URL]);
  });

  it('confirms a SubscriptionConfirmation itself and records it without an SMS', async () => {
    const relay = await snsRelay();
    const message = signSnsMessage(snsFixture('subscription-confirmation.json'), { at: relay.clock.now });
    const fetch = fetcher({
      ...certificate,
      [message['SubscribeURL']!]: { status: 200, body: '<ConfirmSubscriptionResponse/>' },
    });
    const answer = await post(relay, fetch, message);
    expect(answer).toMatchObject({
      status: 200,
      body: { status: 'dropped', reason: `SNS subscription to ${DOC_TOPIC} confirmed by the relay` },
    });
    expect(fetch.calls).toEqual([SNS_TEST_CERT_URL, message['SubscribeURL']]);
    const records = await relay.records('aws');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      state: MessageState.Dropped,
      to: [],
      reason: `SNS subscription to ${DOC_TOPIC} confirmed by the relay`,
    });
    expect(servers.sandbox.messages()).toHaveLength(0);
  });

  it('answers 503 and records nothing when the confirmation fails, so SNS retries it', async () => {
    const relay = await snsRelay();
    const message = signSnsMessage(snsFixture('subscription-confirmation.json'), { at: relay.clock.now });
    const answer = await post(
      relay,
      fetcher({ ...certificate, [message['SubscribeURL']!]: new Error('ECONNRESET') }),
      message,
    );
    expect(answer.status).toBe(503);
    expect(await relay.records('aws')).toHaveLength(0);
  });

  it('records an UnsubscribeConfirmation without confirming anything', async () => {
    const relay = await snsRelay();
    const message = signSnsMessage(
      { ...snsFixture('subscription-confirmation.json'), Type: 'UnsubscribeConfirmation' },
      { at: relay.clock.now },
    );
    const fetch = fetcher(certificate);
    expect(await post(relay, fetch, message)).toMatchObject({
      status: 200,
      body: { status: 'dropped', reason: expect.stringContaining('ended') },
    });
    expect(fetch.calls).toEqual([SNS_TEST_CERT_URL]);
    expect(await relay.records('aws')).toHaveLength(1);
  });

  it('answers 503 and records nothing while the certificate cannot be fetched', async () => {
    const relay = await snsRelay();
    const message = signSnsMessage(snsFixture('notification.json'), { at: relay.clock.now });
    const answer = await post(relay, fetcher({ [SNS_TEST_CERT_URL]: new Error('ETIMEDOUT') }), message);
    expect(answer).toMatchObject({ status: 503, body: { error: expect.stringContaining('ETIMEDOUT') } });
    expect(await relay.records('aws')).toHaveLength(0);
  });

  it('refuses, 401 and nothing recorded: another topic, a tampered message, a stale one, a certificate off SNS, no token', async () => {
    const relay = await snsRelay();
    const at = relay.clock.now;
    const fetch = fetcher(certificate);
    const genuine = signSnsMessage(snsFixture('notification.json'), { at });
    const attempts: { name: string; message: SnsMessage; token?: string }[] = [
      {
        name: 'other topic',
        message: signSnsMessage(
          { ...snsFixture('notification.json'), TopicArn: 'arn:aws:sns:us-west-2:999999999999:MyTopic' },
          { at },
        ),
      },
      { name: 'tampered', message: { ...genuine, Message: 'Hello world?' } },
      {
        name: 'stale',
        message: signSnsMessage(snsFixture('notification.json'), { at: new Date(at.getTime() - 2 * 3600_000) }),
      },
      {
        name: 'certificate off SNS',
        message: signSnsMessage(snsFixture('notification.json'), {
          at,
          certUrl: 'https://sns.eu-west-1.amazonaws.com.evil.example/SimpleNotificationService-a.pem',
        }),
      },
      { name: 'no token', message: genuine, token: '' },
    ];
    for (const { name, message, token } of attempts) {
      const answer = await post(relay, fetch, message, token === undefined ? {} : { token });
      expect({ name, status: answer.status, error: answer.body['error'] }).toEqual({
        name,
        status: 401,
        error: 'unauthorized',
      });
    }
    expect(await relay.records('aws')).toHaveLength(0);
    expect(fetch.calls.every((url) => url === SNS_TEST_CERT_URL)).toBe(true);
  });
});
