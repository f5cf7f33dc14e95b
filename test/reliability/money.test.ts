import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configYaml, newSecrets, RECIPIENT, type RouteInput, TAG_TEMPLATE } from './support/config';
import { call, closeIdleSockets, type HttpAnswer, mapConcurrent } from './support/http';
import { countBy, liveRecords, storedRecords, waitForFinal } from './support/records';
import { runCli, type Runtime, scratchDir, startRuntime, writeRuntimeFiles } from './support/runtime';
import {
  type BalanceOutage,
  inboxCounts,
  startBalanceOutage,
  startTestSandbox,
  type TestSandbox,
} from './support/sandbox';
import { runId, type Scenario, startScenario } from './support/scenario';
import { bearerHeaders, githubHeaders, type Headers, hmacRouteHeaders } from './support/signers';
import { bodyFor } from './support/webhooks';

/**
 * Money and lost messages, against the local runtime and the sandbox:
 * - a replay under a fresh, unsigned delivery id is a duplicate and leaves that id free, so the
 *   genuine delivery carrying it is accepted and sent, also when the two race;
 * - `balance.reserve` holds under a burst of concurrent sends: normal routes park instead of
 *   spending the reserve, critical routes still send;
 * - `sms-relay redrive --state PARKED` after a top-up the relay was not told of sends each parked
 *   message once;
 * - a check before the send that keeps failing (the balance unreadable on a fresh store) ends the
 *   record FAILED after the attempts, with the reason, instead of retrying it for ever.
 */

const SETTLE_MS = 120_000;
/** Replay and genuine delivery posted at the same moment, per source. */
const RACE_ROUNDS = 20;

/** Posts one request; a transport error becomes status 0 with what happened, so the assertion says it. */
async function post(runtime: Runtime, route: string, headers: Headers, body: string): Promise<HttpAnswer> {
  return await call(runtime.baseUrl, { method: 'POST', path: `/hooks/${route}`, headers, body }).catch(
    (error: unknown): HttpAnswer => ({
      status: 0,
      text: `no answer: ${(error as Error).message}`,
      json: undefined,
      headers: {},
    }),
  );
}

const summary = (answer: HttpAnswer): { status: number; body: unknown } => ({
  status: answer.status,
  body: answer.json ?? answer.text,
});
const idsOf = (answer: HttpAnswer): string[] => (answer.json?.['ids'] as string[] | undefined) ?? [];

