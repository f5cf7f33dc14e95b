import { randomInt } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { operatorHeaders } from '../helpers/relay-operator';
import { standardRoutes } from './support/config';
import { call, mapConcurrent } from './support/http';
import { countBy, liveRecords, type RecordView, waitForFinal } from './support/records';
import { inboxCounts } from './support/sandbox';
import { runCli } from './support/runtime';
import { runId, type Scenario, startScenario } from './support/scenario';
import { signedWebhook, type Webhook } from './support/webhooks';

/**
 * Crash: the runtime is SIGKILLed at random moments of bursts, 12 times, and restarted on the same
 * data directory each time; a sender retries every webhook it got no answer for, as real senders
 * do. Afterwards every accepted message is final (at-least-once: delivered; at-most-once: delivered
 * once or UNKNOWN), nothing is PENDING or SENDING, and the records listed by route and by state agree.
 * After the last kill comes one clean start while `sms-relay logs --json --route` polls every 1.5 s,
 * as a user watching would: every accepted message must be final within 60 s (counted from the last
 * webhook the test re-posted after that start).
 */

const CYCLES = 12;
const BURST = 100;
/** Above the client's time-out, as the runtime requires. */
const TIMEOUT_MS = 2_000;
const STALE_SENDING_MS = 3_000;
/** After the clean start, every accepted message is final within this; waited for state by state. */
const RECOVERY_BOUND_MS = 60_000;
const POLL_EVERY_MS = 1_500;

