import { type AttributeValue, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClaimLostError,
  StoreError,
  type LastError,
  type MessageStore,
  type NewMessage,
  type SendResult,
} from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, message, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const lastError: LastError = { name: 'ServiceError', status: 503, delivery: 'maybe-sent', message: 'upstream busy' };
const sendResult: SendResult = {
  deducted: 2,
  remainingBalance: 98.5,
  message: 'Message sent',
  senderId: 'SHOP',
  recipients: [{ number: '255712345678', status: 'queued', cost: null }],
};

/** A store with one accepted message, claimed unless told otherwise. */
const setUp = async (overrides: Partial<NewMessage> = {}) => {
  const { store, scan, tableName, rawItem } = await newTable(db);
  const { ids } = await store.acceptWebhook({
    route: 'orders',
    dedupeKey: 'd',
    windowSeconds: 60,
    messages: [message(overrides)],
    now: T0,
  });
  const id = ids[0] ?? '';
  return { store, scan, tableName, rawItem, id };
};

const claim = async (store: MessageStore, id: string, now = at(1000)) => {
  const record = await store.claimMessage(id, { now });
  if (record?.claimToken === undefined) throw new Error('claim failed');
  return { record, token: record.claimToken };
};

describe('claimMessage', () => {
  it('moves PENDING to SENDING with attempts + 1, a claim time and a token', async () => {
    const { store, id } = await setUp();
    const record = await store.claimMessage(id, { now: at(1000) });
    expect(record).toMatchObject({
      id,
      state: 'SENDING',
      attempts: 1,
      claimedAt: at(1000).toISOString(),
      updatedAt: at(1000).toISOString(),
    });
    expect(record?.claimToken).toMatch(/^[0-9A-Z]{26}$/);
    expect(await store.getMessage(id)).toEqual(record);
  });

  it('gives the record to exactly one of 10 concurrent claims', async () => {
    const { store, id } = await setUp();
    const results = await Promise.all(Array.from({ length: 10 }, () => store.claimMessage(id, { now: at(1000) })));
    const winners = results.filter((record) => record !== undefined);
    expect(winners).toHaveLength(1);
    expect((await store.getMessage(id))?.attempts).toBe(1);
  });

  it('returns undefined for a missing id without creating an item', async () => {
    const { store, scan } = await setUp();
    const before = await scan();
    expect(await store.claimMessage('01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeUndefined();
    expect(await scan()).toEqual(before);
  });

  it('does not claim a record released for later before it is due', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    await store.settle(id, token, { state: 'PENDING', nextAttemptAt: at(60_000), lastError }, { now: at(2000) });

    expect(await store.claimMessage(id, { now: at(59_999) })).toBeUndefined();
    const again = await store.claimMessage(id, { now: at(60_000) });
    expect(again).toMatchObject({ state: 'SENDING', attempts: 2, lastError });
    expect(again?.nextAttemptAt).toBeUndefined();
  });

  describe('with staleAfterMs', () => {
    it('takes over a stale SENDING record on an at-least-once route, and the old sender loses', async () => {
      const { store, id } = await setUp({ delivery: 'at-least-once' });
      const { token: old } = await claim(store, id, at(1000));

      expect(await store.claimMessage(id, { now: at(30_999), staleAfterMs: 30_000 })).toBeUndefined();
      const taken = await store.claimMessage(id, { now: at(31_000), staleAfterMs: 30_000 });
      expect(taken).toMatchObject({ state: 'SENDING', attempts: 2 });
      expect(taken?.claimToken).not.toBe(old);

      await expect(store.settle(id, old, { state: 'SENT', result: sendResult })).rejects.toBeInstanceOf(ClaimLostError);
      await expect(
        store.settle(id, taken?.claimToken ?? '', { state: 'SENT', result: sendResult }),
      ).resolves.toMatchObject({ state: 'SENT' });
    });

    it('never takes over an at-most-once record', async () => {
      const { store, id } = await setUp({ delivery: 'at-most-once' });
      await claim(store, id, at(1000));
      expect(await store.claimMessage(id, { now: at(3_600_000), staleAfterMs: 30_000 })).toBeUndefined();
    });
  });
});

describe('completions', () => {
  it('settle to SENT stores the result, the recipients as returned, and drops the token', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    const sent = await store.settle(id, token, { state: 'SENT', result: sendResult }, { now: at(2000) });
    expect(sent).toMatchObject({
      state: 'SENT',
      result: sendResult,
      sentAt: at(2000).toISOString(),
      updatedAt: at(2000).toISOString(),
    });
    expect(sent.claimToken).toBeUndefined();
    expect(await store.getMessage(id)).toEqual(sent);
  });

  it('settle to SENT keeps a bounded part of an answer too large for one item, so storing a send always fits', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    const recipients = Array.from({ length: 9_000 }, (_, n) => ({
      phoneNumber: `2557${String(n).padStart(8, '0')}`,
      status: 'queued',
      messageId: `msg_${n}_${'x'.repeat(40)}`,
    }));
    const sent = await store.settle(
      id,
      token,
      { state: 'SENT', result: { ...sendResult, message: 'm'.repeat(100_000), recipients } },
      { now: at(2000) },
    );

    const kept = sent.result!.recipients as { truncated: boolean; count: number; first: unknown[] };
    expect(kept).toMatchObject({ truncated: true, count: 9_000 });
    expect(kept.first).toEqual(recipients.slice(0, kept.first.length));
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(32_768);
    // The status text is cut to 100 bytes: the result map is projected into the state index.
    expect(sent.result!.message).toHaveLength(100);
    expect(await store.getMessage(id)).toEqual(sent);
  });

  it('settle to DROPPED records a claimed message that must not go out any more', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    expect(await store.settle(id, token, { state: 'DROPPED', reason: 'stale' }, { now: at(2000) })).toMatchObject({
      state: 'DROPPED',
      reason: 'stale',
    });
    await expect(store.settle(id, token, { state: 'DROPPED', reason: 'again' })).rejects.toBeInstanceOf(ClaimLostError);
  });

  it.each([
    [
      'FAILED',
      'FAILED',
      (s: MessageStore, id: string, t: string) =>
        s.settle(id, t, { state: 'FAILED', reason: 'rejected', lastError }, { now: at(2000) }),
    ],
    [
      'UNKNOWN',
      'UNKNOWN',
      (s: MessageStore, id: string, t: string) =>
        s.settle(id, t, { state: 'UNKNOWN', reason: 'timed out', lastError }, { now: at(2000) }),
    ],
    [
      'PARKED',
      'PARKED',
      (s: MessageStore, id: string, t: string) =>
        s.settle(id, t, { state: 'PARKED', reason: 'insufficient balance', lastError }, { now: at(2000) }),
    ],
  ])('%s records the state, the reason and the last error', async (_, state, mark) => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    const record = await mark(store, id, token);
    expect(record).toMatchObject({ state, lastError, updatedAt: at(2000).toISOString() });
    expect(record.reason).toBeTruthy();
    expect(record.claimToken).toBeUndefined();
  });

  it('settle to HELD records the state and reason', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    expect(await store.settle(id, token, { state: 'HELD', reason: 'messages limit' })).toMatchObject({
      state: 'HELD',
      reason: 'messages limit',
    });
  });

  it('settle back to PENDING returns the record to PENDING with the next attempt time', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    const record = await store.settle(
      id,
      token,
      { state: 'PENDING', nextAttemptAt: at(30_000), lastError },
      { now: at(2000) },
    );
    expect(record).toMatchObject({ state: 'PENDING', nextAttemptAt: at(30_000).toISOString(), lastError, attempts: 1 });
    expect(record.claimToken).toBeUndefined();
  });

  it('refuses every completion with a wrong token and leaves the record as it was', async () => {
    const { store, id } = await setUp();
    const { record } = await claim(store, id);
    const wrong = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const attempts = [
      store.settle(id, wrong, { state: 'SENT', result: sendResult }),
      store.settle(id, wrong, { state: 'FAILED', reason: 'x', lastError }),
      store.settle(id, wrong, { state: 'UNKNOWN', reason: 'x', lastError }),
      store.settle(id, wrong, { state: 'PARKED', reason: 'x' }),
      store.settle(id, wrong, { state: 'HELD', reason: 'x' }),
      store.settle(id, wrong, { state: 'PENDING', nextAttemptAt: at(5000), lastError }),
    ];
    // All awaited at once: one refused while another is awaited would be an unhandled rejection.
    await Promise.all(attempts.map(async (attempt) => await expect(attempt).rejects.toBeInstanceOf(ClaimLostError)));
    expect(await store.getMessage(id)).toEqual(record);
  });

  it('refuses a second completion with the right token: the record is no longer SENDING', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    await store.settle(id, token, { state: 'SENT', result: sendResult });
    await expect(store.settle(id, token, { state: 'FAILED', reason: 'late', lastError })).rejects.toMatchObject({
      name: 'ClaimLostError',
      id,
    });
    expect((await store.getMessage(id))?.state).toBe('SENT');
  });

  it('refuses to complete a record that was never claimed', async () => {
    const { store, id } = await setUp();
    await expect(store.settle(id, 'anything', { state: 'SENT', result: sendResult })).rejects.toBeInstanceOf(
      ClaimLostError,
    );
  });
});