describe('replays under fresh delivery ids do not poison those ids (item 1)', () => {
  let scenario: Scenario;
  const run = runId();
  /** Every genuine delivery's text: each must reach the SMS service exactly once. */
  const genuineTags: string[] = [];
  const genuineIds: string[] = [];

  beforeAll(async () => {
    scenario = await startScenario({ label: 'money-replay' });
  });

  afterAll(async () => {
    await scenario?.close();
  });

  /** A new payment on the `hmac` route (dedupe.header X-Delivery-Id), signed now. */
  const payment = (tag: string, delivery: string): { headers: Headers; body: string } => {
    const body = bodyFor('hmac', tag);
    return { body, headers: hmacRouteHeaders(scenario.secrets['hmac-secret']!, body, { delivery }) };
  };
  /** A new push on the `github` route. */
  const push = (tag: string, delivery: string): { headers: Headers; body: string } => {
    const body = bodyFor('github', tag);
    return { body, headers: githubHeaders(scenario.secrets['github-secret']!, body, { delivery, event: 'push' }) };
  };

  const accept = (tag: string, answer: HttpAnswer): void => {
    expect(summary(answer), tag).toMatchObject({ status: 202 });
    genuineTags.push(tag);
    genuineIds.push(...idsOf(answer));
  };

  it('hmac with sequential ids: seq 100 replayed as 101–103 is a duplicate each time; new payments 101–103 are accepted', async () => {
    const first = payment(`pay ${run} 100`, '100');
    const accepted = await post(scenario.runtime, 'hmac', first.headers, first.body);
    accept(`pay ${run} 100`, accepted);

    for (const seq of ['101', '102', '103']) {
      // The attacker's copy: the same signed body and timestamp, only the unsigned id changed.
      const replay = await post(scenario.runtime, 'hmac', { ...first.headers, 'x-delivery-id': seq }, first.body);
      expect(summary(replay), `replay as ${seq}`).toEqual({
        status: 200,
        body: { status: 'duplicate', ids: idsOf(accepted) },
      });
    }
    for (const seq of ['101', '102', '103']) {
      const genuine = payment(`pay ${run} ${seq}`, seq);
      accept(`pay ${run} ${seq}`, await post(scenario.runtime, 'hmac', genuine.headers, genuine.body));
    }
  });

  it('GitHub: delivery A replayed as id B is a duplicate; a new push with id B is accepted', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const original = push(`push ${run} A`, a);
    const accepted = await post(scenario.runtime, 'github', original.headers, original.body);
    accept(`push ${run} A`, accepted);

    const replay = await post(
      scenario.runtime,
      'github',
      { ...original.headers, 'x-github-delivery': b },
      original.body,
    );
    expect(summary(replay)).toEqual({ status: 200, body: { status: 'duplicate', ids: idsOf(accepted) } });

    const genuine = push(`push ${run} B`, b);
    accept(`push ${run} B`, await post(scenario.runtime, 'github', genuine.headers, genuine.body));
  });

  it(`a replay racing the genuine delivery that carries the same fresh id: the genuine one is accepted, ${RACE_ROUNDS} times per source`, async () => {
    const problems: string[] = [];
    for (const [route, make, idHeader] of [
      ['hmac', payment, 'x-delivery-id'],
      ['github', push, 'x-github-delivery'],
    ] as const) {
      // The attacker replays the latest delivery it saw; each round's genuine delivery is the next one.
      let previous = make(`race ${run} ${route} start`, `${route}-race-start`);
      let previousAnswer = await post(scenario.runtime, route, previous.headers, previous.body);
      accept(`race ${run} ${route} start`, previousAnswer);
      for (let round = 0; round < RACE_ROUNDS; round += 1) {
        const id = route === 'hmac' ? String(1_000 + round) : randomUUID();
        const tag = `race ${run} ${route} ${round}`;
        const genuine = make(tag, id);
        const [replayed, answered] = await Promise.all([
          post(scenario.runtime, route, { ...previous.headers, [idHeader]: id }, previous.body),
          post(scenario.runtime, route, genuine.headers, genuine.body),
        ]);
        if (answered.status !== 202) problems.push(`${tag}: genuine answered ${JSON.stringify(summary(answered))}`);
        const expected = { status: 200, body: { status: 'duplicate', ids: idsOf(previousAnswer) } };
        if (JSON.stringify(summary(replayed)) !== JSON.stringify(expected))
          problems.push(`${tag}: replay answered ${JSON.stringify(summary(replayed))}`);
        if (answered.status === 202) {
          genuineTags.push(tag);
          genuineIds.push(...idsOf(answered));
        }
        previous = genuine;
        previousAnswer = answered;
        if (answered.status !== 202) break; // nothing genuine left to replay
      }
    }
    expect(problems).toEqual([]);
  });

  it('sends every genuine delivery exactly once and nothing for the replays', async () => {
    expect(genuineTags.length).toBe(4 + 2 + 2 * (RACE_ROUNDS + 1));
    const records = await waitForFinal(scenario.runtime, genuineIds, SETTLE_MS);
    expect(countBy(genuineIds.map((id) => records.get(id)!.state))).toEqual({ SENT: genuineIds.length });
    // No record beyond the genuine ones: the replays wrote nothing.
    const all = [
      ...(await liveRecords(scenario.runtime, 'hmac')).keys(),
      ...(await liveRecords(scenario.runtime, 'github')).keys(),
    ];
    expect(all.sort()).toEqual([...genuineIds].sort());
    const inbox = inboxCounts(scenario.sandbox);
    expect(genuineTags.filter((tag) => inbox.get(tag) !== 1).map((tag) => `${tag}: ${inbox.get(tag) ?? 0}`)).toEqual(
      [],
    );
    expect(scenario.sandbox.messages()).toHaveLength(genuineTags.length);
  });
});

/** The figures: 400 credits, a reserve of 200, 20 credits per SMS, a burst of 30. */
const START_BALANCE = 400;
const RESERVE = 200;
const RATE = 20;
const BURST = 30;

