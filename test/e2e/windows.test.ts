import { describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../local/sandbox/types';
import { type PostWebhook, testWithRelay } from '../helpers/fixtures';
import { eventually, fixture, moveClockAhead, records, runCli, type RelayOnSandbox } from './support';

const API_KEY = 'windows-test-provider-key-7c1e';
/** One webhook of the storm fixture carries 3 alerts; the storm is this many of them. */
const STORM_WEBHOOKS = 10;
const ZONE = 'Africa/Dar_es_Salaam';
/** The nightly route's quiet hours: from the minute the config is written, this many minutes on. */
const QUIET_MINUTES = 10;

let sandbox: RunningSandbox;
let started: RelayOnSandbox;
let postWebhook: PostWebhook;

/** `HH:MM` in Dar es Salaam, `minutes` from now. */
const clock = (minutes: number): string =>
  new Intl.DateTimeFormat('en-GB', { timeZone: ZONE, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
    new Date(Date.now() + minutes * 60_000),
  );

const ROUTES = `
provider:
  baseUrl: http://127.0.0.1:1
  defaultSenderId: SMSRELAY
routes:
  storm:
    source: alertmanager
    secret: alerts-token
    recipients: ["0712345678"]
    when: "item.status == 'firing'"
    fanOut: alerts
    template: "{{ item.labels.alertname }} {{ item.labels.instance }}"
    senderId: ALERTS
    digest: { window: 5s }
  storm-plain:
    source: alertmanager
    secret: alerts-token
    recipients: ["0712345678"]
    when: "item.status == 'firing'"
    fanOut: alerts
    template: "{{ item.labels.alertname }} {{ item.labels.instance }}"
    senderId: ALERTS
  nightly:
    source: generic
    secret: generic-token
    recipients: ["0754111222"]
    quietHours: { from: "${clock(0)}", to: "${clock(QUIET_MINUTES)}" }
`;

const test = testWithRelay({
  sandbox: {
    apiKey: API_KEY,
    balance: 10_000,
    rate: 1,
    senderIds: ['SMSRELAY', 'ALERTS'],
    defaultSenderId: 'SMSRELAY',
  },
  config: ROUTES,
  movableClock: true,
});
test.beforeAll(({ sandbox: service, relay, postWebhook: poster }) => {
  postWebhook = poster;
  sandbox = service;
  started = relay;
}, 180_000);

/** The storm fixture again, as a new group: its own fingerprints and instances, so no delivery is a duplicate. */
function stormBody(n: number): Buffer {
  const body = JSON.parse(fixture('alertmanager/firing-grouped.json').toString('utf8')) as {
    groupKey: string;
    alerts: { fingerprint: string; labels: Record<string, string> }[];
  };
  body.groupKey = `${body.groupKey}#${n}`;
  body.alerts.forEach((alert, i) => {
    alert.fingerprint = `storm-${n}-${i}`;
    alert.labels['instance'] = `api-${n * 3 + i + 1}`;
  });
  return Buffer.from(JSON.stringify(body));
}

async function storm(route: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < STORM_WEBHOOKS; n += 1) {
    const answer = await postWebhook(route, stormBody(n));
    expect(answer.status).toBe(202);
    ids.push(...(answer.body['ids'] as string[]));
  }
  return ids;
}

describe('digests and quiet hours through npm start', () => {
  it('sends an Alertmanager storm through a digest route as one SMS, and the same storm without it as thirty', async () => {
    const before = sandbox.balance();
    const deferred = await storm('storm');
    expect(deferred).toHaveLength(STORM_WEBHOOKS * 3);
    const digest = await eventually(
      async () => {
        const sent = (await records(started.relay.url, 'route=storm')).filter((record) => record.state === 'SENT');
        return sent.length === 1 ? sent[0] : undefined;
      },
      { what: 'the digest sent' },
    );
    const stormRecords = await records(started.relay.url, 'route=storm');
    expect(stormRecords.filter((record) => record.state === 'DIGESTED')).toHaveLength(STORM_WEBHOOKS * 3);
    const digestCost = before - sandbox.balance();
    const [sms] = sandbox.messages();
    expect(sandbox.messages()).toHaveLength(1);
    expect(sms!.message).toMatch(/^30 alerts in 5 s: InstanceDown api-1; InstanceDown api-2; InstanceDown api-3; /);
    expect(sms!.message.length).toBeLessThanOrEqual(160);
    expect(sms!.senderId).toBe('ALERTS');
    expect(digestCost).toBe(digest.deducted);

    const plainBefore = sandbox.balance();
    await storm('storm-plain');
    await eventually(
      async () =>
        (await records(started.relay.url, 'route=storm-plain')).filter((record) => record.state === 'SENT').length ===
        STORM_WEBHOOKS * 3
          ? true
          : undefined,
      {
        what: 'the plain storm sent',
      },
    );
    const plainCost = plainBefore - sandbox.balance();
    expect(plainCost).toBe(STORM_WEBHOOKS * 3 * digestCost);
    // For the closing note.
    console.log(
      JSON.stringify({
        digestSms: sms!.message,
        digestCredits: digestCost,
        plainSms: STORM_WEBHOOKS * 3,
        plainCredits: plainCost,
        balanceBefore: before,
        balanceAfterDigest: before - digestCost,
      }),
    );
  });

  it('defers what arrives in quiet hours, refuses to redrive it, and sends one digest when they end', async () => {
    sandbox.clearMessages();
    const ids: string[] = [];
    for (const message of ['backup db-1 ok', 'backup db-2 FAILED', 'backup db-3 ok']) {
      const response = await postWebhook('nightly', { message });
      expect(response.status).toBe(202);
      const answer = response.body as { ids: string[]; deferredUntil: string };
      expect(answer.deferredUntil).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/);
      ids.push(...answer.ids);
    }
    const waiting = await records(started.relay.url, 'state=DEFERRED');
    expect(waiting.map((record) => record.id).sort()).toEqual([...ids].sort());
    expect(waiting[0]!.reason).toMatch(
      /^quiet hours until (\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}(?: [A-Z][\w/+-]*)?: goes out in the route's digest$/,
    );

    const redrive = await runCli(['redrive', '--state', 'DEFERRED'], started.env);
    expect(redrive.code).not.toBe(0);
    expect(redrive.stderr).toContain('DEFERRED records are not stuck');

    // Nothing goes out while quiet hours last; the runtime's clock moved past their end, the sweeper sends the digest.
    expect(sandbox.messages()).toEqual([]);
    moveClockAhead(started, (QUIET_MINUTES + 1) * 60_000);
    await eventually(async () => (sandbox.messages().length === 1 ? true : undefined), {
      what: 'the quiet-hours digest',
      timeoutMs: 120_000,
    });
    expect(sandbox.messages().map((message) => message.message)).toEqual([
      `3 messages since ${ROUTES.match(/from: "(\d\d:\d\d)"/)![1]}: backup db-1 ok; backup db-2 FAILED; backup db-3 ok`,
    ]);
    console.log(JSON.stringify({ quietDigestSms: sandbox.messages()[0]!.message }));
    await eventually(
      async () =>
        (await records(started.relay.url, 'route=nightly')).filter((record) => record.state === 'DIGESTED').length === 3
          ? true
          : undefined,
      { what: 'the deferred records DIGESTED' },
    );
  }, 180_000);
});
