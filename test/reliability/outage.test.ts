import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/http';
import { countBy, liveRecords, type RecordView, waitUntil } from './support/records';
import { runId, type Scenario, startScenario } from './support/scenario';
import { signedWebhook } from './support/webhooks';

/**
 * An outage of the SMS service during a steady trickle of at-most-once (`amo`) and at-least-once
 * (`alo`) webhooks: the whole service down (every `/v1` request, the balance endpoint included,
 * answered 503) for `RELIABILITY_OUTAGE_SECONDS` (default 180 s), then back. What must hold:
 * at most 5 messages end maybe-sent (UNKNOWN), everything else SENT, nothing PENDING or SENDING
 * left, during the outage the service sees probes of the balance endpoint, not a send per
 * message, and the terminal says when the service went away and came back. The figures (sends and probes the service saw, time to drain after its return) are
 * printed for the record.
 */

const OUTAGE_MS = Number(process.env['RELIABILITY_OUTAGE_SECONDS'] ?? 180) * 1_000;
/**
 * One webhook this often, alternating the two routes: the steady trickle. The `sleep(TRICKLE_MS)`
 * below is pacing of input (what a sender does), not a wait for a state.
 */
const TRICKLE_MS = 1_000;
const BEFORE_AND_AFTER = 8;
/** Bounds a broken relay's wait, never a measure: the drain time is printed. */
const DRAIN_DEADLINE_MS = 180_000;

describe('outage: the SMS service down for minutes during a trickle', () => {
  let scenario: Scenario;

  beforeAll(async () => {
    scenario = await startScenario({
      label: 'outage',
      timeoutMs: 2_000,
      env: { RETRY_BASE_DELAY_MS: '1000', SWEEP_PENDING_GRACE_MS: '0' },
    });
  });

  afterAll(async () => {
    await scenario?.close();
  });

  it(`costs at most 5 maybe-sent messages; the rest is SENT once the service is back; the service sees probes, not sends`, async () => {
    const run = runId();
    const ids = new Map<string, { route: 'amo' | 'alo'; tag: string }>();
    let posted = 0;
    const post = async (): Promise<void> => {
      const route = posted % 2 === 0 ? 'amo' : 'alo';
      const tag = `outage ${run} ${route} ${posted}`;
      posted += 1;
      const webhook = signedWebhook(route, scenario.secrets, tag);
      const answer = await call(scenario.runtime.baseUrl, {
        method: 'POST',
        path: webhook.path,
        headers: webhook.headers,
        body: webhook.body,
      });
      expect(answer.status, answer.text).toBe(202);
      for (const id of answer.json!['ids'] as string[]) ids.set(id, { route, tag });
    };
    const outage = async (method: 'POST' | 'DELETE'): Promise<void> => {
      const answer = await call(scenario.sandbox.baseUrl, {
        method,
        path: '/_sandbox/outage',
        ...(method === 'POST'
          ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 503 }) }
          : {}),
      });
      expect(answer.status, answer.text).toBe(200);
    };

    for (let count = 0; count < BEFORE_AND_AFTER; count += 1) {
      await post();
      await sleep(TRICKLE_MS);
    }
    await waitUntil(
      'the messages before the outage to be SENT',
      async () =>
        [...(await liveRecords(scenario.runtime)).values()].filter((record) => record.state === 'SENT').length ===
        BEFORE_AND_AFTER,
      { timeoutMs: 60_000 },
    );

    const downAt = new Date().toISOString();
    await outage('POST');
    const outageEnds = Date.now() + OUTAGE_MS;
    while (Date.now() < outageEnds) {
      await post();
      await sleep(TRICKLE_MS);
    }
    const duringOutage = posted - BEFORE_AND_AFTER;
    await outage('DELETE');
    const backAt = new Date().toISOString();
    const backMs = Date.now();
    for (let count = 0; count < BEFORE_AND_AFTER; count += 1) {
      await post();
      await sleep(TRICKLE_MS);
    }

    let records = new Map<string, RecordView>();
    let drainedMs: number | undefined;
    await waitUntil(
      'every message to be final',
      async () => {
        records = await liveRecords(scenario.runtime);
        const open = [...ids.keys()].filter((id) => ['PENDING', 'SENDING', undefined].includes(records.get(id)?.state));
        if (open.length === 0) drainedMs ??= Date.now() - backMs;
        return open.length === 0;
      },
      {
        timeoutMs: DRAIN_DEADLINE_MS,
        intervalMs: 1_000,
        describe: () => JSON.stringify(countBy([...ids.keys()].map((id) => records.get(id)?.state ?? 'MISSING'))),
      },
    );

    const requests = scenario.sandbox.requests();
    const inOutage = requests.filter((request) => request.at >= downAt && request.at < backAt);
    const sendsInOutage = inOutage.filter((request) => request.path === '/v1/sms/send').length;
    const probesInOutage = inOutage.filter((request) => request.path === '/v1/account/balance').length;
    const states = countBy([...ids.keys()].map((id) => records.get(id)!.state));
    const byRoute = (route: string) =>
      countBy([...ids].filter(([, what]) => what.route === route).map(([id]) => records.get(id)!.state));
    const attempts = [...ids.keys()].reduce((sum, id) => sum + records.get(id)!.attempts, 0);
    const delivered = scenario.sandbox
      .messages()
      .filter((message) => message.message.startsWith(`outage ${run} `)).length;
    console.log(
      `outage of ${OUTAGE_MS / 1000} s: ${posted} webhooks (${duringOutage} during it); states ${JSON.stringify(states)} (amo ${JSON.stringify(byRoute('amo'))}, alo ${JSON.stringify(byRoute('alo'))}); ` +
        `attempts recorded ${attempts}; the service saw ${sendsInOutage} sends and ${probesInOutage} balance reads during the outage, ${requests.filter((request) => request.path === '/v1/sms/send').length} sends in all, delivered ${delivered}; ` +
        `all final ${drainedMs === undefined ? '?' : Math.round(drainedMs / 1000)} s after the service's return`,
    );

    // The terminal says when the service went away and when it came back (an error line: stderr).
    const output = scenario.runtime.run.output();
    expect(output).toMatch(
      /service {2}SMS service unreachable since \d\d:\d\d:\d\d \(\d+ sends failed in a row, last server-error 503\): sends paused/,
    );
    expect(output).toMatch(
      /service {2}SMS service reachable again after \d+ (s|min \d+ s) \(unreachable since \d\d:\d\d:\d\d\): sending the waiting messages, oldest first/,
    );
    expect(states['UNKNOWN'] ?? 0).toBeLessThanOrEqual(5);
    expect(states['SENT']).toBe(ids.size - (states['UNKNOWN'] ?? 0));
    expect(probesInOutage).toBeGreaterThan(0);
    expect(sendsInOutage).toBeLessThan(duringOutage / 4);
    // Each SENT text reached the service once (an UNKNOWN one was answered 503: not delivered either).
    expect(delivered).toBe(states['SENT']);
  });
});
