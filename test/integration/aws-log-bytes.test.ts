import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { alert } from './alert';
import { type AwsRelay, type HttpAnswer, httpApiEvent, startAwsRelay } from './aws-relay';

/**
 * What CloudWatch Logs ingests per SMS (`npm run test:aws`): the ingest and sender bundles as
 * deployed (test/integration/aws-relay.ts), each invocation's stdout and stderr (the relay's JSON
 * lines and the metrics' embedded-format lines), for plain alerts of one SMS each. The figures feed
 * BENCHMARKS.md's AWS cost per 1,000 SMS (bench/cost.ts `LOG_BYTES_PER_SMS`); Lambda's own START,
 * END and REPORT lines and API Gateway's access log line come on top (see there).
 */

const ALERTS_TOKEN = `alerts-${randomBytes(12).toString('hex')}`;
const ONCALL = '255712345678';
const SMS = 5;

const CONFIG_TEXT = stringify({
  provider: { baseUrl: 'https://sms.example.com/api', defaultSenderId: 'SMSRELAY', timeoutMs: 5_000 },
  secrets: 'sms-relay/awslogs',
  routes: {
    alerts: {
      source: 'alertmanager',
      secret: 'alerts-token',
      recipients: [ONCALL],
      when: "status == 'firing'",
      template: '[{{ status | upcase }}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary }}',
      senderId: 'ALERTS',
    },
  },
});

let relay: AwsRelay;

beforeAll(async () => {
  relay = await startAwsRelay({
    environmentName: 'awslogs',
    configText: CONFIG_TEXT,
    secrets: { 'alerts-token': ALERTS_TOKEN },
    senderIds: ['ALERTS', 'SMSRELAY'],
  });
}, 180_000);

afterAll(async () => {
  await relay?.stop();
});

const bytes = (texts: readonly string[]): number =>
  texts.reduce((sum, text) => sum + Buffer.byteLength(text.trim() === '' ? '' : text), 0);

describe('log bytes per SMS of the deployed bundles', { timeout: 120_000 }, () => {
  it('ingest and the sender write a few hundred bytes of log per plain SMS each', async () => {
    const ingestLogs: string[] = [];
    for (let n = 0; n < SMS; n += 1) {
      const outcome = await relay.invoke(
        'ingest',
        httpApiEvent({
          routeKey: 'POST /hooks/{route}',
          path: '/hooks/alerts',
          headers: { authorization: `Bearer ${ALERTS_TOKEN}`, 'content-type': 'application/json' },
          body: alert(`Disk /var on db-0${n} is 94% full`),
        }),
      );
      expect((outcome as { result?: HttpAnswer }).result?.statusCode).toBe(202);
      ingestLogs.push(outcome.logs);
    }
    await vi.waitFor(
      () => {
        relay.mapping.check();
        expect(relay.sandbox.messages()).toHaveLength(SMS);
      },
      { timeout: 60_000, interval: 200 },
    );
    await vi.waitFor(() => expect(relay.mapping.invocations.length).toBeGreaterThan(0), { timeout: 10_000 });
    const senderLogs = relay.logs.filter((each) => !ingestLogs.includes(each));
    const perSms = { ingest: Math.round(bytes(ingestLogs) / SMS), sender: Math.round(bytes(senderLogs) / SMS) };
    console.log(
      `log bytes per plain SMS (${SMS} SMS, ${relay.mapping.invocations.length} sender invocations): ingest ${perSms.ingest}, sender ${perSms.sender}`,
    );
    // A bound on what logging may cost per SMS: a line per step, masked, no payload dumps.
    expect(perSms.ingest).toBeGreaterThan(0);
    expect(perSms.sender).toBeGreaterThan(0);
    expect(perSms.ingest + perSms.sender).toBeLessThan(4_000);
  });
});
