import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import type { SweepReport } from '../../functions/relay/sweeper';
import { MessageState, type MessageRecord } from '../../functions/store';
import { startAfricasTalkingSandbox } from '../../local/sandbox/africastalking';
import type { RunningSandbox } from '../../local/sandbox/types';
import { scheduledEvent } from '../functions/handlers/support';
import { type AwsRelay, type HttpAnswer, httpApiEvent, startAwsRelay } from './aws-relay';

/**
 * Failover through the deployed bundles (`npm run test:aws`): the stack synthesized from a config
 * with two providers, `main` (the SMS service sandbox, reached through `PROVIDER_BASE_URL`) and
 * `at` (the Africa's Talking sandbox), ingest, sender and sweeper as the esbuild bundles the stack
 * ships, on the stack's table fed by its stream. `main` is down (`/_sandbox/outage`): an alert is
 * delivered by `at`, which only happens if the sender's wiring read `at`'s key from the provider
 * secret under `at-key` (the AT sandbox answers 401 to any other key).
 */

const TOKEN = `generic-${randomBytes(12).toString('hex')}`;
const AT_KEY = `at-key-${randomBytes(12).toString('hex')}`;
const NUMBER = '+255712345678';

/** The config as written for AWS; the functions get it with `at`'s URL pointing at its sandbox. */
const config = (atBaseUrl: string): string =>
  stringify({
    providers: {
      main: {
        type: 'sms-service',
        baseUrl: 'https://sms.example.com/api',
        defaultSenderId: 'SMSRELAY',
        timeoutMs: 5_000,
      },
      at: { type: 'africastalking', username: 'acme', baseUrl: atBaseUrl },
    },
    secrets: 'sms-relay/awsfailover',
    routes: {
      alerts: {
        source: 'generic',
        secret: 'generic-token',
        recipients: ['0712 345 678'],
        template: '{{ message }}',
        delivery: 'at-least-once',
      },
    },
  });

let at: RunningSandbox;
let relay: AwsRelay;

beforeAll(async () => {
  at = await startAfricasTalkingSandbox({
    apiKey: AT_KEY,
    username: 'acme',
    balance: 500,
    rate: 0.8,
    currency: 'KES',
    senderIds: ['SMSRELAY'],
  });
  relay = await startAwsRelay({
    environmentName: 'awsfailover',
    configText: config('https://api.africastalking.com'),
    stagedConfigText: config(at.baseUrl),
    secrets: { 'generic-token': TOKEN, 'at-key': AT_KEY },
    senderIds: ['SMSRELAY'],
  });
}, 600_000);

afterAll(async () => {
  await relay?.stop();
  await at?.close();
});

async function record(id: string): Promise<MessageRecord> {
  const found = await relay.store.getMessage(id);
  if (found === undefined) throw new Error(`no record ${id}`);
  return found;
}

describe('failover through the deployed bundles', { timeout: 180_000 }, () => {
  it("delivers an alert through at while main is down, naming both on the record; at's key read from the provider secret", async () => {
    const outage = await fetch(`${relay.sandbox.baseUrl}/_sandbox/outage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 503 }),
    });
    expect(outage.status).toBe(200);

    const answer = await relay.call<HttpAnswer>(
      'ingest',
      httpApiEvent({
        routeKey: 'POST /hooks/{route}',
        path: '/hooks/alerts',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Disk on db-01 is 94% full' }),
      }),
    );
    expect(answer.statusCode).toBe(202);
    const id = (JSON.parse(answer.body!) as { ids: string[] }).ids[0]!;

    // The outage's 503 is the SMS service saying it did not take the send: the sender moves on to
    // at at once. The sweeper runs as its schedule would, in case a retry is what delivers it.
    const sent = await vi.waitFor(
      async () => {
        relay.mappings.critical.check();
        relay.mappings.bulk.check();
        const now = await record(id);
        if (now.state !== MessageState.Sent) {
          await relay.call<SweepReport>('sweeper', scheduledEvent());
          throw new Error(`the alert is ${now.state}, not SENT yet`);
        }
        return now;
      },
      { timeout: 120_000, interval: 1_000 },
    );
    expect(sent).toMatchObject({ provider: 'at', failoverFrom: 'main', failoverReason: 'unreachable' });
    expect(at.messages().flatMap((message) => message.phoneNumbers)).toEqual([NUMBER]);
    expect(relay.sandbox.messages()).toHaveLength(0);
    expect(relay.logs.join('\n')).not.toContain(AT_KEY);
  });
});
