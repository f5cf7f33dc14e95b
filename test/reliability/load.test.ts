import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, mapConcurrent } from './support/http';
import { countBy, storedRecords, waitUntil } from './support/records';
import { inboxCounts } from './support/sandbox';
import { runId, type Scenario, startScenario } from './support/scenario';
import { bearerHeaders } from './support/signers';

/**
 * Load: RELIABILITY_LOAD_COUNT (default 10,000) distinct webhooks on a generic at-most-once route
 * at concurrency 64. Every one is accepted and ends SENT; the SMS service receives each text
 * exactly once: nothing lost, nothing twice. Durations are printed, never asserted; the drain
 * deadline only bounds how long a stuck relay can hold the suite.
 */

const COUNT = Number(process.env['RELIABILITY_LOAD_COUNT'] ?? '10000');
const CONCURRENCY = 64;
/** Generous bound for posting and for draining: 100 ms per webhook, at least 3 minutes. */
const DEADLINE_MS = Math.max(180_000, COUNT * 100);

describe(`load: ${COUNT} distinct webhooks at concurrency ${CONCURRENCY}`, () => {
  let scenario: Scenario;
  const run = runId();
  const texts: string[] = [];
  const accepted = new Map<string, string>(); // id → text
  let postedAt = 0;

  beforeAll(async () => {
    if (!Number.isInteger(COUNT) || COUNT < 1)
      throw new Error(
        `RELIABILITY_LOAD_COUNT must be a whole number ≥ 1, got "${process.env['RELIABILITY_LOAD_COUNT']}"`,
      );
    scenario = await startScenario({ label: 'load' });
    for (let index = 0; index < COUNT; index += 1) texts.push(`load ${run} ${index}`);
  });

  afterAll(async () => {
    await scenario?.close();
  });

  it('accepts every webhook with 202', async () => {
    const token = scenario.secrets['generic-token']!;
    const started = Date.now();
    const answers = await mapConcurrent(
      texts,
      CONCURRENCY,
      async (text, index) =>
        await call(scenario.runtime.baseUrl, {
          method: 'POST',
          path: '/hooks/amo',
          headers: { ...bearerHeaders(token), 'idempotency-key': `load-${run}-${index}` },
          body: JSON.stringify({ tag: text }),
          timeoutMs: 60_000,
        }).catch((error: unknown) => ({
          status: 0,
          text: `no answer: ${(error as Error).message}`,
          json: undefined,
          headers: {},
        })),
    );
    postedAt = Date.now();
    const seconds = (postedAt - started) / 1000;
    console.log(`load: ${COUNT} webhooks posted in ${seconds.toFixed(1)} s (${(COUNT / seconds).toFixed(0)}/s)`);

    const refused = answers.flatMap((answer, index) =>
      answer.status === 202 ? [] : [`#${index}: ${answer.status} ${answer.text.slice(0, 160)}`],
    );
    expect(refused.slice(0, 10)).toEqual([]);
    answers.forEach((answer, index) => {
      const ids = answer.json?.['ids'] as string[];
      expect(ids).toHaveLength(1);
      accepted.set(ids[0]!, texts[index]!);
    });
    expect(accepted.size).toBe(COUNT);
  });

  it('sends every accepted webhook exactly once and records it SENT', async () => {
    expect(accepted.size).toBe(COUNT);
    await waitUntil(`all ${COUNT} texts to reach the SMS service`, () => scenario.sandbox.messages().length >= COUNT, {
      timeoutMs: DEADLINE_MS,
      intervalMs: 1_000,
      describe: () => `${scenario.sandbox.messages().length} of ${COUNT} received`,
    });
    const drained = Date.now();
    console.log(`load: drained ${((drained - postedAt) / 1000).toFixed(1)} s after the last 202`);
    expect(await scenario.runtime.stop()).toEqual({ code: 0, signal: null });

    const inbox = inboxCounts(scenario.sandbox);
    const twice = [...inbox.entries()].filter(([, count]) => count > 1);
    expect(twice.slice(0, 10)).toEqual([]);
    const missing = texts.filter((text) => !inbox.has(text));
    expect(missing.slice(0, 10)).toEqual([]);
    expect(scenario.sandbox.messages().length).toBe(COUNT);
    expect(inbox.size).toBe(COUNT);

    const records = await storedRecords(scenario.files.dataDir);
    expect(countBy(records.map((record) => record.state))).toEqual({ SENT: COUNT });
    expect(records.filter((record) => accepted.get(record.id) !== record.text).slice(0, 5)).toEqual([]);
    expect(records.length).toBe(COUNT);
  });
});