describe('requeue', () => {
  it('sends a PARKED record back to PENDING, due now, attempts reset, so the next claim takes it', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    await store.settle(id, token, { state: 'PARKED', reason: 'insufficient balance', lastError });

    const record = await store.requeue(id, { from: 'PARKED', now: at(10_000) });

    expect(record).toMatchObject({
      state: 'PENDING',
      nextAttemptAt: at(10_000).toISOString(),
      attempts: 0,
      redrives: 1,
      lastError,
    });
    expect(record?.reason).toBeUndefined();
    expect(await store.claimMessage(id, { now: at(10_000) })).toMatchObject({ state: 'SENDING', attempts: 1 });
  });

  it.each([
    [
      'FAILED',
      (s: MessageStore, id: string, t: string) => s.settle(id, t, { state: 'FAILED', reason: 'x', lastError }),
    ],
    ['HELD', (s: MessageStore, id: string, t: string) => s.settle(id, t, { state: 'HELD', reason: 'x' })],
  ] as const)('requeues from %s', async (from, mark) => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    await mark(store, id, token);
    expect(await store.requeue(id, { from })).toMatchObject({ state: 'PENDING', redrives: 1 });
  });

  it('moves a record once when two operators requeue it at the same time', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    await store.settle(id, token, { state: 'PARKED', reason: 'x' });
    const results = await Promise.all([store.requeue(id, { from: 'PARKED' }), store.requeue(id, { from: 'PARKED' })]);
    expect(results.filter((record) => record !== undefined)).toHaveLength(1);
    expect((await store.getMessage(id))?.redrives).toBe(1);
  });

  it('leaves a record alone that is not in the given state', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    await store.settle(id, token, { state: 'SENT', result: sendResult });
    expect(await store.requeue(id, { from: 'PARKED' })).toBeUndefined();
    expect((await store.getMessage(id))?.state).toBe('SENT');
  });

  it('requeues an UNKNOWN record, which may have been sent, only when duplicates are accepted', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    await store.settle(id, token, { state: 'UNKNOWN', reason: 'may have been sent', lastError });
    await expect(store.requeue(id, { from: 'UNKNOWN' })).rejects.toThrow(
      new StoreError('an UNKNOWN record may already have been sent: requeue it only with acceptDuplicates'),
    );
    await expect(store.requeue(id, { from: 'UNKNOWN', acceptDuplicates: false })).rejects.toBeInstanceOf(StoreError);
    expect((await store.getMessage(id))?.state).toBe('UNKNOWN');
    expect(await store.requeue(id, { from: 'UNKNOWN', acceptDuplicates: true })).toMatchObject({
      state: 'PENDING',
      redrives: 1,
      attempts: 0,
    });
  });

  it('refuses to requeue from a state nobody redrives', async () => {
    const { store, id } = await setUp();
    await expect(store.requeue(id, { from: 'SENDING' as 'PARKED' })).rejects.toBeInstanceOf(StoreError);
  });
});

