import { randomUUID } from 'node:crypto';
import { type AttributeValue, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import type { RelayContext } from '../../../functions/relay/ports';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { sweep } from '../../../functions/relay/sweeper';
import { DEFAULT_RETRY_FOR_SECONDS } from '../../../functions/core/defaults';
import { DEFERRED_OVERDUE_AFTER_MS } from '../../../functions/relay/gauges';
import { MessageState, type NewMessage, type Settlement, StoreError } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import { alertBody, bearer, harness, type Harness, OPS, SECRETS, TestClock, useRelayServers } from './support';

const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const POLICY = { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 60_000, staleSendingMs: 120_000 } as const;

async function generic(route: string, text: string): Promise<string> {
  const response = await relay.ingest(route, JSON.stringify({ message: text }), {
    headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
  });
  expect(response.status).toBe(202);
  return (response.body['ids'] as string[])[0]!;
}

describe('sweep', () => {
  it('holds messages over a route limit and records exactly one summary SMS once the window is over', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    const ids = [
      await generic('limited', 'disk full'),
      await generic('limited', 'disk fuller'),
      await generic('limited', 'disk fullest'),
    ];

    const outcomes = [];
    for (const id of ids) outcomes.push(await sendMessage(relay.context, id));
    expect(outcomes).toEqual([SendOutcome.Sent, SendOutcome.Held, SendOutcome.Held]);
    expect(await relay.record(ids[1]!)).toMatchObject({
      state: MessageState.Held,
      reason: 'route limit: more than 1 messages per 60 s',
    });
    expect(relay.metrics.total('HeldBack', 'limited')).toBe(2);

    // The window (08:00:00–08:01:00) is still open: no summary yet.
    expect(await sweep(relay.context)).toMatchObject({ summaries: 0 });
    relay.clock.advance(60_000);
    expect(await sweep(relay.context)).toMatchObject({ summaries: 1 });
    expect(await sweep(relay.context)).toMatchObject({ summaries: 0, sent: { sent: 1 } });
    relay.clock.advance(3_600_000);
    expect(await sweep(relay.context)).toMatchObject({ summaries: 0, sent: {} });

    const notices = (await relay.records('limited')).filter((record) => record.notice === 'held-summary');
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({
      state: MessageState.Sent,
      to: [OPS],
      text: 'sms-relay: 2 messages on route limited held back by its messages limit between 2025-06-02 08:00 and 2025-06-02 08:01 UTC.',
    });
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual(['disk full', notices[0]!.text]);
  });

  it('never holds the summary itself back, however full the window is', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    await sendMessage(relay.context, await generic('limited', 'one'));
    await sendMessage(relay.context, await generic('limited', 'two'));
    relay.clock.advance(60_000);
    expect(await sweep(relay.context)).toMatchObject({ summaries: 1 });
    // Fill the new window before the summary goes out.
    expect(await sendMessage(relay.context, await generic('limited', 'three'))).toBe(SendOutcome.Sent);

    expect((await sweep(relay.context)).sent).toEqual({ sent: 1 });
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual([
      'one',
      'three',
      expect.stringMatching(/^sms-relay: 1 message on route limited held back/),
    ]);
  });

  it('leaves fresh PENDING records to the stream-fed sender for the grace period', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    const id = await generic('ops', 'backup failed');

    expect((await sweep(relay.context, { pendingGraceMs: 10_000 })).sent).toEqual({});
    relay.clock.advance(10_001);
    expect((await sweep(relay.context, { pendingGraceMs: 10_000 })).sent).toEqual({ sent: 1 });
    expect((await relay.record(id)).state).toBe(MessageState.Sent);
  });

  it('sends a due record in its first run however many records wait for a later retry ahead of it (more than its page)', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    const now = relay.clock.now;
    const later = new Date(now.getTime() + 3_600_000);
    // 210 records back to PENDING until an hour from now, changed before the due one was accepted.
    for (let n = 0; n < 210; n += 1) {
      const {
        ids: [id],
      } = await relay.store.acceptWebhook({
        route: 'ops',
        dedupeKey: `waiting-${n}`,
        windowSeconds: 60,
        messages: [
          {
            index: 0,
            part: 1,
            parts: 1,
            text: `waiting ${n}`,
            to: ['255712345678'],
            encoding: 'GSM-7',
            characters: 10,
            segments: 1,
            delivery: 'at-least-once',
          },
        ],
        now,
      });
      const claimed = await relay.store.claimMessage(id!, { now });
      await relay.store.settle(
        id!,
        claimed!.claimToken!,
        {
          state: MessageState.Pending,
          nextAttemptAt: later,
          lastError: { name: 'TimeoutError', message: 'timed out' },
        },
        { now },
      );
    }
    relay.clock.advance(1_000);
    const due = await generic('ops', 'disk full');
    relay.clock.advance(10_001);

    const report = await sweep(relay.context, { pendingGraceMs: 10_000 });
    expect(report.sent).toEqual({ sent: 1 });
    expect((await relay.record(due)).state).toBe(MessageState.Sent);
    expect(servers.sandbox.messages().map((message) => message.message)).toEqual([
      expect.stringContaining('disk full'),
    ]);
  });

  it('with dispatch, hands every due record over, page after page, and sends none itself', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) ids.push(await generic('ops', `backlog ${index}`));
    const handed: string[] = [];
    // A page of 2: the local runtime's backlog after a crash is far larger than one page.
    const report = await sweep(relay.context, { limit: 2, dispatch: (page) => handed.push(...page) });
    expect(report.dispatched).toBe(5);
    expect(report.sent).toEqual({});
    expect([...handed].sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await relay.record(id)).state).toBe(MessageState.Pending);
    expect(servers.sandbox.messages().filter((message) => message.message.startsWith('backlog'))).toEqual([]);
  });

  describe('a record left in SENDING by a sender that died', () => {
    async function abandoned(route: string): Promise<string> {
      const response = await relay.ingest(route, alertBody(), { headers: bearer(SECRETS.alertsToken) });
      const id = (response.body['ids'] as string[])[0]!;
      // Claimed, then nothing: the Lambda timed out or the runtime was killed mid-send.
      expect(await relay.store.claimMessage(id, { now: relay.clock.now })).toBeDefined();
      return id;
    }

    it('is settled as UNKNOWN on an at-most-once route, once stale, and not sent', async () => {
      relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
      const id = await abandoned('alerts');

      // Stale means in SENDING for longer than staleSendingMs.
      relay.clock.advance(120_000);
      expect(await sweep(relay.context)).toMatchObject({ recovered: 0 });
      relay.clock.advance(1);
      expect(await sweep(relay.context)).toMatchObject({ recovered: 1, sent: {} });

      expect(await relay.record(id)).toMatchObject({
        state: MessageState.Unknown,
        reason: 'may have been sent: the sender stopped while sending',
      });
      expect(relay.metrics.total('Unknown', 'alerts')).toBe(1);
      expect(servers.sandbox.messages()).toHaveLength(0);
    });

    it('is sent again on an at-least-once route', async () => {
      relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
      const id = await abandoned('alerts-alo');

      relay.clock.advance(120_001);
      expect(await sweep(relay.context)).toMatchObject({ recovered: 1, sent: { sent: 1 } });

      expect(await relay.record(id)).toMatchObject({ state: MessageState.Sent, attempts: 2 });
      expect(servers.sandbox.messages()).toHaveLength(1);
    });

    it('is sent again on an at-least-once route however many attempts it used, while its retry.for lasts', async () => {
      relay = await harness({
        db: servers.db,
        baseUrl: servers.sandbox.baseUrl,
        policy: { ...POLICY, maxAttempts: 1 },
      });
      const id = await abandoned('alerts-alo');

      relay.clock.advance(120_001);
      expect(await sweep(relay.context)).toMatchObject({ recovered: 1, sent: { sent: 1 } });
      expect((await relay.record(id)).state).toBe(MessageState.Sent);
    });

    it('is settled as UNKNOWN on an at-least-once route whose retry.for has passed', async () => {
      relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
      const id = await abandoned('alerts-alo');

      relay.clock.advance(DEFAULT_RETRY_FOR_SECONDS * 1_000);
      expect(await sweep(relay.context)).toMatchObject({ recovered: 1, sent: {} });
      expect((await relay.record(id)).state).toBe(MessageState.Unknown);
    });

    it('logs an error, never success, when the settle fails for another reason than a lost claim, and settles it on a later sweep', async () => {
      relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
      const id = await abandoned('alerts');
      relay.clock.advance(120_001);
      // The table refusing the write for a reason of its own: throttled, say.
      const throttled = Object.assign(
        new Error('The level of configured provisioned throughput for the table was exceeded'),
        { name: 'ProvisionedThroughputExceededException' },
      );
      const store = relay.context.store;
      const failing: RelayContext = {
        ...relay.context,
        store: { ...store, settle: async () => Promise.reject(throttled) },
      };

      expect(await sweep(failing)).toMatchObject({ recovered: 0 });

      expect(relay.logger.lines).toContainEqual({
        level: 'error',
        message: 'stale record not settled; the next sweep tries again',
        attributes: { id, route: 'alerts', error: 'ProvisionedThroughputExceededException' },
      });
      expect(relay.logger.messages('info')).not.toContain('stale record settled by its sender meanwhile');
      expect((await relay.record(id)).state).toBe(MessageState.Sending);

      expect(await sweep(relay.context)).toMatchObject({ recovered: 1 });
      expect((await relay.record(id)).state).toBe(MessageState.Unknown);
    });

    it('logs a stale record its sender settled meanwhile (a lost claim) at info level, and counts it not as recovered', async () => {
      relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
      const id = await abandoned('alerts');
      relay.clock.advance(120_001);
      const store = relay.context.store;
      // The sender finishes between the sweeper's listing and its settle.
      const late: RelayContext = {
        ...relay.context,
        store: {
          ...store,
          findStaleSending: async (options) => {
            const page = await store.findStaleSending(options);
            for (const record of page.items)
              await store.settle(record.id, record.claimToken!, { state: MessageState.Failed, reason: 'refused' });
            return page;
          },
        },
      };

      expect(await sweep(late)).toMatchObject({ recovered: 0 });

      expect(relay.logger.lines).toContainEqual({
        level: 'info',
        message: 'stale record settled by its sender meanwhile',
        attributes: expect.objectContaining({ id }),
      });
      expect(relay.logger.messages('error')).toEqual([]);
      expect((await relay.record(id)).state).toBe(MessageState.Failed);
    });
  });

  it('keeps the reservation of a sender that died as maybe sent, so the projected balance does not stay short of it for good', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      policy: POLICY,
      config: (config) => ({ ...config, balance: { threshold: 500, reserve: 100 } }),
    });
    await relay.store.rebaseCredit({ balance: 1_000, basis: 0 });
    const response = await relay.ingest('ops', JSON.stringify({ message: 'order shipped' }), {
      headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
    });
    const id = (response.body['ids'] as string[])[0]!;
    // Claimed and its estimate taken, then the sender was killed before the service answered.
    const claimed = await relay.store.claimMessage(id, { now: relay.clock.now });
    expect(await relay.store.reserveCredit({ estimate: 20, floor: 100, token: claimed!.claimToken! })).toMatchObject({
      reserved: true,
    });

    relay.clock.advance(120_001);
    expect(await sweep(relay.context)).toMatchObject({ recovered: 1 });

    expect(await relay.store.getBalanceState()).toMatchObject({ projected: 980, charged: 20 });
    // The next balance read shows it never went out: the projection is whole again.
    await relay.store.rebaseCredit({ balance: 1_000, basis: 20 });
    expect((await relay.store.getBalanceState()).projected).toBe(1_000);
  });

  it('stops starting sends when told to, leaving the rest due for the next sweep', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    for (const text of ['a', 'b', 'c']) await generic('ops', text);
    let budget = 1;

    const first = await sweep(relay.context, { concurrency: 1, canContinue: () => budget-- > 0 });
    expect(first).toMatchObject({ sent: { sent: 1 }, deferred: 2 });
    expect(await sweep(relay.context)).toMatchObject({ sent: { sent: 2 }, deferred: 0 });
    expect(servers.sandbox.messages()).toHaveLength(3);
  });

  it('puts a claimed message back when the store fails before the send, so it is not lost as UNKNOWN', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    const id = await generic('limited', 'disk full');
    const store = relay.context.store;
    const context: RelayContext = {
      ...relay.context,
      store: { ...store, reserveLimit: async () => Promise.reject(new StoreError('throttled')) },
    };

    await expect(sendMessage(context, id)).rejects.toThrow('throttled');

    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Pending,
      attempts: 1,
      lastError: { name: 'StoreError', delivery: 'not-sent' },
      nextAttemptAt: new Date(relay.clock.now.getTime() + 1_000).toISOString(),
    });
    relay.clock.advance(1_000);
    expect((await sweep(relay.context)).sent).toEqual({ sent: 1 });
    expect(servers.sandbox.messages()).toHaveLength(1);
  });

  it('sends the other records when one of them fails, and reports it', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    const broken = await generic('ops', 'a');
    await generic('ops', 'b');
    // The store failing for one record only: a throttled partition, say.
    const store = relay.context.store;
    const context: RelayContext = {
      ...relay.context,
      store: {
        ...store,
        claimMessage: async (id, options) =>
          id === broken ? Promise.reject(new StoreError('throttled')) : store.claimMessage(id, options),
      },
    };

    expect(await sweep(context)).toMatchObject({ sent: { sent: 1 }, errors: 1 });
    expect(relay.logger.messages('error')).toEqual(['sweep could not send a record']);
    expect((await sweep(relay.context)).sent).toEqual({ sent: 1 });
  });

  it('stays to probe an unreachable SMS service at its backoff when the run can wait, and sends what is due once a probe finds it back', async () => {
    // The real time: the sweep sleeps until the probe is due.
    const clock = Object.assign(new TestClock(new Date()), { read: () => new Date() });
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY, clock });
    const id = await generic('ops', 'waits for the service');
    const openedAt = new Date();
    for (let count = 0; count < 3; count += 1)
      await relay.store.circuit.failed({
        threshold: 3,
        // 1.5 s after the opening write, however long the three failures took to count.
        firstProbeAt: () => new Date(Date.now() + 1_500),
        error: 'refused',
        now: openedAt,
      });
    const probes = () => servers.sandbox.requests().filter((request) => request.path === '/v1/account/balance').length;

    // Once a run: the probe is not due yet, the record waits.
    expect((await sweep(relay.context)).sent).toEqual({ waiting: 1 });
    expect(probes()).toBe(0);
    expect(await sweep(relay.context, { canWait: () => true })).toMatchObject({ sent: { sent: 1 } });
    expect(probes()).toBe(1);
    expect(await relay.record(id)).toMatchObject({ state: MessageState.Sent, attempts: 1 });
  });

  it('leaves out records this version cannot read (a rollback), sends the others, and logs and counts each', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    const ids: string[] = [];
    for (const text of ['newer notice', 'newer history', 'newer state', 'stale newer notice', 'plain one', 'plain two'])
      ids.push(await generic('ops', text));
    await relay.store.claimMessage(ids[3]!);
    const newer = async (id: string, name: string, expression: string, value: AttributeValue) =>
      await servers.db.client.send(
        new UpdateItemCommand({
          TableName: relay.tableName,
          Key: { pk: { S: `MSG#${id}` }, sk: { S: 'MSG' } },
          UpdateExpression: expression,
          ExpressionAttributeNames: { '#name': name },
          ExpressionAttributeValues: { ':value': value },
        }),
      );
    await newer(ids[0]!, 'notice', 'SET #name = :value', { S: 'heartbeat-silent-v2' });
    await newer(ids[1]!, 'history', 'SET #name = list_append(#name, :value)', {
      L: [{ M: { at: { S: relay.clock.now.toISOString() }, state: { S: 'ESCALATED' } } }],
    });
    await newer(ids[2]!, 'state', 'SET #name = :value', { S: 'ESCALATED' });
    await newer(ids[3]!, 'notice', 'SET #name = :value', { S: 'heartbeat-silent-v2' });
    relay.clock.advance(POLICY.staleSendingMs + 1_000);

    expect(await sweep(relay.context)).toMatchObject({ sent: { sent: 2 }, recovered: 0, errors: 0 });
    expect(
      servers.sandbox
        .messages()
        .map((message) => message.message)
        .sort(),
    ).toEqual(['plain one', 'plain two']);
    // PENDING with a newer notice or history, SENDING with a newer notice: met by this sweep. ESCALATED is in no state it lists.
    const left = relay.logger.lines.filter((line) => line.message.startsWith('record left out'));
    expect(left.map((line) => line.attributes?.['id']).sort()).toEqual([ids[0], ids[1], ids[3]].sort());
    expect(left.find((line) => line.attributes?.['id'] === ids[0])?.attributes?.['reason']).toBe(
      `item MSG#${ids[0]}: unknown notice heartbeat-silent-v2`,
    );
    expect(relay.metrics.total('UndecodableRecords')).toBe(3);

    // The next sweep counts them again (the alarm sees them while they wait) without logging them again.
    await sweep(relay.context);
    expect(relay.metrics.total('UndecodableRecords')).toBe(6);
    expect(relay.logger.lines.filter((line) => line.message.startsWith('record left out'))).toHaveLength(3);
    // Left as they were, for the version that wrote them.
    const raw = await servers.db.client.send(
      new GetItemCommand({ TableName: relay.tableName, Key: { pk: { S: `MSG#${ids[0]}` }, sk: { S: 'MSG' } } }),
    );
    expect(raw.Item?.['state']?.S).toBe('PENDING');
  });
  it('publishes how many records are UNKNOWN, PARKED, FAILED, HELD now and DEFERRED past their window, counting at most every 50 s', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    const now = relay.clock.now;
    let key = 0;
    const accept = async (route: string, extra: Partial<NewMessage> = {}): Promise<string> =>
      (
        await relay.store.acceptWebhook({
          route,
          dedupeKey: `gauge-${(key += 1)}`,
          windowSeconds: 60,
          now,
          messages: [
            {
              index: 0,
              part: 1,
              parts: 1,
              text: `m${key}`,
              to: [OPS],
              encoding: 'GSM-7',
              characters: 2,
              segments: 1,
              delivery: 'at-most-once',
              ...extra,
            },
          ],
        })
      ).ids[0]!;
    const settled = async (settlement: Settlement): Promise<string> => {
      const id = await accept('ops');
      const claimed = await relay.store.claimMessage(id, { now });
      await relay.store.settle(id, claimed!.claimToken!, settlement, { now });
      return id;
    };
    const maybeSent = { name: 'SmsServiceError', status: 503, delivery: 'maybe-sent', message: 'unavailable' } as const;
    const unknown = [
      await settled({ state: 'UNKNOWN', reason: 'may have been sent', lastError: maybeSent }),
      await settled({ state: 'UNKNOWN', reason: 'may have been sent', lastError: maybeSent }),
    ];
    await settled({ state: 'PARKED', reason: 'insufficient balance' });
    await settled({ state: 'FAILED', reason: 'refused' });
    await settled({ state: 'HELD', reason: 'route limit' });
    await settled({
      state: 'SENT',
      result: { deducted: 20, remainingBalance: 980, message: 'ok', senderId: 'OPS', recipients: [] },
    });
    // A route gone from the config: its digest cannot be recorded, so its record stays DEFERRED past its window.
    const ended = new Date(now.getTime() - DEFERRED_OVERDUE_AFTER_MS - 1_000);
    await accept('gone', { state: 'DEFERRED', nextAttemptAt: ended, reason: 'digest window' });
    await accept('gone', {
      state: 'DEFERRED',
      nextAttemptAt: new Date(now.getTime() + 3_600_000),
      reason: 'digest window',
    });

    const gauges = () =>
      Object.fromEntries(
        ['UnknownNow', 'ParkedNow', 'FailedNow', 'HeldNow', 'DeferredOverdue'].map((name) => [
          name,
          relay.metrics.points
            .filter((point) => point.name === name)
            .map((point) => [point.value, point.route ?? 'service']),
        ]),
      );
    await sweep(relay.context);
    expect(gauges()).toEqual({
      UnknownNow: [[2, 'service']],
      ParkedNow: [[1, 'service']],
      FailedNow: [[1, 'service']],
      HeldNow: [[1, 'service']],
      DeferredOverdue: [[1, 'service']],
    });

    // 30 s on, a sweep publishes the last counts again, without counting.
    await relay.store.requeue(unknown[0]!, { from: 'UNKNOWN', acceptDuplicates: true, now });
    relay.metrics.points.length = 0;
    relay.clock.advance(30_000);
    await sweep(relay.context);
    expect(gauges()['UnknownNow']).toEqual([[2, 'service']]);
    // 60 s on: counted again (the redriven record was sent by the sweep before).
    relay.metrics.points.length = 0;
    relay.clock.advance(30_000);
    await sweep(relay.context);
    expect(gauges()).toEqual({
      UnknownNow: [[1, 'service']],
      ParkedNow: [[1, 'service']],
      FailedNow: [[1, 'service']],
      HeldNow: [[1, 'service']],
      DeferredOverdue: [[1, 'service']],
    });
    expect(await relay.record(unknown[0]!)).toMatchObject({ state: 'SENT' });
  });

  it('stops counting a FAILED record in FailedNow once it is dismissed, so MessagesFailed recovers at the next count', async () => {
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, policy: POLICY });
    const now = relay.clock.now;
    const {
      ids: [id],
    } = await relay.store.acceptWebhook({
      route: 'ops',
      dedupeKey: 'dismissed-failed',
      windowSeconds: 60,
      now,
      messages: [
        {
          index: 0,
          part: 1,
          parts: 1,
          text: 'to a number that no longer exists',
          to: [OPS],
          encoding: 'GSM-7',
          characters: 33,
          segments: 1,
          delivery: 'at-most-once',
        },
      ],
    });
    const claimed = await relay.store.claimMessage(id!, { now });
    await relay.store.settle(id!, claimed!.claimToken!, { state: 'FAILED', reason: 'invalid number (400)' }, { now });
    const failedNow = () =>
      relay.metrics.points.filter((point) => point.name === 'FailedNow').map((point) => point.value);

    await sweep(relay.context);
    expect(failedNow()).toEqual([1]);

    await relay.store.dismiss(id!, { by: 'asha', reason: 'customer number disconnected', now });
    relay.metrics.points.length = 0;
    relay.clock.advance(60_000);
    await sweep(relay.context);
    expect(failedNow()).toEqual([0]);
    expect(await relay.record(id!)).toMatchObject({ state: 'DISMISSED', dismissal: { by: 'asha', from: 'FAILED' } });
  });
});
