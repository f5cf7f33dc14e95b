import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { reasonText } from '../../../functions/core/reasons';
import { recordEscalations } from '../../../functions/relay/paging';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { checkBalance } from '../../../functions/relay/balance';
import { NOTICE_ROUTE } from '../../../functions/relay/ports';
import { sweep } from '../../../functions/relay/sweeper';
import { ClaimLostError, MessageState, NoticeKind } from '../../../functions/store';
import { noticeMessage } from '../../../functions/relay/notice';
import type { SandboxFault } from '../../../local/sandbox/types';
import { expectNoLeaks } from './leaks';
import {
  alertBody,
  bearer,
  closedPort,
  type Harness,
  harness,
  type HarnessOptions,
  ONCALL,
  OPS,
  SECRETS,
  secretValues,
  useRelayServers,
} from './support';

const servers = useRelayServers({ balance: 1000, rate: 1 });
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const POLICY = { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 60_000, staleSendingMs: 120_000 } as const;

async function start(options: Partial<HarnessOptions> = {}): Promise<Harness> {
  relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY, ...options });
  return relay;
}

/** Ingests one new alert on `route` and returns its message id. */
async function accepted(route = 'alerts'): Promise<string> {
  const response = await relay.ingest(route, alertBody(), { headers: bearer(SECRETS.alertsToken) });
  expect(response.status).toBe(202);
  return (response.body['ids'] as string[])[0]!;
}

const sends = () => servers.sandbox.requests().filter((request) => request.path === '/v1/sms/send');