describe('balance.reserve under concurrency, and a redrive after a top-up (items 3 and 4)', () => {
  let scenario: Scenario;
  const run = runId();
  const shop = new Map<string, string>();

  const routes: Record<string, RouteInput> = {
    shop: { source: 'generic', secret: 'generic-token', recipients: [RECIPIENT], template: TAG_TEMPLATE },
    pager: {
      source: 'generic',
      secret: 'generic-token',
      recipients: [RECIPIENT],
      template: TAG_TEMPLATE,
      priority: 'critical',
    },
  };

  beforeAll(async () => {
    scenario = await startScenario({
      label: 'money-reserve',
      routes,
      balance: START_BALANCE,
      rate: RATE,
      // A daily watch: the balance is read at start, and after that only by the sends and the redrive.
      balanceWatch: { threshold: RESERVE + 10, reserve: RESERVE, schedule: 'rate(1 day)' },
    });
  });

  afterAll(async () => {
    await scenario?.close();
  });

  const postTag = async (route: 'shop' | 'pager', tag: string): Promise<HttpAnswer> =>
    await post(
      scenario.runtime,
      route,
      { ...bearerHeaders(scenario.secrets['generic-token']!), 'idempotency-key': `${route}-${tag}` },
      JSON.stringify({ tag }),
    );

  it(`${BURST} concurrent webhooks on a normal route with ${START_BALANCE} credits, a reserve of ${RESERVE} and ${RATE} per SMS: at most 10 sent, the rest PARKED`, async () => {
    const tags = Array.from({ length: BURST }, (_, n) => `order ${run} ${n}`);
    await mapConcurrent(tags, BURST, async (tag) => {
      const answer = await postTag('shop', tag);
      expect(summary(answer), tag).toMatchObject({ status: 202 });
      for (const id of idsOf(answer)) shop.set(id, tag);
    });

    const records = await waitForFinal(scenario.runtime, [...shop.keys()], SETTLE_MS, 'shop');
    const states = countBy([...shop.keys()].map((id) => records.get(id)!.state));
    const sent = states['SENT'] ?? 0;
    console.log(`money: reserve burst: ${JSON.stringify(states)}, sandbox balance ${scenario.sandbox.balance()}`);
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual((START_BALANCE - RESERVE) / RATE);
    expect(states).toEqual({ SENT: sent, PARKED: BURST - sent });
    for (const id of shop.keys()) {
      if (records.get(id)!.state === 'PARKED')
        expect(records.get(id)!.reason).toMatch(
          /^balance reserve: 20 credits would leave \d+, below the reserve of 200 kept for critical routes/,
        );
    }
    // Never below the reserve, after any send: each send's answer says what it left.
    const left = scenario.sandbox.messages().map((message) => message.remainingBalance);
    expect(left).toHaveLength(sent);
    expect(Math.min(...left)).toBeGreaterThanOrEqual(RESERVE);
    expect(scenario.sandbox.balance()).toBeGreaterThanOrEqual(RESERVE);
    expect(inboxCounts(scenario.sandbox).size).toBe(sent);
  });

  it('a critical route still sends, from the reserve', async () => {
    const tag = `pager ${run}`;
    const answer = await postTag('pager', tag);
    expect(summary(answer)).toMatchObject({ status: 202 });
    const records = await waitForFinal(scenario.runtime, idsOf(answer), SETTLE_MS, 'pager');
    expect(records.get(idsOf(answer)[0]!)?.state).toBe('SENT');
    expect(inboxCounts(scenario.sandbox).get(tag)).toBe(1);
  });

  it('after a top-up in the dashboard, `sms-relay redrive --state PARKED` sends each parked message exactly once; none is parked again', async () => {
    const parked = [...(await liveRecords(scenario.runtime, 'shop')).values()]
      .filter((record) => record.state === 'PARKED')
      .map((record) => record.id);
    expect(parked.length).toBeGreaterThan(0);
    scenario.sandbox.setBalance(10_000); // the relay is not told
    const balanceReads = () =>
      scenario.sandbox.requests().filter((request) => request.path === '/v1/account/balance').length;
    const readsBefore = balanceReads();

    const redrive = await runCli('money-redrive', ['redrive', '--state', 'PARKED'], scenario.runtime.cliEnv);
    expect(redrive.code, redrive.output).toBe(0);
    expect(redrive.output).toContain(`Re-queued ${parked.length} of ${parked.length} PARKED`);

    const records = await waitForFinal(scenario.runtime, parked, SETTLE_MS, 'shop');
    expect(
      parked
        .filter((id) => records.get(id)!.state !== 'SENT')
        .map((id) => `${id} ${records.get(id)!.state}: ${records.get(id)!.reason}`),
    ).toEqual([]);
    const inbox = inboxCounts(scenario.sandbox);
    expect(
      [...shop.values()].filter((tag) => inbox.get(tag) !== 1).map((tag) => `${tag}: ${inbox.get(tag) ?? 0}`),
    ).toEqual([]);
    // One balance read for the redrive (the sends of one process share it), not one per message.
    expect(balanceReads() - readsBefore).toBe(1);

    // From the store itself: each redriven record was parked once, then sent once.
    expect(await scenario.runtime.stop()).toEqual({ code: 0, signal: null });
    const stored = (await storedRecords(scenario.files.dataDir)).filter((record) => record.route === 'shop');
    expect(countBy(stored.map((record) => record.state))).toEqual({ SENT: BURST });
    const parkedAgain = stored
      .filter((record) => parked.includes(record.id))
      .map((record) => ({ id: record.id, parked: record.history.filter((change) => change.state === 'PARKED').length }))
      .filter((each) => each.parked !== 1);
    expect(parkedAgain).toEqual([]);
    expect(scenario.sandbox.messages().length).toBe(BURST + 1);
  });
});