describe('wake', () => {
  it('marks a waiting PENDING record woken without changing its state or history, and the claim removes the mark', async () => {
    const { store, id } = await setUp();
    const before = (await store.getMessage(id))!;

    expect(await store.wake(id, { now: at(5_000) })).toBe(true);
    const woken = await store.getMessage(id);
    expect(woken).toMatchObject({ state: 'PENDING', wokenAt: at(5_000).toISOString(), attempts: 0 });
    expect(woken?.history).toEqual(before.history);

    const { record } = await claim(store, id, at(6_000));
    expect(record.wokenAt).toBeUndefined();
    await store.settle(id, record.claimToken!, { state: 'PENDING', nextAttemptAt: at(20_000), lastError });
    // A retry's return to PENDING does not look woken to the stream.
    expect((await store.getMessage(id))?.wokenAt).toBeUndefined();
  });

  it('leaves a record alone that is no longer PENDING, and a missing one', async () => {
    const { store, id } = await setUp();
    await claim(store, id);
    expect(await store.wake(id)).toBe(false);
    expect((await store.getMessage(id))?.wokenAt).toBeUndefined();
    expect(await store.wake('01JNOSUCHRECORD00000000000')).toBe(false);
  });

  it('gives a record written before lanes the bulk lane, as a requeue does, so a stream mapping takes it', async () => {
    const { store, id, tableName, rawItem } = await setUp();
    const raw = async () => (await rawItem(`MSG#${id}`, 'MSG'))!;
    const { lane: _written, ...before } = await raw();
    await db.client.send(new PutItemCommand({ TableName: tableName, Item: before }));
    expect((await store.getMessage(id))?.lane).toBe('bulk');
    expect((await raw())['lane']).toBeUndefined();

    await store.wake(id);
    expect((await raw())['lane']).toEqual({ S: 'bulk' });
  });
});

