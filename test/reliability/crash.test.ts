import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../../functions/store';
import { call, mapConcurrent } from './support/http';
import { countBy, storedRecords, waitForFinal, waitUntil } from './support/records';
import { faultsQueued, inboxCounts } from './support/sandbox';
import { runId, type Scenario, startScenario } from './support/scenario';
import { signedWebhook } from './support/webhooks';

/**
 * Crash: the runtime is SIGKILLed while sends are held in flight by the SMS service (a delay
 * fault), then started again on the same data dir. Nothing accepted is lost (every record ends
 * final), at-most-once messages that were in flight become UNKNOWN after STALE_SENDING_MS and are
 * never sent again, at-least-once ones are sent again, and messages still waiting go out once.
 */

const PER_ROUTE = 20;
/** Long enough that the kill always comes while the held sends are still held, even on a busy machine. */
const HOLD_MS = 20_000;
/** Above the client's time-out, as the runtime requires: a send in flight is never taken for a stale one. */
const TIMEOUT_MS = 10_000;
const STALE_SENDING_MS = TIMEOUT_MS + 2_000;
/** More than any number of sends this test makes: every send before the kill is held. */
const HELD_SENDS = 1_000;
/**
 * At-least-once messages posted (and in flight) before the at-most-once batch. One: it holds one of
 * the runtime's three send lanes (two stream batches, the sweeper), leaving the others to the batch.
 */
const ALO_FIRST = 1;