describe('a check before the send that keeps failing ends FAILED after the attempts (item 2)', () => {
  const MAX_ATTEMPTS = 3;
  let sandbox: TestSandbox['sandbox'];
  let outage: BalanceOutage;
  let runtime: Runtime;
  let dir: string;
  let secrets: Record<string, string>;

  beforeAll(async () => {
    secrets = newSecrets();
    ({ sandbox } = await startTestSandbox(secrets['providerApiKey']!));
    // Sends would work; the balance, needed first on a store that has never seen one, cannot be read.
    outage = await startBalanceOutage(sandbox.baseUrl);
    dir = scratchDir('money-unreadable');
    const routes: Record<string, RouteInput> = {
      shop: { source: 'generic', secret: 'generic-token', recipients: [RECIPIENT], template: TAG_TEMPLATE },
    };
    const files = writeRuntimeFiles(
      dir,
      configYaml({ routes, balanceWatch: { threshold: 210, reserve: 200, schedule: 'rate(1 day)' } }),
      secrets,
    );
    runtime = await startRuntime({
      files,
      providerBaseUrl: outage.baseUrl,
      providerApiKey: secrets['providerApiKey']!,
      env: { RETRY_MAX_ATTEMPTS: String(MAX_ATTEMPTS), RETRY_BASE_DELAY_MS: '200', SWEEP_PENDING_GRACE_MS: '0' },
      label: 'money-unreadable',
    });
  });

  afterAll(async () => {
    try {
      if (runtime?.alive()) await runtime.kill();
    } finally {
      closeIdleSockets();
      await outage?.close();
      await sandbox?.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`the balance endpoint down on a fresh store with a reserve: FAILED after ${MAX_ATTEMPTS} attempts with the reason, nothing sent`, async () => {
    const tag = `unreadable ${runId()}`;
    const answer = await post(
      runtime,
      'shop',
      { ...bearerHeaders(secrets['generic-token']!), 'idempotency-key': tag },
      JSON.stringify({ tag }),
    );
    expect(summary(answer)).toMatchObject({ status: 202 });
    const [id] = idsOf(answer);

    const record = (await waitForFinal(runtime, [id!], 60_000, 'shop')).get(id!)!;
    expect({ state: record.state, attempts: record.attempts }).toEqual({ state: 'FAILED', attempts: MAX_ATTEMPTS });
    expect(record.reason).toMatch(
      new RegExp(
        `^not sent after ${MAX_ATTEMPTS} attempts: failed before sending: the balance could not be read \\(.+\\)$`,
      ),
    );
    expect(outage.refused()).toBeGreaterThanOrEqual(MAX_ATTEMPTS);
    expect(sandbox.messages()).toHaveLength(0);

    // The record in the store: final, its history a handful of changes (not one per round for ever).
    expect(await runtime.stop()).toEqual({ code: 0, signal: null });
    const [stored] = (await storedRecords(runtime.files.dataDir)).filter((each) => each.id === id);
    expect(stored?.state).toBe('FAILED');
    expect(stored!.history.length).toBeLessThanOrEqual(2 * MAX_ATTEMPTS + 2);
  });
});