describe('dismiss', () => {
  const decision = { by: 'asha', reason: 'customer number disconnected; told them by phone' };
  /** A record settled into `state` (FAILED, UNKNOWN, PARKED, HELD or SENT). */
  const settledIn = async (state: 'FAILED' | 'UNKNOWN' | 'PARKED' | 'HELD' | 'SENT') => {
    const setup = await setUp();
    const { token } = await claim(setup.store, setup.id);
    await setup.store.settle(
      setup.id,
      token,
      state === 'SENT' ? { state, result: sendResult } : { state, reason: `why ${state}`, lastError },
      { now: at(2000) },
    );
    return setup;
  };

  it.each(['UNKNOWN', 'FAILED', 'HELD', 'PARKED'] as const)(
    'ends a %s record DISMISSED unsent, keeping who, when and why, and its own reason',
    async (from) => {
      const { store, id } = await settledIn(from);
      const outcome = await store.dismiss(id, { ...decision, now: at(60_000) });

      expect(outcome.dismissed).toBe(true);
      expect(outcome.record).toMatchObject({
        state: 'DISMISSED',
        updatedAt: at(60_000).toISOString(),
        reason: `why ${from}`,
        dismissal: { by: 'asha', at: at(60_000).toISOString(), reason: decision.reason, from },
      });
      expect(outcome.record?.history.at(-1)).toEqual({
        at: at(60_000).toISOString(),
        state: 'DISMISSED',
        reason: `${decision.reason} (dismissed by asha)`,
      });
      expect(await store.getMessage(id)).toEqual(outcome.record);
      // Final: nothing sends it, nothing redrives it.
      expect(await store.claimMessage(id, { now: at(120_000) })).toBeUndefined();
      expect(await store.requeue(id, { from: 'FAILED' })).toBeUndefined();
      expect((await store.listByState('DISMISSED')).items.map((record) => record.id)).toEqual([id]);
    },
  );

  it('refuses a SENT, PENDING or SENDING record and leaves it exactly as it was', async () => {
    const sent = await settledIn('SENT');
    const pending = await setUp();
    const sending = await setUp();
    await claim(sending.store, sending.id);
    for (const { store, id } of [sent, pending, sending]) {
      const before = await store.getMessage(id);
      const outcome = await store.dismiss(id, decision);
      expect(outcome).toEqual({ dismissed: false, record: before });
      expect(await store.getMessage(id)).toEqual(before);
    }
    expect((await sent.store.getMessage(sent.id))?.state).toBe('SENT');
    expect((await pending.store.getMessage(pending.id))?.state).toBe('PENDING');
    expect((await sending.store.getMessage(sending.id))?.state).toBe('SENDING');
  });

  it('with from, dismisses only a record still in that state', async () => {
    const { store, id } = await settledIn('PARKED');
    expect(await store.dismiss(id, { ...decision, from: 'FAILED' })).toMatchObject({
      dismissed: false,
      record: { state: 'PARKED' },
    });
    expect(await store.dismiss(id, { ...decision, from: 'PARKED' })).toMatchObject({
      dismissed: true,
      record: { state: 'DISMISSED', dismissal: { from: 'PARKED' } },
    });
  });

  it('answers a missing id with no record and writes nothing', async () => {
    const { store, scan } = await setUp();
    const before = await scan();
    expect(await store.dismiss('01ARZ3NDEKTSV4RRFFQ69G5FAV', decision)).toEqual({
      dismissed: false,
      record: undefined,
    });
    expect(await scan()).toEqual(before);
  });

  it('refuses a dismissal without a reason, or from a state nobody dismisses, changing nothing', async () => {
    const { store, id } = await settledIn('FAILED');
    const before = await store.getMessage(id);
    await expect(store.dismiss(id, { by: 'asha', reason: '  ' })).rejects.toThrow(
      new StoreError('a dismissal needs a reason'),
    );
    await expect(store.dismiss(id, { by: '', reason: 'x' })).rejects.toBeInstanceOf(StoreError);
    await expect(store.dismiss(id, { ...decision, from: 'SENT' as 'FAILED' })).rejects.toBeInstanceOf(StoreError);
    expect(await store.getMessage(id)).toEqual(before);
  });

  it('leaves one consistent outcome when a dismissal races a redrive of the same record', async () => {
    const { store } = await setUp();
    const ids: string[] = [];
    for (let n = 0; n < 8; n += 1) {
      const { ids: accepted } = await store.acceptWebhook({
        route: 'orders',
        dedupeKey: `race-${n}`,
        windowSeconds: 60,
        messages: [message()],
        now: T0,
      });
      const { token } = await claim(store, accepted[0]!);
      await store.settle(accepted[0]!, token, { state: 'FAILED', reason: 'refused', lastError });
      ids.push(accepted[0]!);
    }
    const raced = await Promise.all(
      ids.map(async (id) => {
        const [dismissal, redrive] = await Promise.all([
          store.dismiss(id, decision),
          store.requeue(id, { from: 'FAILED' }),
        ]);
        return { id, dismissed: dismissal.dismissed, requeued: redrive !== undefined };
      }),
    );
    for (const { id, dismissed, requeued } of raced) {
      // Exactly one of the two took the record, and the record says which.
      expect(dismissed).not.toBe(requeued);
      const record = await store.getMessage(id);
      const last = record?.history.at(-1)?.state;
      if (dismissed) {
        expect(record).toMatchObject({ state: 'DISMISSED', redrives: 0, dismissal: { from: 'FAILED' } });
        expect(last).toBe('DISMISSED');
      } else {
        expect(record).toMatchObject({ state: 'PENDING', redrives: 1 });
        expect(record?.dismissal).toBeUndefined();
        expect(last).toBe('PENDING');
      }
      // Accepted, claimed, failed, and the winner's entry alone.
      expect(record?.history.map((change) => change.state)).toEqual(['PENDING', 'SENDING', 'FAILED', last]);
    }
  });

  it('dismisses a record once when two operators dismiss it at the same time', async () => {
    const { store, id } = await settledIn('UNKNOWN');
    const outcomes = await Promise.all([
      store.dismiss(id, { by: 'asha', reason: 'arrived after all' }),
      store.dismiss(id, { by: 'baraka', reason: 'checked with the customer' }),
    ]);
    expect(outcomes.filter((outcome) => outcome.dismissed)).toHaveLength(1);
    const record = await store.getMessage(id);
    expect(record?.history.filter((change) => change.state === 'DISMISSED')).toHaveLength(1);
    const winner = outcomes.find((outcome) => outcome.dismissed)!.record!;
    expect(record?.dismissal).toEqual(winner.dismissal);
  });
});