describe('crash: SIGKILL in the middle of a batch, restart on the same store', () => {
  let scenario: Scenario;
  const run = runId();
  const tagById = new Map<string, string>();
  let atCrash: MessageRecord[] = [];
  let heldAtKill = 0;

  beforeAll(async () => {
    scenario = await startScenario({
      label: 'crash',
      // The sends are still in flight, not timed out, when the kill comes right after they arrive.
      timeoutMs: TIMEOUT_MS,
      env: {
        RETRY_MAX_ATTEMPTS: '6',
        RETRY_BASE_DELAY_MS: '200',
        STALE_SENDING_MS: String(STALE_SENDING_MS),
        SWEEP_PENDING_GRACE_MS: '0',
      },
    });
  });

  afterAll(async () => {
    await scenario?.close();
  });

  async function post(route: 'amo' | 'alo', from: number, count: number): Promise<void> {
    const tags = Array.from({ length: count }, (_, index) => `crash ${run} ${route} ${from + index}`);
    await mapConcurrent(tags, count, async (tag) => {
      const webhook = signedWebhook(route, scenario.secrets, tag);
      const answer = await call(scenario.runtime.baseUrl, {
        method: 'POST',
        path: webhook.path,
        headers: webhook.headers,
        body: webhook.body,
      });
      expect(answer.status, answer.text).toBe(202);
      for (const id of answer.json!['ids'] as string[]) {
        tagById.set(id, tag);
      }
    });
  }

  const arrived = async (): Promise<number> => HELD_SENDS - (await faultsQueued(scenario.sandbox));

  it('is killed with at-most-once sends in flight', async () => {
    scenario.sandbox.injectFault({ kind: 'delay', ms: HOLD_MS, count: HELD_SENDS });
    // A few at-least-once sends in flight first, then at-most-once ones, then a backlog of waiting ones.
    await post('alo', 0, ALO_FIRST);
    await waitUntil(
      'the first at-least-once send to reach the SMS service',
      async () => (await arrived()) >= ALO_FIRST,
      { timeoutMs: HOLD_MS / 2 },
    );
    await post('amo', 0, PER_ROUTE);
    await waitUntil('at-most-once sends to reach the SMS service', async () => (await arrived()) >= ALO_FIRST + 2, {
      timeoutMs: HOLD_MS / 2,
    });
    await post('alo', ALO_FIRST, PER_ROUTE - ALO_FIRST);

    await scenario.runtime.kill();
    heldAtKill = await arrived();
    scenario.sandbox.clearFaults();
    expect(heldAtKill).toBeGreaterThanOrEqual(2);
    // Nothing the held sends do can finish before the hold ends: none is delivered yet.
    expect(
      scenario.sandbox.messages().filter((message) => message.message.startsWith(`crash ${run}`)).length,
      'the kill came after the hold ended (raise HOLD_MS)',
    ).toBe(0);

    // The store as the crash left it (a killed process holds no lock).
    atCrash = await storedRecords(scenario.files.dataDir);
    expect(atCrash.map((record) => record.id).sort()).toEqual([...tagById.keys()].sort());
    const sending = atCrash.filter((record) => record.state === 'SENDING');
    expect(
      sending.filter((record) => record.route === 'amo').length,
      'the kill caught at-most-once sends in flight',
    ).toBeGreaterThanOrEqual(1);
    expect(
      sending.filter((record) => record.route === 'alo').length,
      'the kill caught at-least-once sends in flight',
    ).toBeGreaterThanOrEqual(1);
    expect(
      atCrash.filter((record) => record.state === 'PENDING').length,
      'the kill left messages waiting',
    ).toBeGreaterThanOrEqual(1);
    console.log(
      `crash: at the kill ${JSON.stringify(countBy(atCrash.map((record) => `${record.route} ${record.state}`)))}, ${heldAtKill} sends held by the service`,
    );
  });

  it('after a restart, ends every accepted message final: nothing lost', async () => {
    await scenario.restart();
    const records = await waitForFinal(scenario.runtime, [...tagById.keys()], 120_000);
    const states = countBy(
      [...records.values()]
        .filter((record) => tagById.has(record.id))
        .map((record) => `${record.route} ${record.state}`),
    );
    expect(states['alo SENT']).toBe(PER_ROUTE);
    expect((states['amo SENT'] ?? 0) + (states['amo UNKNOWN'] ?? 0)).toBe(PER_ROUTE);
  });

  it('sends nothing twice on at-most-once: in-flight ones became UNKNOWN and were not re-sent', async () => {
    const crashState = new Map(atCrash.map((record) => [record.id, record.state]));
    const pendingAtCrash = atCrash.filter((record) => record.state === 'PENDING').length;
    const aloSendingAtCrash = atCrash.filter((record) => record.route === 'alo' && record.state === 'SENDING').length;
    // Held sends deliver when the hold ends; after the restart: each waiting message once, and each
    // at-least-once message that was in flight once more. Anything beyond is a duplicate.
    const expected = heldAtKill + pendingAtCrash + aloSendingAtCrash;
    const ours = (): number =>
      scenario.sandbox.messages().filter((message) => message.message.startsWith(`crash ${run}`)).length;
    await waitUntil(`${expected} deliveries (held + after the restart)`, () => ours() >= expected, {
      timeoutMs: HOLD_MS + 60_000,
      describe: () => `${ours()} delivered`,
    });
    expect(await scenario.runtime.stop()).toEqual({ code: 0, signal: null });
    expect(ours()).toBe(expected);

    const final = await storedRecords(scenario.files.dataDir);
    const inbox = inboxCounts(scenario.sandbox);
    const problems: string[] = [];
    for (const record of final) {
      const delivered = inbox.get(record.text) ?? 0;
      const before = crashState.get(record.id);
      const line = `${record.route} ${before}→${record.state} delivered ${delivered}`;
      if (record.route === 'amo') {
        if (before === 'SENDING' && (record.state !== 'UNKNOWN' || delivered > 1)) problems.push(line);
        if (before === 'PENDING' && (record.state !== 'SENT' || delivered !== 1)) problems.push(line);
      } else {
        if (record.state !== 'SENT' || delivered < 1) problems.push(line);
        if (before === 'PENDING' && delivered !== 1) problems.push(line);
      }
    }
    expect(problems).toEqual([]);
    expect(final.length).toBe(2 * PER_ROUTE);
  });
});
