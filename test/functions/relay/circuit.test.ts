import { afterEach, describe, expect, it, vi } from 'vitest';
import { CIRCUIT } from '../../../functions/core/defaults';
import { SendCertainty, SmsErrorCode, SmsOperation, SmsServiceError } from '../../../functions/core/provider';
import { noteServiceAnswered, ServiceSignal, serviceSignal } from '../../../functions/relay/circuit';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState } from '../../../functions/store';
import { countRequests } from '../../helpers/requests';
import { alertBody, bearer, type Harness, harness, SECRETS, secretValues, TestClock, useRelayServers } from './support';

/**
 * The SMS service's circuit, shared by two senders (two relay contexts, as two Lambda containers
 * or a container and the sweeper) on ONE store table in dynalite, against the sandbox.
 */
const servers = useRelayServers({ balance: 1000, rate: 1 });
const POLICY = { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 60_000, staleSendingMs: 120_000 } as const;

let clock: TestClock;
let first: Harness;
let second: Harness;

async function twoSenders(): Promise<void> {
  clock = new TestClock();
  first = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY, clock });
  second = await harness({
    db: servers.db,
    baseUrl: servers.sandbox.baseUrl,
    policy: POLICY,
    clock,
    tableName: first.tableName,
    client: servers.db.newClient(),
  });
}

async function accepted(route = 'alerts-alo'): Promise<string> {
  const response = await first.ingest(route, alertBody(), { headers: bearer(SECRETS.alertsToken) });
  expect(response.status).toBe(202);
  return (response.body['ids'] as string[])[0]!;
}

