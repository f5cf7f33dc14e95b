import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxFault } from '../../local/sandbox/types';
import { call, mapConcurrent } from './support/http';
import { countBy, type RecordView, storedRecords, waitForFinal, waitUntil } from './support/records';
import { runCli } from './support/runtime';
import { faultsQueued, inboxCounts } from './support/sandbox';
import { runId, type Scenario, startScenario } from './support/scenario';
import { signedWebhook } from './support/webhooks';

/**
 * Faults injected in the sandbox SMS service, one scenario at a time, each on a fresh batch:
 * - at-most-once (`amo`): never sent twice; an ambiguous failure (5xx, time-out, reset after the
 *   request went out) ends UNKNOWN and is not retried;
 * - at-least-once (`alo`): never lost; retried until SENT, so an ambiguous failure that did deliver
 *   means a second copy (counted exactly);
 * - 402: PARKED, sent after a top-up and `sms-relay redrive`, once.
 */

const BATCH = 8;
const FAULTS = 3;
/** The client's time-out (config `provider.timeoutMs`) and a delay fault well past it. */
const TIMEOUT_MS = 2_000;
const DELAY_MS = 6_000;
const SETTLE_MS = 90_000;

type Route = 'amo' | 'alo';

interface Batch {
  readonly route: Route;
  readonly tags: readonly string[];
  /** Record id → tag. */
  readonly byId: ReadonlyMap<string, string>;
}