describe(`crash: ${CYCLES} kills at random moments of bursts, a restart after each`, () => {
  let scenario: Scenario;
  const run = runId();
  const accepted = new Map<string, { route: string; tag: string }>();
  const unanswered: Webhook[] = [];
  let cleanStart = 0;
  let lastAccepted = 0;
  let polling = false;
  let polls = 0;
  let poller: Promise<void> | undefined;

  afterAll(async () => {
    polling = false;
    await poller;
    await scenario?.close();
  });

  /** `sms-relay logs --json --route <id>` every 1.5 s, alternating the two routes, until told to stop. */
  async function pollLogs(): Promise<void> {
    for (let turn = 0; polling; turn += 1) {
      const began = Date.now();
      const listed = await runCli(
        'crash-cycles-logs',
        ['logs', '--json', '--route', turn % 2 === 0 ? 'alo' : 'amo'],
        scenario.runtime.cliEnv,
        120_000,
      );
      if (listed.code !== 0) throw new Error(`logs exited ${listed.code}: ${listed.output.slice(0, 500)}`);
      polls += 1;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, POLL_EVERY_MS - (Date.now() - began))));
    }
  }

  /** Posts each webhook once; a 202 or duplicate answer makes its ids accepted, no answer leaves it for a retry. */
  async function deliver(webhooks: readonly Webhook[]): Promise<void> {
    await mapConcurrent(webhooks, 32, async (webhook) => {
      try {
        const answer = await call(scenario.runtime.baseUrl, {
          method: 'POST',
          path: webhook.path,
          headers: webhook.headers,
          body: webhook.body,
          timeoutMs: 10_000,
        });
        if (answer.status === 202 || answer.json?.['status'] === 'duplicate') {
          for (const id of answer.json!['ids'] as string[])
            accepted.set(id, { route: webhook.route, tag: webhook.tag });
          return;
        }
        if (answer.status < 500) throw new Error(`unexpected ${answer.status}: ${answer.text}`);
      } catch (error) {
        if ((error as Error).message.startsWith('unexpected')) throw error;
      }
      unanswered.push(webhook);
    });
  }

  it('survives every kill', async () => {
    scenario = await startScenario({
      label: 'crash-cycles',
      routes: standardRoutes(),
      timeoutMs: TIMEOUT_MS,
      env: { RETRY_MAX_ATTEMPTS: '6', RETRY_BASE_DELAY_MS: '200', STALE_SENDING_MS: String(STALE_SENDING_MS) },
    });
    for (let cycle = 0; cycle < CYCLES; cycle += 1) {
      const retries = unanswered.splice(0);
      const burst = Array.from({ length: BURST }, (_, index) =>
        signedWebhook(index % 2 === 0 ? 'amo' : 'alo', scenario.secrets, `crash-cycle ${run} ${cycle} ${index}`),
      );
      const posting = deliver([...retries, ...burst]);
      await new Promise((resolve) => setTimeout(resolve, randomInt(50, 1_500)));
      await scenario.runtime.kill();
      await posting;
      await scenario.restart();
    }
    // The clean start: from here on a user watches with `logs`.
    cleanStart = Date.now();
    polling = true;
    poller = pollLogs();
    // Awaited by the next test (or afterAll), which reports a failing `logs`; not an unhandled rejection meanwhile.
    poller.catch(() => undefined);
    // As senders do: what got no answer is sent again, a few rounds (each request may wait 10 s on a busy machine).
    for (let round = 0; round < 5 && unanswered.length > 0; round += 1) await deliver(unanswered.splice(0));
    expect(unanswered).toEqual([]);
    // The bound counts from the last acceptance: re-posting hundreds of webhooks takes the test's
    // client long on a loaded machine, and what it measures is the relay's recovery, not the client.
    lastAccepted = Date.now();
    console.log(`crash cycles: ${accepted.size} messages accepted over ${CYCLES} kills`);
  });

  it('ends every accepted message final: at-least-once delivered, at-most-once delivered once or UNKNOWN', async () => {
    const records = await waitForFinal(
      scenario.runtime,
      [...accepted.keys()],
      Math.max(1_000, RECOVERY_BOUND_MS - (Date.now() - lastAccepted)),
    );
    polling = false;
    await poller;
    console.log(
      `crash cycles: final ${Math.round((Date.now() - cleanStart) / 1000)} s after the clean start, ${Math.round((Date.now() - lastAccepted) / 1000)} s after the last acceptance; ${polls} logs polls meanwhile`,
    );
    const inbox = inboxCounts(scenario.sandbox);
    const problems: string[] = [];
    for (const [id, { route, tag }] of accepted) {
      const state = records.get(id)?.state ?? 'MISSING';
      const delivered = inbox.get(tag) ?? 0;
      if (route === 'alo' && (state !== 'SENT' || delivered < 1)) problems.push(`alo ${state} delivered ${delivered}`);
      if (route === 'amo' && !((state === 'SENT' && delivered === 1) || (state === 'UNKNOWN' && delivered <= 1)))
        problems.push(`amo ${state} delivered ${delivered}`);
    }
    console.log(
      `crash cycles: ${JSON.stringify(countBy([...accepted.keys()].map((id) => `${accepted.get(id)!.route} ${records.get(id)?.state ?? 'MISSING'}`)))}`,
    );
    expect(problems).toEqual([]);
  });

  it('leaves nothing PENDING or SENDING, and lists the same records by route and by state', async () => {
    const all = await liveRecords(scenario.runtime);
    const byRoute = new Map<string, RecordView>();
    for (const route of ['amo', 'alo']) {
      for (const record of (await liveRecords(scenario.runtime, route)).values()) byRoute.set(record.id, record);
    }
    const byState = new Map<string, RecordView>();
    for (const state of ['PENDING', 'SENDING', 'SENT', 'UNKNOWN', 'FAILED', 'PARKED', 'HELD', 'DROPPED']) {
      const answer = await call(scenario.runtime.baseUrl, {
        path: `/_relay/records?state=${state}&limit=100000`,
        headers: { host: `127.0.0.1:${scenario.runtime.port}`, ...(await operatorHeaders(scenario.runtime.baseUrl)) },
        timeoutMs: 120_000,
      });
      const listed = answer.json?.['records'] as RecordView[];
      expect(new Set(listed.map((record) => record.id)).size, `${state} listed once each`).toBe(listed.length);
      for (const record of listed) {
        expect(record.state).toBe(state);
        byState.set(record.id, record);
      }
    }
    expect([...all.values()].filter((record) => record.state === 'PENDING' || record.state === 'SENDING')).toEqual([]);
    expect([...byState.keys()].sort()).toEqual([...byRoute.keys()].sort());
    for (const [id, record] of byRoute) expect(byState.get(id)?.state, id).toBe(record.state);
    expect(await scenario.runtime.stop()).toEqual({ code: 0, signal: null });
  });
});