describe('sendMessage', () => {
  it('sends a PENDING message once and records the service answer', async () => {
    await start();
    const id = await accepted();

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Sent);

    expect(servers.sandbox.messages()).toEqual([
      expect.objectContaining({
        phoneNumbers: [ONCALL],
        message: '[FIRING] DiskAlmostFull: Disk /var/lib/postgresql on db-01 is 94% full',
        senderId: 'ALERTS',
        deducted: 1,
        remainingBalance: 999,
      }),
    ]);
    const record = await relay.record(id);
    expect(record).toMatchObject({
      state: MessageState.Sent,
      attempts: 1,
      result: { deducted: 1, remainingBalance: 999, senderId: 'ALERTS' },
    });
    expect(record.claimToken).toBeUndefined();
    expect(relay.metrics.points).toEqual(
      expect.arrayContaining([
        { name: 'Sent', value: 1, route: 'alerts' },
        { name: 'Segments', value: 1, route: 'alerts' },
        { name: 'CreditsSpent', value: 1, route: 'alerts' },
        { name: 'RemainingBalance', value: 999 },
      ]),
    );
    expect(await relay.store.spendLastDays(1, relay.clock.now)).toBe(1);

    // A redelivered stream record, or the sweeper, finds it settled.
    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Skipped);
    expect(servers.sandbox.messages()).toHaveLength(1);
  });

  it('sends exactly one SMS when ten senders race for the same message', async () => {
    await start();
    const id = await accepted();

    const outcomes = await Promise.all(Array.from({ length: 10 }, () => sendMessage(relay.context, id)));

    expect(outcomes.filter((outcome) => outcome === SendOutcome.Sent)).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === SendOutcome.Skipped)).toHaveLength(9);
    expect(servers.sandbox.messages()).toHaveLength(1);
    expect((await relay.record(id)).attempts).toBe(1);
  });

  it('parks a message the balance does not cover, and sends it after a top-up and a redrive', async () => {
    await start();
    servers.sandbox.setBalance(0);
    const id = await accepted();

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Parked);
    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Parked,
      lastError: { status: 402, delivery: 'not-sent' },
    });
    expect(servers.sandbox.messages()).toHaveLength(0);
    expect(relay.metrics.total('Parked', 'alerts')).toBe(1);

    // A parked message stays parked until an operator redrives it.
    expect((await sweep(relay.context)).sent).toEqual({});

    servers.sandbox.setBalance(100);
    relay.clock.advance(60_000);
    expect(await relay.store.requeue(id, { from: MessageState.Parked, now: relay.clock.now })).toBeDefined();
    expect((await sweep(relay.context)).sent).toEqual({ sent: 1 });

    expect(await relay.record(id)).toMatchObject({ state: MessageState.Sent, redrives: 1, attempts: 1 });
    expect(servers.sandbox.messages()).toHaveLength(1);
  });

  it('measures DeliveryLatency from acceptance to SENT for the route, retries included, once per message', async () => {
    await start();
    const id = await accepted();
    relay.clock.advance(42_000);

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Sent);
    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Skipped);

    const latencies = relay.metrics.points.filter((point) => point.name === 'DeliveryLatency');
    expect(latencies).toEqual([{ name: 'DeliveryLatency', value: 42_000, route: 'alerts' }]);
  });

  it("leaves a redriven message's wait out of DeliveryLatency: it waited for a person, not for the relay", async () => {
    await start();
    servers.sandbox.setBalance(0);
    const id = await accepted();
    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Parked);
    servers.sandbox.setBalance(100);
    relay.clock.advance(3_600_000);
    expect(await relay.store.requeue(id, { from: MessageState.Parked, now: relay.clock.now })).toBeDefined();

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Sent);
    expect(relay.metrics.total('Sent', 'alerts')).toBe(1);
    expect(relay.metrics.points.filter((point) => point.name === 'DeliveryLatency')).toEqual([]);
  });

  describe('after an ambiguous failure (the SMS may have gone out)', () => {
    const faults: [string, SandboxFault][] = [
      ['a 500 after delivering', { kind: 'status', status: 500, deliver: true }],
      ['a reset after delivering', { kind: 'reset', deliver: true }],
      ['a time-out (delivered late)', { kind: 'delay', ms: 3_000 }],
    ];
    // Short enough for the delayed answer to time out, long enough for the retry's answer on a busy
    // machine (at 200 ms, a retry at load 25 timed out too and stayed Retrying).
    const shortTimeout: HarnessOptions['config'] = (config) => ({
      ...config,
      provider: { ...config.provider, timeoutMs: 1_000 },
    });

    it.each(faults)(
      'settles an at-most-once message as UNKNOWN on %s and never sends it again',
      async (_case, fault) => {
        await start({ config: shortTimeout });
        const id = await accepted('alerts');
        servers.sandbox.injectFault(fault);

        expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Unknown);
        await servers.watch.reached(1);

        const record = await relay.record(id);
        expect(record).toMatchObject({
          state: MessageState.Unknown,
          attempts: 1,
          reason: 'may have been sent (at-most-once route: not retried)',
        });
        expect(record.lastError?.delivery).toBe('maybe-sent');
        expect(relay.metrics.total('Unknown', 'alerts')).toBe(1);
        // Only a 401 says the key may have been rotated: no other failure re-reads the secret.
        expect(relay.logger.messages('warn')).not.toContain(
          'SMS service refused the API key; reading the secret again',
        );
        relay.clock.advance(3_600_000);
        expect(await sweep(relay.context)).toMatchObject({ sent: {}, recovered: 0 });
        // The one the service delivered, and no other.
        expect(servers.sandbox.messages()).toHaveLength(1);
      },
    );

    it.each(faults)(
      'retries an at-least-once message after %s and sends it (a second SMS, by design)',
      async (_case, fault) => {
        await start({ config: shortTimeout });
        const id = await accepted('alerts-alo');
        servers.sandbox.injectFault(fault);

        expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Retrying);
        await servers.watch.reached(1);
        const waiting = await relay.record(id);
        expect(waiting).toMatchObject({
          state: MessageState.Pending,
          attempts: 1,
          nextAttemptAt: new Date(relay.clock.now.getTime() + 1_000).toISOString(),
        });

        // Not due yet: nothing happens.
        expect((await sweep(relay.context)).sent).toEqual({});
        relay.clock.advance(1_000);
        expect((await sweep(relay.context)).sent).toEqual({ sent: 1 });

        expect(await relay.record(id)).toMatchObject({ state: MessageState.Sent, attempts: 2 });
        // At-least-once means exactly this: nobody misses the SMS, and someone may get it twice.
        expect(servers.sandbox.messages()).toHaveLength(2);
      },
    );

    it("retries an at-least-once message past maxAttempts until its route's retry.for has passed, only then UNKNOWN", async () => {
      const retryFor = 120;
      await start({
        config: (config) => ({
          ...config,
          routes: {
            ...config.routes,
            'alerts-alo': { ...config.routes['alerts-alo']!, retry: { for: `${retryFor}s` } },
          },
        }),
      });
      const id = await accepted('alerts-alo');
      const acceptedAt = relay.clock.now.getTime();
      servers.sandbox.injectFault({ kind: 'status', status: 503, count: 1_000 });

      // Each round: whatever is due first, the record's next attempt or the circuit's next probe.
      let record = await relay.record(id);
      for (let round = 0; round < 100 && record.state === MessageState.Pending; round += 1) {
        const { nextProbeAt } = await relay.store.getCircuit();
        const due = Math.max(
          Date.parse(record.nextAttemptAt ?? record.createdAt),
          nextProbeAt === undefined ? 0 : Date.parse(nextProbeAt),
        );
        if (due > relay.clock.now.getTime()) relay.clock.now = new Date(due);
        await sendMessage(relay.context, id);
        record = await relay.record(id);
        if (record.state === MessageState.Pending)
          expect(relay.clock.now.getTime() - acceptedAt).toBeLessThan(retryFor * 1_000);
      }

      expect(record).toMatchObject({
        state: MessageState.Unknown,
        reason: expect.stringContaining('retry.for ran out'),
      });
      expect(record.attempts).toBeGreaterThan(POLICY.maxAttempts);
      expect(relay.clock.now.getTime() - acceptedAt).toBeGreaterThanOrEqual(retryFor * 1_000);
      // Past the deadline by at most one backoff (capped at maxDelayMs).
      expect(relay.clock.now.getTime() - acceptedAt).toBeLessThanOrEqual(retryFor * 1_000 + POLICY.maxDelayMs);
      expect(servers.sandbox.messages()).toHaveLength(0);
      servers.sandbox.clearFaults();
    });

    it("spaces an at-least-once message's retries by the doubling backoff, capped at RETRY.maxDelayMs", async () => {
      await start({ policy: { ...POLICY, maxDelayMs: 4_000 } });
      const id = await accepted('alerts-alo');
      servers.sandbox.injectFault({ kind: 'status', status: 503, count: 1_000 });
      const gaps: number[] = [];
      for (let round = 0; round < 6; round += 1) {
        // A success in between keeps the circuit closed: this is about the record's backoff alone.
        await relay.store.circuit.succeeded();
        relay.clock.advance(3_000);
        const before = relay.clock.now.getTime();
        expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Retrying);
        gaps.push(Date.parse((await relay.record(id)).nextAttemptAt!) - before);
        relay.clock.now = new Date((await relay.record(id)).nextAttemptAt!);
      }
      expect(gaps).toEqual([1_000, 2_000, 4_000, 4_000, 4_000, 4_000]);
      servers.sandbox.clearFaults();
    });
  });

  it('retries a message that certainly was not sent (connection refused) with backoff, then fails it', async () => {
    const port = await closedPort();
    await start({
      config: (config) => ({ ...config, provider: { ...config.provider, baseUrl: `http://127.0.0.1:${port}` } }),
    });
    const id = await accepted('alerts');

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Retrying);
    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Pending,
      attempts: 1,
      lastError: { name: 'SmsServiceError', delivery: 'not-sent', message: 'ECONNREFUSED' },
    });

    relay.clock.advance(999);
    expect((await sweep(relay.context)).sent).toEqual({});
    relay.clock.advance(1);
    expect((await sweep(relay.context)).sent).toEqual({ retrying: 1 });
    // The delay doubles.
    expect((await relay.record(id)).nextAttemptAt).toBe(new Date(relay.clock.now.getTime() + 2_000).toISOString());
    relay.clock.advance(2_000);
    expect((await sweep(relay.context)).sent).toEqual({ failed: 1 });

    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Failed,
      attempts: 3,
      reason: 'not sent after 3 attempts: ECONNREFUSED',
    });
    expect(relay.metrics.total('Failed', 'alerts')).toBe(1);
  });

  it('fails a message the service refuses as invalid (an unapproved sender ID) at once', async () => {
    await start();
    const response = await relay.ingest('unapproved', JSON.stringify({ message: 'Backup failed' }), {
      headers: bearer(SECRETS.genericToken),
    });
    const id = (response.body['ids'] as string[])[0]!;

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Failed);

    const record = await relay.record(id);
    expect(record).toMatchObject({
      state: MessageState.Failed,
      attempts: 1,
      lastError: { name: 'SmsServiceError', status: 400, delivery: 'not-sent' },
    });
    expect(record.reason).toMatch(/^refused by the SMS service: /);
    expect(sends()).toHaveLength(1);
    expect(servers.sandbox.messages()).toHaveLength(0);
  });

  it('retries a 429 at its Retry-After past maxAttempts, on an at-most-once route too (nothing was sent), and sends it once the service takes it', async () => {
    await start();
    const id = await accepted('alerts');
    servers.sandbox.injectFault({ kind: 'status', status: 429, retryAfter: 7, count: POLICY.maxAttempts + 1 });

    for (let round = 0; round <= POLICY.maxAttempts; round += 1) {
      expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Retrying);
      const { nextAttemptAt } = await relay.record(id);
      expect(Date.parse(nextAttemptAt!) - relay.clock.now.getTime()).toBe(7_000);
      relay.clock.now = new Date(nextAttemptAt!);
    }
    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Sent);

    expect(await relay.record(id)).toMatchObject({ state: MessageState.Sent, attempts: POLICY.maxAttempts + 2 });
    expect(servers.sandbox.messages()).toHaveLength(1);
  });

  it('reads the secret again after a 401 and sends with the rotated key, once', async () => {
    await start({ secrets: secretValues({ providerApiKey: 'the-old-key' }) });
    const id = await accepted();
    // The old key is now cached by the client source, as in a warm container…
    await relay.context.sms.client();
    // …when an operator rotates the key in the secret.
    relay.writeSecrets(secretValues());

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Sent);

    expect(sends().map((request) => request.status)).toEqual([401, 200]);
    expect(servers.sandbox.messages()).toHaveLength(1);
    expect(relay.logger.messages('warn')).toEqual(['SMS service refused the API key; reading the secret again']);
  });

  it('does not call the service again after a 401 when the secret still holds the refused key', async () => {
    await start({ secrets: secretValues({ providerApiKey: 'a-revoked-key' }) });
    const id = await accepted();

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Retrying);

    expect(sends().map((request) => request.status)).toEqual([401]);
    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Pending,
      lastError: { name: 'SmsServiceError', status: 401, delivery: 'not-sent' },
    });
  });

  it('retries, not gives up on, an at-most-once message when the API key cannot be read (nothing was sent)', async () => {
    const { providerApiKey: _omitted, ...rest } = secretValues();
    await start({ secrets: rest });
    const id = await accepted('alerts');

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Retrying);

    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Pending,
      lastError: {
        name: 'SmsServiceError',
        delivery: 'not-sent',
        message: expect.stringMatching(/^no SMS client: the API key could not be read/),
      },
    });
    expect(sends()).toHaveLength(0);

    // Once the key is there, the retry goes out.
    relay.writeSecrets(secretValues());
    await relay.context.secrets.refresh();
    relay.clock.advance(1_000);
    expect((await sweep(relay.context)).sent).toEqual({ sent: 1 });
    expect(servers.sandbox.messages()).toEqual([expect.objectContaining({ phoneNumbers: [ONCALL] })]);
  });

  describe('after the service accepted it, when its result cannot be stored', () => {
    /** The relay's store, whose writes of SENT fail as `failure` says (the other writes go through). */
    function sentWritesFail(failure: () => Error, times: number): typeof relay.context {
      const { store } = relay.context;
      let left = times;
      return {
        ...relay.context,
        store: {
          ...store,
          settle: async (...args: Parameters<typeof store.settle>) => {
            if (args[2].state === MessageState.Sent && left > 0) {
              left -= 1;
              throw failure();
            }
            return await store.settle(...args);
          },
        },
      };
    }

    it('stores it SENT with the amounts alone when the write of the full answer fails, and sends it once', async () => {
      await start();
      const id = await accepted();
      const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });

      expect(await sendMessage(sentWritesFail(throttled, 1), id)).toBe(SendOutcome.Sent);

      expect(await relay.record(id)).toMatchObject({
        state: MessageState.Sent,
        attempts: 1,
        result: { deducted: 1, remainingBalance: 999, message: '', recipients: { omitted: expect.any(String) } },
      });
      expect(relay.logger.messages('error')).toEqual(['SMS sent, but the result was not stored']);
      relay.clock.advance(3_600_000);
      expect(await sweep(relay.context)).toMatchObject({ sent: {}, recovered: 0 });
      expect(servers.sandbox.messages()).toHaveLength(1);
    });

    it('reports it sent and writes nothing more when its claim was taken over meanwhile (the other outcome stands): one SMS', async () => {
      await start();
      const id = await accepted();
      // Every write with this claim would fail: one try, one line.
      const context = sentWritesFail(() => new ClaimLostError(id), Number.POSITIVE_INFINITY);

      expect(await sendMessage(context, id)).toBe(SendOutcome.Sent);

      expect(relay.logger.messages('error')).toEqual([
        'SMS sent, but its claim was taken over; the record keeps the other outcome',
      ]);
      expect(servers.sandbox.messages()).toHaveLength(1);
    });
  });

  it("sends a generic webhook with the route's sender ID", async () => {
    await start();
    const response = await relay.ingest('ops', JSON.stringify({ message: 'Nightly backup failed' }), {
      headers: bearer(SECRETS.genericToken),
    });
    const id = (response.body['ids'] as string[])[0]!;

    expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Sent);
    expect(servers.sandbox.messages()).toEqual([
      expect.objectContaining({ phoneNumbers: [OPS], message: 'Nightly backup failed', senderId: 'OPS' }),
    ]);
  });
});