describe('history', () => {
  const entry = (offsetMs: number, state: string, extra: object = {}) => ({
    at: at(offsetMs).toISOString(),
    state,
    ...extra,
  });

  it('logs every change of a record oldest first: accepted, claimed, retried with its error, claimed again, sent', async () => {
    const { store, id } = await setUp();
    expect((await store.getMessage(id))?.history).toEqual([entry(0, 'PENDING')]);

    const { token } = await claim(store, id, at(1000));
    await store.settle(id, token, { state: 'PENDING', nextAttemptAt: at(5000), lastError }, { now: at(2000) });
    const { token: second } = await claim(store, id, at(5000));
    const sent = await store.settle(id, second, { state: 'SENT', result: sendResult }, { now: at(6000) });

    const history = [
      entry(0, 'PENDING'),
      entry(1000, 'SENDING'),
      entry(2000, 'PENDING', { error: lastError }),
      entry(5000, 'SENDING'),
      entry(6000, 'SENT'),
    ];
    expect(sent.history).toEqual(history);
    expect((await store.getMessage(id))?.history).toEqual(history);
  });

  it('starts a record accepted as DROPPED with one entry that says why', async () => {
    const { store } = await newTable(db);
    const { ids } = await store.acceptWebhook({
      route: 'orders',
      dedupeKey: 'd',
      windowSeconds: 60,
      messages: [message({ state: 'DROPPED', reason: 'filtered: draft', to: [] })],
      now: T0,
    });
    expect((await store.getMessage(ids[0]!))?.history).toEqual([entry(0, 'DROPPED', { reason: 'filtered: draft' })]);
  });

  it('starts a notice with one PENDING entry', async () => {
    const { store } = await newTable(db);
    const { ids } = await store.recordNotice({
      kind: 'low-balance',
      route: '_relay',
      key: 'k',
      message: message(),
      now: at(500),
    });
    expect((await store.getMessage(ids[0]!))?.history).toEqual([entry(500, 'PENDING')]);
  });

  it('records the reason and error of a settlement, and a requeue from PARKED as PENDING', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id, at(1000));
    await store.settle(id, token, { state: 'PARKED', reason: 'insufficient balance', lastError }, { now: at(2000) });
    const requeued = await store.requeue(id, { from: 'PARKED', now: at(10_000) });
    expect(requeued?.history).toEqual([
      entry(0, 'PENDING'),
      entry(1000, 'SENDING'),
      entry(2000, 'PARKED', { reason: 'insufficient balance', error: lastError }),
      entry(10_000, 'PENDING'),
    ]);
  });

  it('appends nothing for a lost claim: neither the claims that lose the race nor a settle whose claim was taken over', async () => {
    const { store, id } = await setUp({ delivery: 'at-least-once' });
    const claims = await Promise.all(Array.from({ length: 5 }, () => store.claimMessage(id, { now: at(1000) })));
    const old = claims.find((record) => record !== undefined)!.claimToken!;
    expect((await store.getMessage(id))?.history).toEqual([entry(0, 'PENDING'), entry(1000, 'SENDING')]);

    await store.claimMessage(id, { now: at(31_000), staleAfterMs: 30_000 });
    await expect(
      store.settle(id, old, { state: 'PENDING', nextAttemptAt: at(40_000), lastError }, { now: at(32_000) }),
    ).rejects.toBeInstanceOf(ClaimLostError);
    await expect(
      store.settle(id, old, { state: 'SENT', result: sendResult }, { now: at(32_000) }),
    ).rejects.toBeInstanceOf(ClaimLostError);
    expect((await store.getMessage(id))?.history).toEqual([
      entry(0, 'PENDING'),
      entry(1000, 'SENDING'),
      entry(31_000, 'SENDING'),
    ]);
  });

  it('cuts an entry’s reason and error message to 500 characters, leaving the record’s own intact', async () => {
    const { store, id } = await setUp();
    const { token } = await claim(store, id);
    const long = { ...lastError, message: 'm'.repeat(2000) };
    const failed = await store.settle(
      id,
      token,
      { state: 'FAILED', reason: 'r'.repeat(2000), lastError: long },
      { now: at(2000) },
    );
    expect(failed.history.at(-1)).toEqual(
      entry(2000, 'FAILED', { reason: 'r'.repeat(500), error: { ...lastError, message: 'm'.repeat(500) } }),
    );
    expect([failed.reason?.length, failed.lastError?.message.length]).toEqual([2000, 2000]);
  });

  it('reads a record written before the history existed as an empty history, and starts it on the next change', async () => {
    const { store, id, scan, tableName } = await setUp();
    const [item] = (await scan()).filter((stored) => stored.kind?.S === 'message');
    const { history: _, ...old } = item!;
    await db.client.send(new PutItemCommand({ TableName: tableName, Item: old }));
    expect((await store.getMessage(id))?.history).toEqual([]);
    expect((await store.claimMessage(id, { now: at(1000) }))?.history).toEqual([entry(1000, 'SENDING')]);
  });
});

