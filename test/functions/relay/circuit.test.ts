import { afterEach, describe, expect, it } from 'vitest';
import { CIRCUIT } from '../../../functions/core/defaults';
import { SendCertainty, SmsErrorCode, SmsOperation, SmsServiceError } from '../../../functions/core/provider';
import { ServiceSignal, serviceSignal } from '../../../functions/relay/circuit';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState } from '../../../functions/store';
import { alertBody, bearer, type Harness, harness, SECRETS, TestClock, useRelayServers } from './support';

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
      const { nextProbeAt } = await first.store.getCircuit();
      delays.push(Date.parse(nextProbeAt!) - clock.now.getTime());
      clock.now = new Date(nextProbeAt!);
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
    expect(await first.store.getCircuit()).toEqual({ failures: 0, probes: 0, lastError: 'reset' });
  });

  it('is kept by each sender for CIRCUIT.knownMs: a sender that read it closed starts sends until its copy expires', async () => {
    await twoSenders();
    const early = await accepted();
    expect(await sendMessage(second.context, early)).toBe(SendOutcome.Sent);
    await outage('POST', { status: 500 });
    for (let count = 0; count < CIRCUIT.failuresToOpen; count += 1) await sendMessage(first.context, await accepted());
    expect((await first.store.getCircuit()).openedAt).toBeDefined();

    const id = await accepted();
    clock.advance(CIRCUIT.knownMs - 1);
    expect(await sendMessage(second.context, id)).toBe(SendOutcome.Retrying);
    clock.advance(1 + POLICY.baseDelayMs);
    expect(await sendMessage(second.context, id)).toBe(SendOutcome.Waiting);
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