/** `count` distinct Tanzanian mobile numbers, comma-separated, as a hostile payload field would hold them. */
function numberList(count: number): string {
  return Array.from({ length: count }, (_, index) => `07${String(10_000_000 + index).padStart(8, '0')}`).join(',');
}

describe('money safety', () => {
  const TEN = Array.from({ length: 10 }, (_, index) => `0713${String(100_000 + index)}`);

  /** A route that texts ten fixed numbers (10 credits a send at the sandbox's rate of 1) under a daily cap. */
  const capped =
    (creditsPerDay: number) =>
    (config: HarnessOptions['config'] extends ((c: infer C) => unknown) | undefined ? C : never) => ({
      ...config,
      routes: {
        ...config.routes,
        capped: {
          source: 'generic' as const,
          secret: 'generic-token',
          recipients: TEN,
          senderId: 'OPS',
          limits: { creditsPerDay },
        },
      },
    });

  async function acceptOn(context: Harness, route: string, message = `capped ${randomUUID()}`): Promise<string> {
    const response = await context.ingest(route, JSON.stringify({ message }), {
      headers: bearer(SECRETS.genericToken),
    });
    expect(response.status).toBe(202);
    return (response.body['ids'] as string[])[0]!;
  }

  it('counts each recipient of an SMS in the Segments metric, as the service charges them: one SMS to ten numbers is 10', async () => {
    await start({ config: capped(1_000) });
    expect(await sendMessage(relay.context, await acceptOn(relay, 'capped'))).toBe(SendOutcome.Sent);

    expect(servers.sandbox.messages().map((message) => message.deducted)).toEqual([10]);
    expect(relay.metrics.total('Segments', 'capped')).toBe(10);
  });

  describe('limits.creditsPerDay', () => {
    it('holds from the first send of every new process: the price is read once and kept in the store', async () => {
      const first = await start({ config: capped(25) });
      const ids = [await acceptOn(first, 'capped'), await acceptOn(first, 'capped'), await acceptOn(first, 'capped')];

      // Each send runs in a process of its own (a cold Lambda container, a restarted runtime).
      const outcomes: SendOutcome[] = [];
      for (const id of ids) {
        const cold = await harness({
          db: servers.db,
          baseUrl: servers.sandbox.baseUrl,
          policy: POLICY,
          config: capped(25),
          tableName: first.tableName,
          clock: first.clock,
        });
        outcomes.push(await sendMessage(cold.context, id));
      }

      expect(outcomes).toEqual([SendOutcome.Sent, SendOutcome.Sent, SendOutcome.Held]);
      expect(servers.sandbox.messages().reduce((sum, message) => sum + message.deducted, 0)).toBe(20);
      expect(await relay.record(ids[2]!)).toMatchObject({
        state: MessageState.Held,
        reason: 'route limit: more than 25 credits per day',
      });
      expect((await relay.store.getBalanceState()).creditsPerUnit).toBe(1);
      // The balance endpoint was asked for the price once, before the very first send.
      expect(servers.sandbox.requests().filter((request) => request.path === '/v1/account/balance')).toHaveLength(1);
    });

    it('gives the day back for a send that certainly did not go out (a 402, a refused connection): only sends that went out count', async () => {
      await start({ config: capped(10) });
      await relay.store.recordPrice({ creditsPerUnit: 1 });
      servers.sandbox.setBalance(5); // 10 credits a send: refused 402
      const parked = await acceptOn(relay, 'capped');
      expect(await sendMessage(relay.context, parked)).toBe(SendOutcome.Parked);
      const refusedPort = await closedPort();
      const down: Harness = await harness({
        db: servers.db,
        baseUrl: `http://127.0.0.1:${refusedPort}`,
        policy: POLICY,
        config: capped(10),
        tableName: relay.tableName,
        clock: relay.clock,
      });
      const retried = await acceptOn(relay, 'capped');
      expect(await sendMessage(down.context, retried)).toBe(SendOutcome.Retrying);

      servers.sandbox.setBalance(1_000);
      expect(await sendMessage(relay.context, await acceptOn(relay, 'capped'))).toBe(SendOutcome.Sent);
      expect(await sendMessage(relay.context, await acceptOn(relay, 'capped'))).toBe(SendOutcome.Held);
    });

    it('holds across concurrent senders in separate processes', async () => {
      const first = await start({ config: capped(25) });
      await first.store.recordPrice({ creditsPerUnit: 1 });
      const ids = await Promise.all(Array.from({ length: 6 }, () => acceptOn(first, 'capped')));
      const processes = await Promise.all(
        ids.map(() =>
          harness({
            db: servers.db,
            baseUrl: servers.sandbox.baseUrl,
            policy: POLICY,
            config: capped(25),
            tableName: first.tableName,
            clock: first.clock,
          }),
        ),
      );

      const outcomes = await Promise.all(ids.map((id, index) => sendMessage(processes[index]!.context, id)));

      expect(outcomes.filter((outcome) => outcome === SendOutcome.Sent)).toHaveLength(2);
      expect(outcomes.filter((outcome) => outcome === SendOutcome.Held)).toHaveLength(4);
      expect(servers.sandbox.messages().reduce((sum, message) => sum + message.deducted, 0)).toBe(20);
    });

    it('counts the credits actually spent beside the estimates, so a price recorded too low cannot open the cap', async () => {
      await start({ config: capped(25) });
      await relay.store.recordPrice({ creditsPerUnit: 0.01 });
      const outcomes: SendOutcome[] = [];
      for (let n = 0; n < 5; n += 1) outcomes.push(await sendMessage(relay.context, await acceptOn(relay, 'capped')));

      // Reserved after two sends: 0.1 + 10 = 10.1, which leaves room for a third 10; the 20 credits
      // actually spent do not.
      expect(outcomes).toEqual([
        SendOutcome.Sent,
        SendOutcome.Sent,
        SendOutcome.Held,
        SendOutcome.Held,
        SendOutcome.Held,
      ]);
      expect(servers.sandbox.messages().reduce((sum, message) => sum + message.deducted, 0)).toBe(20);
      // After the first send the price is the one actually charged.
      expect((await relay.store.getBalanceState()).creditsPerUnit).toBe(1);
    });

    it('retries, never sends past the cap, when no price is known and the balance cannot be read', async () => {
      const port = await closedPort();
      relay = await harness({
        db: servers.db,
        baseUrl: `http://127.0.0.1:${port}`,
        policy: POLICY,
        config: capped(25),
      });
      const id = await acceptOn(relay, 'capped');

      await expect(sendMessage(relay.context, id)).rejects.toThrow();

      expect(await relay.record(id)).toMatchObject({
        state: MessageState.Pending,
        lastError: { delivery: 'not-sent' },
      });
      expect(servers.sandbox.messages()).toHaveLength(0);
    });
  });

  describe('limits.messages', () => {
    it('counts a first send that failed maybe-sent (a 500 after delivering): on limits.messages 1 the next message in the window is HELD', async () => {
      await start();
      servers.sandbox.injectFault({ kind: 'status', status: 500, deliver: true });
      const first = await acceptOn(relay, 'limited');
      expect(await sendMessage(relay.context, first)).toBe(SendOutcome.Unknown);
      await servers.watch.reached(1);

      const next = await acceptOn(relay, 'limited');
      expect(await sendMessage(relay.context, next)).toBe(SendOutcome.Held);
      expect(await relay.record(next)).toMatchObject({ state: MessageState.Held });
      // The phone got the first one, and only it.
      expect(servers.sandbox.messages()).toHaveLength(1);
    });

    it('gives the window back for a send that certainly did not go out (a 402): the next message is sent', async () => {
      await start();
      servers.sandbox.injectFault({ kind: 'status', status: 402 });
      expect(await sendMessage(relay.context, await acceptOn(relay, 'limited'))).toBe(SendOutcome.Parked);

      expect(await sendMessage(relay.context, await acceptOn(relay, 'limited'))).toBe(SendOutcome.Sent);
      expect(servers.sandbox.messages()).toHaveLength(1);
    });
  });

  describe('a send the service accepted', () => {
    const bulk =
      (delivery: 'at-most-once' | 'at-least-once') =>
      (config: Parameters<NonNullable<HarnessOptions['config']>>[0]) => ({
        ...config,
        routes: {
          ...config.routes,
          bulk: {
            source: 'generic' as const,
            secret: 'generic-token',
            recipients: ['{{ phones }}'],
            senderId: 'OPS',
            maxRecipients: 9_000,
            delivery,
          },
        },
      });

    it.each(['at-most-once', 'at-least-once'] as const)(
      'ends SENT exactly once, %s, however large its answer',
      async (delivery) => {
        await start({ config: bulk(delivery) });
        servers.sandbox.setBalance(100_000);
        const response = await relay.ingest(
          'bulk',
          JSON.stringify({ message: 'Shop closed today', phones: numberList(9_000) }),
          { headers: bearer(SECRETS.genericToken) },
        );
        expect(response.status).toBe(202);
        const id = (response.body['ids'] as string[])[0]!;

        expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Sent);
        // Long after any stale-SENDING recovery would have run: nothing is sent again.
        relay.clock.advance(POLICY.staleSendingMs * 3);
        await sweep(relay.context);

        expect(sends()).toHaveLength(1);
        const record = await relay.record(id);
        expect(record).toMatchObject({
          state: MessageState.Sent,
          result: { deducted: 9_000, recipients: { truncated: true, count: 9_000 } },
        });
        const kept = (record.result!.recipients as { first: unknown[] }).first;
        expect(kept.length).toBeGreaterThan(100);
        expect(JSON.stringify(kept).length).toBeLessThanOrEqual(32_768);
        // Its credits count: the spend the balance watch and the daily cap read.
        expect(await relay.store.spendLastDays(1)).toBe(9_000);
      },
    );
  });

  describe('balance.reserve', () => {
    const reserved = (config: Parameters<NonNullable<HarnessOptions['config']>>[0]) => ({
      ...config,
      balance: { threshold: 500, reserve: 100, notify: ['0712345678'] },
      routes: {
        ...config.routes,
        orders: { source: 'generic' as const, secret: 'generic-token', recipients: ['0754111222'], senderId: 'OPS' },
        oncall: {
          source: 'generic' as const,
          secret: 'generic-token',
          recipients: ['0754111222'],
          senderId: 'OPS',
          priority: 'critical' as const,
        },
      },
    });

    it('parks a normal route at balance 0 as "insufficient balance", not as the reserve: the balance cannot pay it at all', async () => {
      await start({ config: reserved });
      servers.sandbox.setBalance(0);

      const parked = await acceptOn(relay, 'orders');
      expect(await sendMessage(relay.context, parked)).toBe(SendOutcome.Parked);
      expect(await relay.record(parked)).toMatchObject({
        state: MessageState.Parked,
        reason: reasonText('insufficientBalance'),
      });
      expect(servers.sandbox.messages()).toEqual([]);
    });

    it('parks normal routes that would eat into it, sends critical routes and the low-balance SMS, and a redrive after a top-up sends once', async () => {
      await start({ config: reserved });
      servers.sandbox.setBalance(101);

      expect(await sendMessage(relay.context, await acceptOn(relay, 'orders'))).toBe(SendOutcome.Sent); // leaves 100: at the reserve
      const parked = await acceptOn(relay, 'orders');
      expect(await sendMessage(relay.context, parked)).toBe(SendOutcome.Parked);
      expect(await relay.record(parked)).toMatchObject({
        state: MessageState.Parked,
        reason:
          'balance reserve: 1 credits would leave 99, below the reserve of 100 kept for critical routes; top up, then run "npx sms-relay redrive --state PARKED"',
      });
      expect(await sendMessage(relay.context, await acceptOn(relay, 'oncall'))).toBe(SendOutcome.Sent);
      const [notice] = await relay.records(NOTICE_ROUTE);
      expect(await sendMessage(relay.context, notice!.id)).toBe(SendOutcome.Sent);
      expect(servers.sandbox.messages().map((message) => message.message)).toEqual([
        expect.stringMatching(/^capped/),
        expect.stringMatching(/^capped/),
        notice!.text,
      ]);
      expect(relay.metrics.total('Parked', 'orders')).toBe(1);

      servers.sandbox.setBalance(1_000);
      await checkBalance(relay.context);
      relay.clock.advance(1_000);
      expect(await relay.store.requeue(parked, { from: MessageState.Parked })).toBeDefined();
      expect((await sweep(relay.context)).sent).toEqual({ sent: 1 });
      expect((await sweep(relay.context)).sent).toEqual({});
      expect(await relay.record(parked)).toMatchObject({ state: MessageState.Sent, redrives: 1 });
      expect(servers.sandbox.messages()).toHaveLength(4);
    });

    it('estimates an SMS of several segments at each segment (how the service bills a long SMS is not shown): one that would eat into the reserve parks', async () => {
      await start({ config: reserved });
      servers.sandbox.setBalance(102);
      expect(await sendMessage(relay.context, await acceptOn(relay, 'orders'))).toBe(SendOutcome.Sent); // leaves 101
      // 87 characters outside GSM-7: UCS-2, 2 segments of 67.
      const long = await acceptOn(relay, 'orders', `capped ${'中'.repeat(80)}`);
      expect(await relay.record(long)).toMatchObject({ segments: 2 });
      expect(await sendMessage(relay.context, long)).toBe(SendOutcome.Parked);
      expect(await relay.record(long)).toMatchObject({
        reason: expect.stringMatching(/^balance reserve: 2 credits would leave 99/),
      });
      expect(servers.sandbox.messages()).toHaveLength(1);
    });

    it("sends a normal route's own notices (dead-man's switch, held summary, budget warning) whatever is left, taking their estimate", async () => {
      await start({ config: reserved });
      servers.sandbox.setBalance(102);
      expect(await sendMessage(relay.context, await acceptOn(relay, 'orders'))).toBe(SendOutcome.Sent); // leaves 101
      const kinds = [NoticeKind.HeartbeatSilent, NoticeKind.HeldSummary, NoticeKind.BudgetWarning] as const;
      for (const kind of kinds) {
        const recorded = await relay.store.recordNotice({
          kind,
          route: 'orders',
          key: kind,
          message: noticeMessage(`sms-relay: ${kind} of orders`, ['255712345678'], 'OPS'),
        });
        expect(await sendMessage(relay.context, recorded.ids[0]!)).toBe(SendOutcome.Sent);
      }
      expect(
        servers.sandbox
          .messages()
          .slice(1)
          .map((message) => message.message),
      ).toEqual(kinds.map((kind) => `sms-relay: ${kind} of orders`));
      // Taken from the projected balance: the route's next message sees what they spent.
      expect((await relay.store.getBalanceState()).projected).toBe(98);
      expect(await sendMessage(relay.context, await acceptOn(relay, 'orders'))).toBe(SendOutcome.Parked);
    });

    /**
     * A relay with `reserved`'s routes and a normal `og` route (Opsgenie) with `extra`, its balance
     * left at the reserve by one order; `create` posts an alert of a priority and gives its record's id.
     */
    const atReserveWithOpsgenie = async (extra: Record<string, unknown> = {}) => {
      await start({
        config: (config) => {
          const base = reserved(config);
          const og = {
            source: 'opsgenie' as const,
            secret: 'generic-token',
            recipients: ['0754111222'],
            senderId: 'OPS',
          };
          return { ...base, routes: { ...base.routes, og: { ...og, ...extra } } };
        },
      });
      servers.sandbox.setBalance(101);
      expect(await sendMessage(relay.context, await acceptOn(relay, 'orders'))).toBe(SendOutcome.Sent); // leaves 100: at the reserve
      return async (priority: string): Promise<string> => {
        const body = JSON.stringify({ message: `disk full (${priority})`, alias: `disk-${priority}`, priority });
        const response = await relay.ingest('og', body, {
          headers: { authorization: `GenieKey ${SECRETS.genericToken}`, 'content-type': 'application/json' },
        });
        expect(response.status).toBe(202);
        return (response.body['ids'] as string[])[0]!;
      };
    };

    it("sends an Opsgenie alert of P1 or P2 on a normal route below the reserve, as a critical route's; P3 parks", async () => {
      const create = await atReserveWithOpsgenie();
      const [p1, p2, p3] = [await create('P1'), await create('P2'), await create('P3')];
      expect(await sendMessage(relay.context, p1)).toBe(SendOutcome.Sent);
      expect(await sendMessage(relay.context, p2)).toBe(SendOutcome.Sent);
      expect(await sendMessage(relay.context, p3)).toBe(SendOutcome.Parked);
      expect(await relay.record(p3)).toMatchObject({ reason: expect.stringMatching(/^balance reserve: /) });
      // (Every opsgenie SMS pages for its alert's incident, so all three are in the critical lane.)
      expect((await relay.records('og')).map((record) => [record.text, record.critical])).toEqual(
        expect.arrayContaining([
          ['[P1] disk full (P1)', true],
          ['[P2] disk full (P2)', true],
          ['[P3] disk full (P3)', undefined],
        ]),
      );
    });

    it("keeps a P1 alert critical through its acknowledge link and its escalation; a P3's escalation parks below the reserve", async () => {
      const create = await atReserveWithOpsgenie({
        escalate: [{ after: '1m', to: ['0754333444'] }],
        ack: { baseUrl: 'https://relay.example.org' },
      });
      const [p1, p3] = [await create('P1'), await create('P3')];
      // With `ack` the SMS carries its link: the record written is the linked one, still critical.
      expect(await relay.record(p1)).toMatchObject({
        critical: true,
        text: expect.stringContaining('https://relay.example.org/a/'),
      });
      expect(await sendMessage(relay.context, p1)).toBe(SendOutcome.Sent);
      expect(await sendMessage(relay.context, p3)).toBe(SendOutcome.Parked);

      relay.clock.advance(60_000);
      const { ids } = await recordEscalations(relay.context, relay.clock.now);
      const escalations = await Promise.all(ids.map(async (id) => await relay.record(id)));
      const of = (priority: string) => escalations.find((record) => record.text.includes(`(${priority})`))!;
      expect(of('P1')).toMatchObject({ critical: true, to: ['255754333444'] });
      expect(of('P3').critical).toBeUndefined();
      expect(await sendMessage(relay.context, of('P1').id)).toBe(SendOutcome.Sent);
      expect(await sendMessage(relay.context, of('P3').id)).toBe(SendOutcome.Parked);
    });

    it('a critical send on a store that knows no price yet reads the balance and takes its estimate, so a normal route in flight with it keeps the reserve', async () => {
      await start({ config: reserved });
      servers.sandbox.setBalance(102);
      expect(await sendMessage(relay.context, await acceptOn(relay, 'oncall'))).toBe(SendOutcome.Sent); // leaves 101
      expect(await relay.store.getBalanceState()).toMatchObject({ creditsPerUnit: 1, projected: 101, charged: 1 });
      expect(await sendMessage(relay.context, await acceptOn(relay, 'orders'))).toBe(SendOutcome.Sent); // leaves 100
      expect(await sendMessage(relay.context, await acceptOn(relay, 'orders'))).toBe(SendOutcome.Parked);
    });

    /** Twenty numbers: an SMS to them costs 20 credits at the sandbox's rate of 1. */
    const twenty = Array.from({ length: 20 }, (_, index) => `0713${String(200_000 + index)}`);
    const burst = (config: Parameters<NonNullable<HarnessOptions['config']>>[0]) => {
      const base = reserved(config);
      return {
        ...base,
        balance: { threshold: 210, reserve: 200 },
        routes: {
          ...base.routes,
          shop: {
            source: 'generic' as const,
            secret: 'generic-token',
            recipients: twenty,
            senderId: 'OPS',
            maxRecipients: 20,
          },
          pager: {
            source: 'generic' as const,
            secret: 'generic-token',
            recipients: twenty,
            senderId: 'OPS',
            maxRecipients: 20,
            priority: 'critical' as const,
          },
        },
      };
    };

    it('holds under concurrency: balance 400, reserve 200, 20 per SMS, 30 concurrent sends → at most 10 sent, the rest PARKED', async () => {
      await start({ config: burst });
      servers.sandbox.setBalance(400);
      const ids = await Promise.all(Array.from({ length: 30 }, () => acceptOn(relay, 'shop')));

      const outcomes = await Promise.all(ids.map((id) => sendMessage(relay.context, id)));

      // On a busy machine a send's balance read can pass its 2 s time-out: that send is put back
      // unsent (Retrying) and decided on its retry, below; no other outcome is right.
      const decided = [SendOutcome.Sent, SendOutcome.Parked, SendOutcome.Retrying] as string[];
      expect(outcomes.filter((outcome) => !decided.includes(outcome))).toEqual([]);
      for (let round = 0; round < POLICY.maxAttempts; round += 1) {
        const records = await Promise.all(ids.map((id) => relay.record(id)));
        if (records.every((record) => record.state !== MessageState.Pending)) break;
        relay.clock.advance(POLICY.maxDelayMs);
        await sweep(relay.context);
      }
      const records = await Promise.all(ids.map((id) => relay.record(id)));
      const sent = records.filter((record) => record.state === MessageState.Sent).length;
      expect(sent).toBeLessThanOrEqual(10);
      expect(records.filter((record) => record.state === MessageState.Parked)).toHaveLength(30 - sent);
      expect(servers.sandbox.messages()).toHaveLength(sent);
      expect(servers.sandbox.balance()).toBeGreaterThanOrEqual(200);

      // A critical route still sends, below the reserve too.
      expect(await sendMessage(relay.context, await acceptOn(relay, 'pager'))).toBe(SendOutcome.Sent);
    });

    it('a redrive reads the balance once before deciding: a top-up in the dashboard is seen, each parked message goes out once', async () => {
      await start({ config: burst });
      servers.sandbox.setBalance(230);
      const first = await acceptOn(relay, 'shop');
      const parked = [await acceptOn(relay, 'shop'), await acceptOn(relay, 'shop'), await acceptOn(relay, 'shop')];
      expect(await sendMessage(relay.context, first)).toBe(SendOutcome.Sent); // leaves 210
      for (const id of parked) expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Parked);

      servers.sandbox.setBalance(10_000); // topped up in the service's dashboard: the relay was not told
      const readsBefore = servers.sandbox.requests().filter((request) => request.path === '/v1/account/balance').length;
      relay.clock.advance(1_000);
      for (const id of parked) expect(await relay.store.requeue(id, { from: MessageState.Parked })).toBeDefined();
      expect((await sweep(relay.context)).sent).toEqual({ sent: 3 });
      expect((await sweep(relay.context)).sent).toEqual({});

      for (const id of parked) expect(await relay.record(id)).toMatchObject({ state: MessageState.Sent, redrives: 1 });
      expect(servers.sandbox.messages()).toHaveLength(4);
      const reads =
        servers.sandbox.requests().filter((request) => request.path === '/v1/account/balance').length - readsBefore;
      expect(reads).toBe(1);
    });

    it('reads the balance once when none is known yet (a fresh table), before the first send', async () => {
      await start({ config: reserved });
      servers.sandbox.setBalance(50);
      expect(await sendMessage(relay.context, await acceptOn(relay, 'orders'))).toBe(SendOutcome.Parked);
      expect(servers.sandbox.messages()).toHaveLength(0);
      expect(await relay.store.getBalanceState()).toMatchObject({ lastBalance: 50, creditsPerUnit: 1 });
    });

    it('fails a message after maxAttempts rounds when the balance cannot be read before the send (a fresh store, the service down), with the reason', async () => {
      const port = await closedPort();
      await start({
        config: (config) => ({
          ...reserved(config),
          provider: { ...config.provider, baseUrl: `http://127.0.0.1:${port}` },
        }),
      });
      const id = await acceptOn(relay, 'orders');

      // One round per attempt, each as soon as the record is due again: the sweeper would do the same.
      const outcomes: string[] = [];
      for (let round = 0; round < POLICY.maxAttempts; round += 1) {
        outcomes.push(await sendMessage(relay.context, id).catch((error: unknown) => `threw ${(error as Error).name}`));
        const { nextAttemptAt } = await relay.record(id);
        if (nextAttemptAt === undefined) continue;
        // Each round waits its backoff: a check that keeps failing does not spin.
        expect(Date.parse(nextAttemptAt)).toBeGreaterThan(relay.clock.now.getTime());
        relay.clock.now = new Date(nextAttemptAt);
      }

      expect(outcomes).toEqual(['threw SmsServiceError', 'threw SmsServiceError', SendOutcome.Failed]);
      const record = await relay.record(id);
      expect(record).toMatchObject({
        state: MessageState.Failed,
        attempts: 3,
        reason: 'not sent after 3 attempts: failed before sending: the balance could not be read (ECONNREFUSED)',
        lastError: {
          name: 'SmsServiceError',
          delivery: 'not-sent',
          message: 'failed before sending: the balance could not be read (ECONNREFUSED)',
        },
      });
      expect(record.history.map((change) => change.state)).toEqual([
        'PENDING',
        'SENDING',
        'PENDING',
        'SENDING',
        'PENDING',
        'SENDING',
        'FAILED',
      ]);
      expect(relay.metrics.total('Failed', 'orders')).toBe(1);
      expect(relay.logger.lines).toContainEqual(
        expect.objectContaining({
          level: 'error',
          message: 'sms',
          attributes: expect.objectContaining({ id, state: 'FAILED' }),
        }),
      );
      // Final: no later round claims it again (and the service being down, no send starts at all).
      relay.clock.advance(POLICY.maxDelayMs);
      expect([SendOutcome.Skipped, SendOutcome.Waiting]).toContain(await sendMessage(relay.context, id));
      expect(await relay.record(id)).toMatchObject({ state: MessageState.Failed, attempts: 3 });
      expect(servers.sandbox.messages()).toHaveLength(0);
    });
  });
});