describe('a long history', () => {
  // Kept in step with functions/core/defaults.ts on purpose: the test states the bound it checks.
  const FIRST = 3;
  const LAST = 40;
  const entry = (offsetMs: number, state: string, extra: object = {}) => ({
    at: at(offsetMs).toISOString(),
    state,
    ...extra,
  });

  /** Claims the record and puts it back, `rounds` times: two history entries a round. */
  const loop = async (store: MessageStore, id: string, rounds: number, startMs = 1000) => {
    let now = startMs;
    for (let round = 0; round < rounds; round += 1) {
      const { token } = await claim(store, id, at(now));
      await store.settle(id, token, { state: 'PENDING', nextAttemptAt: at(now + 1), lastError }, { now: at(now + 1) });
      now += 2;
    }
    return now;
  };

  it('keeps the first entries and the last ones, and counts those left out between', async () => {
    const { store, id } = await setUp();
    const end = await loop(store, id, 30);
    const { token } = await claim(store, id, at(end));
    const failed = await store.settle(
      id,
      token,
      { state: 'FAILED', reason: 'gave up', lastError },
      { now: at(end + 1) },
    );

    // 1 + 30 × 2 + 2 = 63 changes: the first 3, the last 40, 20 left out.
    expect(failed.history).toHaveLength(FIRST + LAST);
    expect(failed.historyOmitted).toBe(20);
    expect(failed.history.slice(0, FIRST)).toEqual([
      entry(0, 'PENDING'),
      entry(1000, 'SENDING'),
      entry(1001, 'PENDING', { error: lastError }),
    ]);
    expect(failed.history.slice(-2)).toEqual([
      entry(end, 'SENDING'),
      entry(end + 1, 'FAILED', { reason: 'gave up', error: lastError }),
    ]);
    expect(await store.getMessage(id)).toEqual(failed);
  });

  it('stays bounded however many changes a record goes through', async () => {
    const { store, id, rawItem } = await setUp();
    await loop(store, id, 60);
    const record = await store.getMessage(id);
    expect(record?.history).toHaveLength(FIRST + LAST);
    expect(record?.historyOmitted).toBe(1 + 120 - FIRST - LAST);
    // Oldest first, with nothing repeated: the kept entries are the first ones and the newest ones.
    const times = record!.history.map((change) => change.at);
    expect([...times].sort()).toEqual(times);
    expect(new Set(times).size).toBe(times.length);
    expect((await rawItem(`MSG#${id}`, 'MSG'))?.['history']?.L).toHaveLength(FIRST + LAST);
  });

  it('appends nothing and counts nothing for a lost claim on a record whose history is full', async () => {
    const { store, id } = await setUp({ delivery: 'at-least-once' });
    const end = await loop(store, id, 25);
    const before = await store.getMessage(id);
    const claims = await Promise.all(Array.from({ length: 5 }, () => store.claimMessage(id, { now: at(end) })));
    expect(claims.filter((record) => record !== undefined)).toHaveLength(1);
    const after = await store.getMessage(id);
    expect(after?.historyOmitted).toBe(before!.historyOmitted! + 1);
    expect(after?.history.at(-1)).toEqual(entry(end, 'SENDING'));
    await expect(
      store.settle(id, 'not-the-token', { state: 'SENT', result: sendResult }, { now: at(end + 1) }),
    ).rejects.toBeInstanceOf(ClaimLostError);
    expect(await store.getMessage(id)).toEqual(after);
  });

  const big: AttributeValue = {
    M: {
      at: { S: at(500).toISOString() },
      state: { S: 'PENDING' },
      error: { M: { name: { S: 'TimeoutError' }, delivery: { S: 'not-sent' }, message: { S: 'x'.repeat(500) } } },
    },
  };
  const small: AttributeValue = { M: { at: { S: at(500).toISOString() }, state: { S: 'PENDING' } } };

  /**
   * Rewrites the stored record with the longest history DynamoDB still accepts (as a record retried
   * for days before the bound existed): as many `big` entries as fit, then `small` ones until not
   * even one more fits. Returns how many entries it holds.
   */
  const fillToTheLimit = async (tableName: string, item: Record<string, AttributeValue>): Promise<number> => {
    const put = async (history: AttributeValue[]): Promise<boolean> => {
      try {
        await db.client.send(new PutItemCommand({ TableName: tableName, Item: { ...item, history: { L: history } } }));
        return true;
      } catch (error) {
        if (/maximum allowed size/.test((error as Error).message)) return false;
        throw error;
      }
    };
    let history = item['history']?.L ?? [];
    for (const [filler, most] of [
      [big, 1_000],
      [small, 1_000],
    ] as const) {
      // The most that fit: a binary search, a few puts instead of hundreds.
      let [low, high] = [0, most];
      while (low < high) {
        const middle = Math.ceil((low + high) / 2);
        if (await put([...history, ...Array.from({ length: middle }, () => filler)])) low = middle;
        else high = middle - 1;
      }
      history = [...history, ...Array.from({ length: low }, () => filler)];
    }
    expect(await put(history)).toBe(true);
    expect(await put([...history, small])).toBe(false);
    return history.length;
  };

  it('claims a record whose history grew to the item size limit (written before the bound), and bounds it', async () => {
    const { store, id, tableName, rawItem } = await setUp();
    const count = await fillToTheLimit(tableName, (await rawItem(`MSG#${id}`, 'MSG'))!);

    const claimed = await store.claimMessage(id, { now: at(1000) });

    expect(claimed).toMatchObject({ state: 'SENDING', attempts: 1, historyOmitted: count + 1 - FIRST - LAST });
    expect(claimed?.history).toHaveLength(FIRST + LAST);
    expect(claimed?.history.at(-1)).toEqual(entry(1000, 'SENDING'));
    expect(await store.getMessage(id)).toEqual(claimed);
  });

  it('settles a claimed record whose history grew to the item size limit, and bounds it', async () => {
    const { store, id, tableName, rawItem } = await setUp();
    await claim(store, id, at(1000));
    const count = await fillToTheLimit(tableName, (await rawItem(`MSG#${id}`, 'MSG'))!);
    const { claimToken } = (await store.getMessage(id))!;

    const failed = await store.settle(
      id,
      claimToken!,
      { state: 'FAILED', reason: 'r'.repeat(500), lastError },
      { now: at(2000) },
    );

    expect(failed.state).toBe('FAILED');
    expect(failed.history).toHaveLength(FIRST + LAST);
    expect(failed.historyOmitted).toBe(count + 1 - FIRST - LAST);
    expect(failed.history.slice(0, 2)).toEqual([entry(0, 'PENDING'), entry(1000, 'SENDING')]);
    expect(failed.history.at(-1)).toEqual(entry(2000, 'FAILED', { reason: 'r'.repeat(500), error: lastError }));
    expect(await store.getMessage(id)).toEqual(failed);
  });
});