const outage = async (method: 'POST' | 'DELETE', body?: unknown): Promise<void> => {
  const answer = await fetch(`${servers.sandbox.baseUrl}/_sandbox/outage`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(answer.status).toBe(200);
};
const queuedFaults = async (): Promise<number> =>
  ((await (await fetch(`${servers.sandbox.baseUrl}/_sandbox/faults`)).json()) as { queued: number }).queued;
const requests = (path: string) => servers.sandbox.requests().filter((request) => request.path === path).length;
const sends = () => requests('/v1/sms/send');
const probes = () => requests('/v1/account/balance');

afterEach(async () => {
  await outage('DELETE');
  servers.sandbox.clearFaults();
});

describe('the SMS service circuit, shared by two senders on one store', () => {
  it(`opens after ${CIRCUIT.failuresToOpen} sends fail in a row; then neither sender starts a send, and messages wait PENDING without spending attempts`, async () => {
    await twoSenders();
    await outage('POST', { status: 503 });
    const failed = [await accepted(), await accepted(), await accepted()];
    for (const id of failed) expect(await sendMessage(first.context, id)).toBe(SendOutcome.Retrying);
    expect(first.logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'circuit',
        attributes: expect.objectContaining({ circuit: 'open', failures: 3, lastError: 'server-error 503' }),
      }),
    );
    expect(first.metrics.points).toContainEqual({ name: 'SmsServiceUnreachable', value: 1 });

    // The other sender has never read the circuit: it reads it from the table.
    const waiting = await accepted();
    const sent = sends();
    expect(await sendMessage(second.context, waiting)).toBe(SendOutcome.Waiting);
    expect(await sendMessage(first.context, waiting)).toBe(SendOutcome.Waiting);
    expect(sends()).toBe(sent);
    expect(await first.record(waiting)).toMatchObject({ state: MessageState.Pending, attempts: 0 });
    // The failed ones, due again, wait too: their attempts stay as they were.
    clock.advance(POLICY.baseDelayMs);
    expect(await sendMessage(second.context, failed[0]!)).toBe(SendOutcome.Waiting);
    expect(await first.record(failed[0]!)).toMatchObject({ state: MessageState.Pending, attempts: 1 });
  });

  it('probes the balance endpoint once at a time, at a backoff capped at 30 s, and closes on the first probe that succeeds; then sends go out', async () => {
    await twoSenders();
    await outage('POST', { kind: 'reset' });
    const ids = [await accepted(), await accepted(), await accepted()];
    for (const id of ids) await sendMessage(first.context, id);
    const opened = await first.store.getCircuit();
    expect(opened.openedAt).toBeDefined();

    // Due: both senders (and a sweep) race for it; the service sees one probe.
    clock.now = new Date(opened.nextProbeAt!);
    const before = probes();
    await Promise.all([
      sendMessage(first.context, ids[0]!),
      sendMessage(second.context, ids[1]!),
      sweep(second.context),
    ]);
    expect(probes()).toBe(before + 1);
    const delays: number[] = [];
    for (let probe = 0; probe < 8; probe += 1) {
      const { nextProbeAt, probes: failed } = await first.store.getCircuit();
      delays.push(Date.parse(nextProbeAt!) - clock.now.getTime());
      // Past the balance probes a due probe is kept for a send; no record comes, so the sweep probes the balance once it has waited.
      const keptForSend = failed >= CIRCUIT.balanceProbesBeforeSendProbe ? CIRCUIT.sendProbeWaitMs : 0;
      clock.now = new Date(Date.parse(nextProbeAt!) + keptForSend);
      await sweep(second.context);
    }
    expect(delays.every((delay) => delay <= CIRCUIT.maxProbeMs)).toBe(true);
    expect(delays.at(-1)).toBe(CIRCUIT.maxProbeMs);
    expect(probes()).toBe(before + 9);
    expect(
      second.metrics.points.filter((point) => point.name === 'SmsServiceUnreachable').map((point) => point.value),
    ).toEqual(Array(9).fill(1));

    await outage('DELETE');
    clock.now = new Date((await first.store.getCircuit()).nextProbeAt!);
    // The first sender finds the probe due, probes, closes the circuit and sends.
    expect(await sendMessage(first.context, ids[0]!)).toBe(SendOutcome.Sent);
    expect(first.logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'circuit',
        attributes: expect.objectContaining({ circuit: 'closed', since: opened.openedAt }),
      }),
    );
    expect(first.metrics.points).toContainEqual({ name: 'SmsServiceUnreachable', value: 0 });
    expect((await first.store.getCircuit()).openedAt).toBeUndefined();
    // The second sender reads it closed once its copy is older than CIRCUIT.knownMs.
    clock.advance(CIRCUIT.knownMs);
    expect(await sendMessage(second.context, ids[1]!)).toBe(SendOutcome.Sent);
    expect(await sendMessage(second.context, ids[2]!)).toBe(SendOutcome.Sent);
    expect(await first.store.getCircuit()).toEqual({
      failures: 0,
      probes: 0,
      lastError: 'reset',
      lastFailureAt: expect.any(String),
    });
  });

  it('is kept by each sender for CIRCUIT.knownMs: a sender that read it closed starts sends until its copy expires', async () => {
    await twoSenders();
    const early = await accepted();
    expect(await sendMessage(second.context, early)).toBe(SendOutcome.Sent);
    // The failures come after that send (in a later millisecond), so they are in a row.
    clock.advance(1);
    await outage('POST', { status: 500 });
    for (let count = 0; count < CIRCUIT.failuresToOpen; count += 1) await sendMessage(first.context, await accepted());
    expect((await first.store.getCircuit()).openedAt).toBeDefined();

    const id = await accepted();
    clock.advance(CIRCUIT.knownMs - 2);
    expect(await sendMessage(second.context, id)).toBe(SendOutcome.Retrying);
    clock.advance(1 + POLICY.baseDelayMs);
    expect(await sendMessage(second.context, id)).toBe(SendOutcome.Waiting);
  });

  it('a sender whose copy says closed writes nothing when its send goes through, so a circuit another sender opened since stays open until its probe closes it, which clears the alarm and says so, once', async () => {
    await twoSenders();
    expect(await sendMessage(second.context, await accepted())).toBe(SendOutcome.Sent);
    clock.advance(1);
    servers.sandbox.injectFault({ kind: 'status', status: 503, count: CIRCUIT.failuresToOpen });
    for (let count = 0; count < CIRCUIT.failuresToOpen; count += 1) await sendMessage(first.context, await accepted());
    const opened = await first.store.getCircuit();
    expect(opened.openedAt).toBeDefined();

    // The second sender's copy still says closed: its send goes, and tells the circuit nothing.
    expect(await sendMessage(second.context, await accepted())).toBe(SendOutcome.Sent);
    expect(await first.store.getCircuit()).toEqual(opened);

    // Once its copy has expired it reads the circuit open, and its probe (due by then) closes it.
    clock.advance(CIRCUIT.knownMs);
    expect(Date.parse(opened.nextProbeAt!)).toBeLessThanOrEqual(clock.now.getTime());
    expect(await sendMessage(second.context, await accepted())).toBe(SendOutcome.Sent);
    expect((await first.store.getCircuit()).openedAt).toBeUndefined();
    expect(second.metrics.points).toContainEqual({ name: 'SmsServiceUnreachable', value: 0 });
    const closes = () =>
      second.logger.lines.filter(
        (line) => line.message === 'circuit' && (line.attributes as { circuit?: string })['circuit'] === 'closed',
      ).length;
    expect(closes()).toBe(1);
    expect(await sendMessage(second.context, await accepted())).toBe(SendOutcome.Sent);
    expect(closes()).toBe(1);
  });

  it('never opens on 402s (the service answered: the balance is short), and one 402 ends a run of network failures', async () => {
    await twoSenders();
    // Twice as many 402s in a row as open it on network failures: each parks its message, the circuit stays closed.
    servers.sandbox.injectFault({ kind: 'status', status: 402, count: 2 * CIRCUIT.failuresToOpen });
    for (let count = 0; count < 2 * CIRCUIT.failuresToOpen; count += 1)
      expect(await sendMessage(first.context, await accepted())).toBe(SendOutcome.Parked);
    const after402s = await first.store.getCircuit();
    expect(after402s.openedAt).toBeUndefined();
    expect(after402s.failures).toBe(0);

    // One network failure short of opening, then a 402: the count starts again from nothing.
    servers.sandbox.injectFault({ kind: 'reset', count: CIRCUIT.failuresToOpen - 1 });
    servers.sandbox.injectFault({ kind: 'status', status: 402 });
    servers.sandbox.injectFault({ kind: 'reset', count: CIRCUIT.failuresToOpen - 1 });
    for (let count = 0; count < CIRCUIT.failuresToOpen - 1; count += 1)
      expect(await sendMessage(first.context, await accepted())).toBe(SendOutcome.Retrying);
    expect(await sendMessage(first.context, await accepted())).toBe(SendOutcome.Parked);
    for (let count = 0; count < CIRCUIT.failuresToOpen - 1; count += 1)
      expect(await sendMessage(first.context, await accepted())).toBe(SendOutcome.Retrying);
    const afterReset = await first.store.getCircuit();
    expect(afterReset.openedAt).toBeUndefined();
    expect(afterReset.failures).toBe(CIRCUIT.failuresToOpen - 1);

    // The other sender reads the circuit closed and sends.
    const sent = sends();
    expect(await sendMessage(second.context, await accepted())).toBe(SendOutcome.Sent);
    expect(sends()).toBe(sent + 1);
  });

  it('re-opens at the first failed send after a probe closed it (the balance endpoint answers, sends fail)', async () => {
    await twoSenders();
    servers.sandbox.injectFault({ kind: 'status', status: 503, count: 100 });
    for (let count = 0; count < CIRCUIT.failuresToOpen; count += 1)
      await sendMessage(first.context, await accepted('alerts'));
    const { openedAt, nextProbeAt } = await first.store.getCircuit();
    clock.now = new Date(nextProbeAt!);
    const id = await accepted('alerts');
    // The probe succeeds; the send after it fails and re-opens it at once.
    expect(await sendMessage(first.context, id)).toBe(SendOutcome.Unknown);
    const again = await first.store.getCircuit();
    expect(again.openedAt).not.toBe(openedAt);
    expect(again.openedAt).toBeDefined();
    expect(Date.parse(again.nextProbeAt!) - clock.now.getTime()).toBe(2 * CIRCUIT.firstProbeMs);
  });

  it('after a probe closes it, lets exactly one send through until one goes through: at-most-once messages end UNKNOWN one per probe, not a batch', async () => {
    await twoSenders();
    servers.sandbox.injectFault({ kind: 'status', status: 503, count: 100 });
    for (let count = 0; count < CIRCUIT.failuresToOpen; count += 1)
      await sendMessage(first.context, await accepted('alerts'));
    clock.now = new Date((await first.store.getCircuit()).nextProbeAt!);
    // The sweep's probe finds the balance endpoint answering: closed on probation.
    await sweep(second.context);
    expect((await first.store.getCircuit()).openedAt).toBeUndefined();
    const waiting = [];
    for (let count = 0; count < 8; count += 1) waiting.push(await accepted('alerts'));

    const sent = sends();
    const outcomes = await Promise.all(
      waiting.map((id, index) => sendMessage((index % 2 === 0 ? first : second).context, id)),
    );
    expect(sends()).toBe(sent + 1);
    expect(outcomes.filter((outcome) => outcome === SendOutcome.Unknown)).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === SendOutcome.Waiting)).toHaveLength(7);
    expect((await first.store.getCircuit()).openedAt).toBeDefined();
    const states = await Promise.all(waiting.map(async (id) => (await first.record(id))?.state));
    expect(states.filter((state) => state === MessageState.Pending)).toHaveLength(7);
  });

  it('after a probe closes it, sends go one at a time until one goes through; then all of them go', async () => {
    await twoSenders();
    await outage('POST', { status: 503 });
    for (let count = 0; count < CIRCUIT.failuresToOpen; count += 1)
      await sendMessage(first.context, await accepted('alerts'));
    await outage('DELETE');
    clock.now = new Date((await first.store.getCircuit()).nextProbeAt!);
    await sweep(second.context);
    const waiting = [];
    for (let count = 0; count < 6; count += 1) waiting.push(await accepted('alerts'));
    // A slow trial: the others wait for it.
    servers.sandbox.injectFault({ kind: 'delay', ms: 300 });
    const trial = sendMessage(first.context, waiting[0]!);
    // The trial is at the service once it has taken the delay.
    await vi.waitFor(async () => expect(await queuedFaults()).toBe(0));
    expect(await sendMessage(second.context, waiting[1]!)).toBe(SendOutcome.Waiting);
    expect(await trial).toBe(SendOutcome.Sent);
    // Through: the circuit is closed for good, and the rest go at once.
    expect(await first.store.getCircuit()).toMatchObject({ failures: 0, probes: 0 });
    expect((await first.store.getCircuit()).probationSince).toBeUndefined();
    const rest = await Promise.all(waiting.slice(1).map((id) => sendMessage(second.context, id)));
    expect(rest).toEqual(Array(5).fill(SendOutcome.Sent));
  });

  it(`after ${CIRCUIT.balanceProbesBeforeSendProbe} failed balance probes, probes with one real send of an at-least-once record, which closes it when the balance endpoint fails but sends work`, async () => {
    await twoSenders();
    await outage('POST', { status: 503 });
    for (let count = 0; count < CIRCUIT.failuresToOpen; count += 1)
      await sendMessage(first.context, await accepted('alerts'));
    // The balance endpoint stays down; sends work again.
    await outage('POST', { status: 503, only: 'balance' });
    for (let probe = 0; probe < CIRCUIT.balanceProbesBeforeSendProbe; probe += 1) {
      clock.now = new Date((await first.store.getCircuit()).nextProbeAt!);
      await sweep(second.context);
    }
    const opened = await first.store.getCircuit();
    expect(opened.probes).toBe(CIRCUIT.balanceProbesBeforeSendProbe);
    clock.now = new Date(opened.nextProbeAt!);
    // The sweep leaves the due probe to a send.
    const probesBefore = probes();
    await sweep(second.context);
    expect(probes()).toBe(probesBefore);
    // An at-most-once record is not a probe: it waits.
    const order = await accepted('alerts');
    const sent = sends();
    expect(await sendMessage(second.context, order)).toBe(SendOutcome.Waiting);
    expect(sends()).toBe(sent);
    // An at-least-once one is: it goes through and closes the circuit for every send.
    const alert = await accepted('alerts-alo');
    expect(await sendMessage(second.context, alert)).toBe(SendOutcome.Sent);
    expect(sends()).toBe(sent + 1);
    expect((await first.store.getCircuit()).openedAt).toBeUndefined();
    expect(second.logger.lines).toContainEqual(
      expect.objectContaining({ message: 'circuit', attributes: expect.objectContaining({ circuit: 'closed' }) }),
    );
    // The send that closed it clears the SmsServiceUnreachable alarm.
    expect(second.metrics.points).toContainEqual({ name: 'SmsServiceUnreachable', value: 0 });
    clock.advance(CIRCUIT.knownMs);
    expect(await sendMessage(first.context, order)).toBe(SendOutcome.Sent);
  });

  it('closes on a probe the service answers with an error (a refused key): the service is up, SMS no longer wait for it', async () => {
    await twoSenders();
    await outage('POST', { kind: 'reset' });
    for (let count = 0; count < CIRCUIT.failuresToOpen; count += 1)
      await sendMessage(first.context, await accepted('alerts'));
    await outage('DELETE');
    // A sender whose provider key the service refuses: its balance probe is answered 401.
    const refused = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      policy: POLICY,
      clock,
      tableName: first.tableName,
      secrets: secretValues({ providerApiKey: 'not-the-service-key' }),
    });
    clock.now = new Date((await first.store.getCircuit()).nextProbeAt!);
    const before = probes();
    await sweep(refused.context);
    expect(probes()).toBe(before + 1);
    expect((await first.store.getCircuit()).openedAt).toBeUndefined();
    expect(refused.metrics.points).toContainEqual({ name: 'SmsServiceUnreachable', value: 0 });
  });

  it('a failed send probe moves the next probe out; with no record to send, the balance is probed once the probe has waited', async () => {
    await twoSenders();
    await outage('POST', { status: 503 });
    for (let count = 0; count < CIRCUIT.failuresToOpen; count += 1)
      await sendMessage(first.context, await accepted('alerts'));
    for (let probe = 0; probe < CIRCUIT.balanceProbesBeforeSendProbe; probe += 1) {
      clock.now = new Date((await first.store.getCircuit()).nextProbeAt!);
      await sweep(second.context);
    }
    clock.now = new Date((await first.store.getCircuit()).nextProbeAt!);
    const alert = await accepted('alerts-alo');
    expect(await sendMessage(first.context, alert)).toBe(SendOutcome.Retrying);
    const after = await first.store.getCircuit();
    expect(after).toMatchObject({ probes: CIRCUIT.balanceProbesBeforeSendProbe + 1 });
    expect(Date.parse(after.nextProbeAt!) - clock.now.getTime()).toBe(CIRCUIT.maxProbeMs);
    // Nothing to send: past the wait, the sweep probes the balance again.
    const before = probes();
    clock.now = new Date(Date.parse(after.nextProbeAt!) + CIRCUIT.sendProbeWaitMs);
    await sweep(second.context);
    expect(probes()).toBe(before + 1);
  });

  it('failures of different senders with successes of another between them never open it', async () => {
    await twoSenders();
    const third = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      policy: POLICY,
      clock,
      tableName: first.tableName,
      client: servers.db.newClient(),
    });
    // A few per cent of 5xx at a high rate, compressed: two senders fail now and then, a third
    // sends the rest; no sender re-reads the circuit in between (all within CIRCUIT.knownMs), and
    // the third, which knows of no failure, writes nothing to it.
    for (let round = 0; round < 4; round += 1) {
      for (const failing of [first, second]) {
        servers.sandbox.injectFault({ kind: 'status', status: 503 });
        clock.advance(1);
        expect(await sendMessage(failing.context, await accepted('alerts-alo'))).toBe(SendOutcome.Retrying);
        clock.advance(1);
        expect(await sendMessage(third.context, await accepted('alerts-alo'))).toBe(SendOutcome.Sent);
      }
    }
    expect((await first.store.getCircuit()).openedAt).toBeUndefined();
    const points = [...first.metrics.points, ...second.metrics.points, ...third.metrics.points];
    expect(points).not.toContainEqual({ name: 'SmsServiceUnreachable', value: 1 });
    // Nothing opened, so nothing closed: no send announces a close that did not happen.
    expect(points).not.toContainEqual({ name: 'SmsServiceUnreachable', value: 0 });
    expect([...first.logger.lines, ...second.logger.lines, ...third.logger.lines]).not.toContainEqual(
      expect.objectContaining({ message: 'circuit' }),
    );
  });

  it('sends of one sender that go through at once share one reset; one that goes through while a reset is under way gets its own after it, so a failure another sender counted in between is reset', async () => {
    await twoSenders();
    const client = servers.db.newClient();
    const requests = countRequests(client);
    const counted = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      policy: POLICY,
      clock,
      tableName: first.tableName,
      client,
    });
    await Promise.all(Array.from({ length: 6 }, async () => await noteServiceAnswered(counted.context)));
    expect(requests.byCommand()).toEqual({ UpdateItem: 1 });

    // A reset whose write is done but whose answer is held: it is still under way for its sender.
    const { circuit } = counted.store;
    let written = 0;
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const store = {
      ...counted.store,
      circuit: {
        ...circuit,
        succeeded: async (input?: Parameters<typeof circuit.succeeded>[0]) => {
          const outcome = await circuit.succeeded(input);
          written += 1;
          await held;
          return outcome;
        },
      },
    };
    const context = { ...counted.context, store };
    const underWay = noteServiceAnswered(context);
    await vi.waitFor(() => expect(written).toBe(1));
    await second.store.circuit.failed({
      threshold: CIRCUIT.failuresToOpen,
      firstProbeAt: () => clock.now,
      error: 'server-error 503',
      now: clock.now,
    });
    expect((await first.store.getCircuit()).failures).toBe(1);
    const after = noteServiceAnswered(context);
    letGo();
    await Promise.all([underWay, after]);
    expect(written).toBe(2);
    expect((await first.store.getCircuit()).failures).toBe(0);
  });

  it('a 429 never opens it and makes no message UNKNOWN: an at-most-once message is sent again after its Retry-After', async () => {
    await twoSenders();
    servers.sandbox.injectFault({ kind: 'status', status: 429, count: 5, retryAfter: 7 });
    const ids = [];
    for (let count = 0; count < 5; count += 1) ids.push(await accepted('alerts'));
    const retries: Date[] = [];
    for (const id of ids)
      expect(await sendMessage(first.context, id, { onRetry: (at) => retries.push(at) })).toBe(SendOutcome.Retrying);
    expect(retries.map((at) => at.getTime() - clock.now.getTime())).toEqual(Array(5).fill(7_000));
    expect(await first.store.getCircuit()).toMatchObject({ failures: 0 });
    expect((await first.store.getCircuit()).openedAt).toBeUndefined();
    expect(await first.record(ids[0]!)).toMatchObject({
      state: MessageState.Pending,
      lastError: expect.objectContaining({ status: 429, delivery: 'not-sent' }),
    });
    clock.advance(7_000);
    const delivered = servers.sandbox.messages().length;
    for (const id of ids) expect(await sendMessage(second.context, id)).toBe(SendOutcome.Sent);
    expect(servers.sandbox.messages().length).toBe(delivered + 5);
  });
});

describe('what a failure says about the SMS service', () => {
  const smsError = (code: SmsErrorCode, status?: number) =>
    new SmsServiceError('test', { operation: SmsOperation.SEND, code, delivery: SendCertainty.NOT_SENT, status });

  it("counts only the SMS client's own failures: a bug or a store error never opens the circuit", () => {
    expect(serviceSignal(new Error('ConditionalCheckFailed'))).toBe(ServiceSignal.None);
    expect(serviceSignal(smsError(SmsErrorCode.VALIDATION))).toBe(ServiceSignal.None);
    expect(serviceSignal(smsError(SmsErrorCode.INSUFFICIENT_BALANCE, 402))).toBe(ServiceSignal.Answered);
    expect(serviceSignal(smsError(SmsErrorCode.SERVER_ERROR, 503))).toBe(ServiceSignal.Unreachable);
    expect(serviceSignal(smsError(SmsErrorCode.NETWORK))).toBe(ServiceSignal.Unreachable);
  });
});