describe('faults: what the SMS service does wrong, the delivery policy absorbs', () => {
  let scenario: Scenario;
  const run = runId();
  let scenarioNumber = 0;
  const allIds: string[] = [];

  beforeAll(async () => {
    scenario = await startScenario({
      label: 'faults',
      timeoutMs: TIMEOUT_MS,
      env: {
        RETRY_MAX_ATTEMPTS: '6',
        RETRY_BASE_DELAY_MS: '200',
        STALE_SENDING_MS: '60000',
        SWEEP_PENDING_GRACE_MS: '0',
      },
    });
  });

  afterAll(async () => {
    await scenario?.close();
  });

  async function post(route: Route, count: number): Promise<Batch> {
    scenarioNumber += 1;
    const tags = Array.from({ length: count }, (_, index) => `fault ${run} s${scenarioNumber} ${route} ${index}`);
    const byId = new Map<string, string>();
    await mapConcurrent(tags, count, async (tag) => {
      const webhook = signedWebhook(route, scenario.secrets, tag);
      const answer = await call(scenario.runtime.baseUrl, {
        method: 'POST',
        path: webhook.path,
        headers: webhook.headers,
        body: webhook.body,
      });
      expect(answer.status, answer.text).toBe(202);
      for (const id of answer.json!['ids'] as string[]) byId.set(id, tag);
    });
    allIds.push(...byId.keys());
    return { route, tags, byId };
  }

  /** Injects the fault, posts a batch, waits until every record is final and every fault was used. */
  async function faulted(
    route: Route,
    fault: SandboxFault,
    count = BATCH,
  ): Promise<{ batch: Batch; records: Map<string, RecordView> }> {
    scenario.sandbox.clearFaults();
    scenario.sandbox.injectFault(fault);
    const batch = await post(route, count);
    const records = await waitForFinal(scenario.runtime, [...batch.byId.keys()], SETTLE_MS, route);
    expect(await faultsQueued(scenario.sandbox), 'every injected fault was met by a send').toBe(0);
    return { batch, records };
  }

  const statesOf = (batch: Batch, records: Map<string, RecordView>): Record<string, number> =>
    countBy([...batch.byId.keys()].map((id) => records.get(id)!.state));
  const deliveries = (batch: Batch): number[] => batch.tags.map((tag) => inboxCounts(scenario.sandbox).get(tag) ?? 0);
  const total = (batch: Batch): number => deliveries(batch).reduce((sum, count) => sum + count, 0);

  /** Per record: its state and how often its text reached the service. */
  const outcomes = (batch: Batch, records: Map<string, RecordView>): Array<{ state: string; delivered: number }> =>
    [...batch.byId].map(([id, tag]) => ({
      state: records.get(id)!.state,
      delivered: inboxCounts(scenario.sandbox).get(tag) ?? 0,
    }));

  it('5xx without delivery: at-most-once → UNKNOWN, never retried; at-least-once → retried, SENT once', async () => {
    const amo = await faulted('amo', { kind: 'status', status: 503, count: FAULTS });
    expect(statesOf(amo.batch, amo.records)).toEqual({ SENT: BATCH - FAULTS, UNKNOWN: FAULTS });
    for (const outcome of outcomes(amo.batch, amo.records))
      expect(outcome).toEqual({ state: outcome.state, delivered: outcome.state === 'SENT' ? 1 : 0 });

    const alo = await faulted('alo', { kind: 'status', status: 503, count: FAULTS });
    expect(statesOf(alo.batch, alo.records)).toEqual({ SENT: BATCH });
    expect(deliveries(alo.batch)).toEqual(Array(BATCH).fill(1));
    expect(
      [...alo.records.values()]
        .filter((record) => alo.batch.byId.has(record.id))
        .reduce((sum, record) => sum + record.attempts, 0),
    ).toBe(BATCH + FAULTS);
  });

  it('5xx after the SMS went out: at-most-once → UNKNOWN, inbox 1 each; at-least-once → SENT, the delivered ones twice', async () => {
    const amo = await faulted('amo', { kind: 'status', status: 500, count: FAULTS, deliver: true });
    expect(statesOf(amo.batch, amo.records)).toEqual({ SENT: BATCH - FAULTS, UNKNOWN: FAULTS });
    expect(deliveries(amo.batch)).toEqual(Array(BATCH).fill(1));

    const alo = await faulted('alo', { kind: 'status', status: 502, count: FAULTS, deliver: true });
    expect(statesOf(alo.batch, alo.records)).toEqual({ SENT: BATCH });
    expect(deliveries(alo.batch).every((count) => count >= 1)).toBe(true);
    expect(total(alo.batch)).toBe(BATCH + FAULTS);
  });

  it(`delays past the ${TIMEOUT_MS} ms client time-out: at-most-once → UNKNOWN, delivered once late; at-least-once → re-sent, SENT`, async () => {
    const amo = await faulted('amo', { kind: 'delay', ms: DELAY_MS, count: FAULTS });
    expect(statesOf(amo.batch, amo.records)).toEqual({ SENT: BATCH - FAULTS, UNKNOWN: FAULTS });
    // The held sends are delivered when the delay ends, after the relay gave up on them.
    await waitUntil('the delayed sends to be delivered', () => total(amo.batch) >= BATCH, {
      timeoutMs: DELAY_MS + 30_000,
    });
    expect(deliveries(amo.batch)).toEqual(Array(BATCH).fill(1));

    const alo = await faulted('alo', { kind: 'delay', ms: DELAY_MS, count: FAULTS });
    expect(statesOf(alo.batch, alo.records)).toEqual({ SENT: BATCH });
    await waitUntil('the delayed sends to be delivered', () => total(alo.batch) >= BATCH + FAULTS, {
      timeoutMs: DELAY_MS + 30_000,
    });
    expect(deliveries(alo.batch).every((count) => count >= 1)).toBe(true);
    expect(total(alo.batch)).toBe(BATCH + FAULTS);
  });

  it('connection reset before delivery: at-most-once → UNKNOWN, not sent; at-least-once → SENT once', async () => {
    const amo = await faulted('amo', { kind: 'reset', count: FAULTS });
    expect(statesOf(amo.batch, amo.records)).toEqual({ SENT: BATCH - FAULTS, UNKNOWN: FAULTS });
    for (const outcome of outcomes(amo.batch, amo.records))
      expect(outcome).toEqual({ state: outcome.state, delivered: outcome.state === 'SENT' ? 1 : 0 });

    const alo = await faulted('alo', { kind: 'reset', count: FAULTS });
    expect(statesOf(alo.batch, alo.records)).toEqual({ SENT: BATCH });
    expect(deliveries(alo.batch)).toEqual(Array(BATCH).fill(1));
  });

  it('connection reset after delivery: at-most-once → UNKNOWN, inbox 1 each; at-least-once → SENT, the delivered ones twice', async () => {
    const amo = await faulted('amo', { kind: 'reset', count: FAULTS, deliver: true });
    expect(statesOf(amo.batch, amo.records)).toEqual({ SENT: BATCH - FAULTS, UNKNOWN: FAULTS });
    expect(deliveries(amo.batch)).toEqual(Array(BATCH).fill(1));

    const alo = await faulted('alo', { kind: 'reset', count: FAULTS, deliver: true });
    expect(statesOf(alo.batch, alo.records)).toEqual({ SENT: BATCH });
    expect(total(alo.batch)).toBe(BATCH + FAULTS);
  });

  it('402 in the middle of a batch: PARKED, sent once after a top-up and `sms-relay redrive`', async () => {
    // The 4th and 5th sends of the batch are refused for balance; the rest go through.
    scenario.sandbox.clearFaults();
    scenario.sandbox.injectFault({ kind: 'delay', ms: 0, count: 3 });
    scenario.sandbox.injectFault({ kind: 'status', status: 402, count: 2 });
    const injected = await post('alo', BATCH);
    // And an account that runs dry part-way: 5 of the next 8 fit.
    const records1 = await waitForFinal(scenario.runtime, [...injected.byId.keys()], SETTLE_MS, 'alo');
    expect(await faultsQueued(scenario.sandbox)).toBe(0);
    expect(statesOf(injected, records1)).toEqual({ SENT: BATCH - 2, PARKED: 2 });

    scenario.sandbox.setBalance(5);
    const dry = await post('amo', BATCH);
    const records2 = await waitForFinal(scenario.runtime, [...dry.byId.keys()], SETTLE_MS, 'amo');
    expect(statesOf(dry, records2)).toEqual({ SENT: 5, PARKED: BATCH - 5 });
    for (const outcome of outcomes(dry, records2))
      expect(outcome).toEqual({ state: outcome.state, delivered: outcome.state === 'SENT' ? 1 : 0 });

    scenario.sandbox.setBalance(1_000_000);
    const redrive = await runCli('redrive', ['redrive'], scenario.runtime.cliEnv);
    expect(redrive.code, redrive.output).toBe(0);
    expect(redrive.output).toMatch(/Re-queued 5 of 5 PARKED/);

    const parkedIds = [...injected.byId.keys(), ...dry.byId.keys()];
    const after = await waitForFinal(scenario.runtime, parkedIds, SETTLE_MS);
    expect(countBy(parkedIds.map((id) => after.get(id)!.state))).toEqual({ SENT: 2 * BATCH });
    expect([...deliveries(injected), ...deliveries(dry)]).toEqual(Array(2 * BATCH).fill(1));

    // A second redrive finds nothing and sends nothing.
    const again = await runCli('redrive', ['redrive'], scenario.runtime.cliEnv);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toMatch(/Nothing to re-queue/);
  });

  it('leaves every accepted record final after a clean stop, and never twice on at-most-once', async () => {
    const before = scenario.sandbox.messages().length;
    expect(await scenario.runtime.stop()).toEqual({ code: 0, signal: null });
    expect(scenario.sandbox.messages().length).toBe(before);
    const records = await storedRecords(scenario.files.dataDir);
    expect(records.map((record) => record.id).sort()).toEqual([...allIds].sort());
    expect(
      records
        .filter((record) => record.state !== 'SENT' && record.state !== 'UNKNOWN')
        .map((record) => `${record.id} ${record.state}`),
    ).toEqual([]);
    const inbox = inboxCounts(scenario.sandbox);
    const amoTwice = records.filter((record) => record.route === 'amo' && (inbox.get(record.text) ?? 0) > 1);
    expect(amoTwice.map((record) => record.text)).toEqual([]);
    // Every UNKNOWN says why, without the key.
    for (const record of records.filter((each) => each.state === 'UNKNOWN')) {
      expect(record.route).toBe('amo');
      expect(record.reason ?? '').toMatch(/may have been sent/);
      expect(JSON.stringify(record)).not.toContain(scenario.secrets['providerApiKey']!);
    }
  });
});
