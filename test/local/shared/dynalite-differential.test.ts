import {
  type AttributeValue,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  type TransactWriteItemsCommandInput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore, ensureTable } from '../../../functions/store';
import {
  clientOf,
  type Engines,
  type RecordedRequest,
  type Request,
  replayOf,
  startEngines,
} from '../../helpers/differential';

/**
 * The same requests to the relay's dynalite (the local store's engine, with its
 * `TransactWriteItems`, local/shared/dynalite.ts) and to AWS's DynamoDB Local
 * (test/helpers/differential.ts), in `npm run test:aws`: hand-written cases and the store's own
 * traffic. A burst through the local runtime, replayed the same way, is in
 * dynalite-differential-burst.test.ts (`npm run test:aws`).
 */

let engines: Engines;
beforeAll(async () => {
  engines = await startEngines();
});
afterAll(async () => {
  await engines?.close();
});
const sameEverywhere: Engines['sameEverywhere'] = (requests) => engines.sameEverywhere(requests);

const s = (value: string): AttributeValue => ({ S: value });
const n = (value: number): AttributeValue => ({ N: String(value) });
const key = (sk: string) => ({ pk: s('P'), sk: s(sk) });
const at = (offsetMs: number): Date => new Date(Date.parse('2025-03-01T10:00:00.000Z') + offsetMs);

const update =
  (
    sk: string,
    input: {
      UpdateExpression: string;
      ConditionExpression?: string;
      ExpressionAttributeNames?: Record<string, string>;
      ExpressionAttributeValues?: Record<string, AttributeValue>;
    },
  ): Request =>
  (client, table) =>
    client.send(new UpdateItemCommand({ TableName: table, Key: key(sk), ReturnValues: 'ALL_NEW', ...input }));
const put =
  (
    item: Record<string, AttributeValue>,
    condition?: Omit<ConstructorParameters<typeof PutItemCommand>[0], 'TableName' | 'Item'>,
  ): Request =>
  (client, table) =>
    client.send(new PutItemCommand({ TableName: table, Item: { pk: s('P'), ...item }, ...condition }));

describe('the relay’s kinds of expression', () => {
  it('answers the relay’s kinds of expression alike, each repeated with other values, names and types', async () => {
    const claim = (sk: string, expected: string, next: string, at: string) =>
      update(sk, {
        UpdateExpression:
          'SET #state = :next, #at = :at, #log = list_append(if_not_exists(#log, :empty), :entry) ADD #attempts :one REMOVE #token',
        ConditionExpression: '#state = :expected AND (attribute_not_exists(#at) OR #at <= :at)',
        ExpressionAttributeNames: {
          '#state': 'state',
          '#at': 'at',
          '#log': 'log',
          '#attempts': 'attempts',
          '#token': 'token',
        },
        ExpressionAttributeValues: {
          ':next': s(next),
          ':at': s(at),
          ':expected': s(expected),
          ':empty': { L: [] },
          ':entry': { L: [s(next)] },
          ':one': n(1),
        },
      });
    const add = (by: AttributeValue) =>
      update('count', {
        UpdateExpression: 'ADD #count :by',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':by': by },
      });
    const query =
      (from: string, to: string, filter?: string): Request =>
      (client, table) =>
        client.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
            ...(filter === undefined ? {} : { FilterExpression: 'begins_with(#state, :prefix)' }),
            ExpressionAttributeNames: {
              '#pk': 'pk',
              '#sk': 'sk',
              ...(filter === undefined ? {} : { '#state': 'state' }),
            },
            ExpressionAttributeValues: {
              ':pk': s('P'),
              ':from': s(from),
              ':to': s(to),
              ...(filter === undefined ? {} : { ':prefix': s(filter) }),
            },
            ConsistentRead: true,
          }),
        );
    const answers = await sameEverywhere([
      put({ sk: s('m1'), state: s('PENDING') }),
      put({ sk: s('m2'), state: s('PENDING') }),
      claim('m1', 'PENDING', 'SENDING', '2026-01-01T00:00:01Z'),
      claim('m2', 'SENT', 'FAILED', '2026-01-01T00:00:02Z'),
      claim('m1', 'SENDING', 'SENT', '2026-01-01T00:00:00Z'),
      claim('m1', 'SENDING', 'SENT', '2026-01-01T00:00:04Z'),
      claim('m2', 'PENDING', 'SENDING', '2026-01-01T00:00:05Z'),
      add(n(2)),
      add(n(3)),
      add(s('3')),
      add({ NS: ['1'] }),
      query('m1', 'm2'),
      query('m2', 'm1'),
      query('a', 'z', 'SEN'),
      query('a', 'z', 'SENT'),
      update('m2', {
        UpdateExpression: 'SET #state = :state',
        ExpressionAttributeNames: { '#state': 'state', '#other': 'other' },
        ExpressionAttributeValues: { ':state': s('X') },
      }),
      update('m2', {
        UpdateExpression: 'SET #state = :state',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':state': s('X'), ':spare': s('y') },
      }),
      update('m2', {
        UpdateExpression: 'SET #state = :state',
        ConditionExpression: '#state <> :state',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':state': s('Y') },
      }),
      update('m2', {
        UpdateExpression: 'SET #state = :state',
        ConditionExpression: '#state <> :state',
        ExpressionAttributeNames: { '#state': 'label' },
        ExpressionAttributeValues: { ':state': s('Z') },
      }),
      update('m2', {
        UpdateExpression: 'SET #state = :state',
        ConditionExpression: '#state <> :state',
        ExpressionAttributeNames: { '#state': 'label' },
        ExpressionAttributeValues: { ':state': n(7) },
      }),
      update('m2', {
        UpdateExpression: 'SET #list[0] = :v',
        ExpressionAttributeNames: { '#list': 'log' },
        ExpressionAttributeValues: { ':v': s('first') },
      }),
      update('m2', {
        UpdateExpression: 'SET #list[0] = :v',
        ExpressionAttributeNames: { '#list': 'log' },
        ExpressionAttributeValues: { ':v': { M: { nested: s('yes') } } },
      }),
      update('m2', { UpdateExpression: 'REMOVE #a.#b', ExpressionAttributeNames: { '#a': 'log', '#b': 'x' } }),
      put(
        { sk: s('m3'), state: s('HELD') },
        {
          ConditionExpression: 'attribute_not_exists(pk) OR #s IN (:a, :b)',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':a': s('PENDING'), ':b': s('HELD') },
        },
      ),
      put(
        { sk: s('m3'), state: s('SENT') },
        {
          ConditionExpression: 'attribute_not_exists(pk) OR #s IN (:a, :b)',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':a': s('PENDING'), ':b': s('HELD') },
        },
      ),
      put(
        { sk: s('m3'), state: s('GONE') },
        {
          ConditionExpression: 'attribute_not_exists(pk) OR #s IN (:a, :b)',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':a': s('SENT'), ':b': s('HELD') },
        },
      ),
      put(
        { sk: s('m4') },
        {
          ConditionExpression: 'size(#s) > :n',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':n': n(1) },
        },
      ),
      put(
        { sk: s('m4') },
        {
          ConditionExpression: 'size(#s) > :n',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':n': s('1') },
        },
      ),
      (client, table) =>
        client.send(
          new DeleteItemCommand({
            TableName: table,
            Key: key('m3'),
            ConditionExpression: '#s = :s',
            ExpressionAttributeNames: { '#s': 'state' },
            ExpressionAttributeValues: { ':s': s('GONE') },
            ReturnValues: 'ALL_OLD',
          }),
        ),
      (client, table) =>
        client.send(
          new GetItemCommand({
            TableName: table,
            Key: key('m1'),
            ProjectionExpression: '#s, #l[0]',
            ExpressionAttributeNames: { '#s': 'state', '#l': 'log' },
          }),
        ),
      (client, table) =>
        client.send(
          new GetItemCommand({
            TableName: table,
            Key: key('m1'),
            ProjectionExpression: '#s, #l[0]',
            ExpressionAttributeNames: { '#s': 'attempts', '#l': 'log' },
          }),
        ),
    ]);
    // The sequence means something: claims applied and refused, ADD refused a string.
    expect(answers.map((answer) => ('ok' in answer ? 'ok' : answer.error))).toContain(
      'ConditionalCheckFailedException',
    );
    expect(
      answers.filter((answer) => 'error' in answer && answer.error === 'ValidationException').length,
    ).toBeGreaterThan(3);
  });
});

describe('TransactWriteItems answers as on DynamoDB Local', () => {
  const guard = (sk: string, owner: string, returnOld = true) => ({
    Put: {
      TableName: '',
      Item: { pk: s('G'), sk: s(sk), owner: s(owner) },
      ConditionExpression: 'attribute_not_exists(#pk) OR #owner = :owner',
      ExpressionAttributeNames: { '#pk': 'pk', '#owner': 'owner' },
      ExpressionAttributeValues: { ':owner': s(owner) },
      ...(returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
    },
  });
  const record = (sk: string) => ({
    Put: {
      TableName: '',
      Item: { pk: s('R'), sk: s(sk), state: s('PENDING') },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  });
  const transact =
    (items: NonNullable<TransactWriteItemsCommandInput['TransactItems']>, capacity?: 'TOTAL'): Request =>
    (client, table) =>
      client.send(
        new TransactWriteItemsCommand({
          TransactItems: items.map((item) => ({ Put: { ...item.Put!, TableName: table } })),
          ...(capacity === undefined ? {} : { ReturnConsumedCapacity: capacity }),
        }),
      );

  it('writes all or none, with one reason per action and the refusing item where asked', async () => {
    const answers = await sameEverywhere([
      transact([guard('k', 'a'), record('1'), record('2')], 'TOTAL'),
      transact([guard('k', 'b'), record('3')]),
      transact([guard('k', 'b', false), record('3')]),
      transact([guard('k', 'a'), record('1')]),
      transact([record('4'), guard('k', 'c'), guard('j', 'c')]),
      transact([guard('k', 'a'), record('5')]),
      transact([]),
      transact(Array.from({ length: 101 }, (_, position) => record(`many-${position}`))),
      transact([{ Put: { TableName: '', Item: { pk: s('R') } } }]),
    ]);
    expect(answers.map((answer) => ('ok' in answer ? 'ok' : answer.error))).toEqual([
      'ok',
      'TransactionCanceledException',
      'TransactionCanceledException',
      'TransactionCanceledException',
      'TransactionCanceledException',
      'ok',
      'ValidationException',
      'ValidationException',
      'ValidationException',
    ]);
  });
});

describe('the relay’s own traffic', () => {
  /** Every request a store makes, as sent: the command's name and its input. */
  const recording = (client: DynamoDBClient): RecordedRequest[] => {
    const requests: RecordedRequest[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        requests.push({ command: context.commandName!, input: structuredClone(args.input as Record<string, unknown>) });
        return await next(args);
      },
      { step: 'initialize', name: 'recordTraffic' },
    );
    return requests;
  };

  it('gives the same answers and items when the store’s requests are replayed to each engine', async () => {
    const client = clientOf(engines.dynaliteEndpoint);
    await ensureTable(client, 'traffic-recorded');
    const requests = recording(client);
    const store = createStore({ client, tableName: 'traffic-recorded', clock: () => at(0) });
    const lastError = { name: 'ServiceError', status: 503, delivery: 'maybe-sent', message: 'upstream busy' } as const;
    const message = (text: string, delivery: 'at-most-once' | 'at-least-once' = 'at-most-once') =>
      ({
        index: 0,
        part: 1,
        parts: 1,
        text,
        to: ['255712345678'],
        encoding: 'GSM-7',
        characters: text.length,
        segments: 1,
        delivery,
      }) as const;

    // Accepts: new, duplicate, replay under another delivery id, several messages.
    const first = await store.acceptWebhook({
      route: 'alerts',
      dedupeKey: 'd1',
      windowSeconds: 60,
      messages: [message('disk full')],
      now: at(0),
    });
    await store.acceptWebhook({
      route: 'alerts',
      dedupeKey: 'd1',
      windowSeconds: 60,
      messages: [message('disk full')],
      now: at(1000),
    });
    await store.acceptWebhook({
      route: 'alerts',
      dedupeKey: 'd2',
      replayKey: 'body-1',
      windowSeconds: 60,
      messages: [message('cpu'), { ...message('cpu 2'), index: 1 }],
      now: at(2000),
    });
    await store.acceptWebhook({
      route: 'alerts',
      dedupeKey: 'd3',
      replayKey: 'body-1',
      windowSeconds: 60,
      messages: [message('cpu')],
      now: at(3000),
    });
    const orders = await store.acceptWebhook({
      route: 'orders',
      dedupeKey: 'o1',
      windowSeconds: 60,
      messages: [message('order 42', 'at-least-once')],
      now: at(4000),
    });
    await store.recordNotice({
      kind: 'held-summary',
      route: 'alerts',
      key: 'messages:W#1',
      message: message('held'),
      now: at(5000),
    });

    // A message's life: claimed, refused a second claim, settled, redriven, claimed again.
    const id = first.ids[0]!;
    const claimed = await store.claimMessage(id, { now: at(6000) });
    await store.claimMessage(id, { now: at(6500) });
    await store.settle(
      id,
      claimed!.claimToken!,
      { state: 'PARKED', reason: 'insufficient balance' },
      { now: at(7000) },
    );
    await store.requeue(id, { from: 'PARKED', now: at(8000) });
    const again = await store.claimMessage(id, { now: at(9000) });
    await store.settle(
      id,
      again!.claimToken!,
      {
        state: 'SENT',
        result: { deducted: 20, remainingBalance: 980, message: 'ok', senderId: 'RELAY', recipients: [] },
      },
      { now: at(10_000) },
    );
    await expect(
      store.settle(id, again!.claimToken!, { state: 'FAILED', reason: 'late', lastError }, { now: at(10_500) }),
    ).rejects.toThrow(/no longer claimed/);
    const order = await store.claimMessage(orders.ids[0]!, { now: at(11_000) });
    await store.settle(
      orders.ids[0]!,
      order!.claimToken!,
      { state: 'PENDING', nextAttemptAt: at(20_000), lastError },
      { now: at(12_000) },
    );

    // Listings through the indexes, and the sweeper's reads.
    await store.listByState('SENT');
    // Whole listings, or pages that end between distinct index sort keys: the order of ties is unset (see comparable).
    await store.listByState('PENDING');
    await store.listByState('SENT', { limit: 1 });
    await store.listByRoute('alerts');
    await store.listRecent();
    await store.findDuePending({ now: at(30_000) });
    await store.findStaleSending({ olderThan: at(50_000) });
    await store.getMessage(id);

    // Mutes, heartbeats, limits, credit, balance, readings, captures.
    await store.muteRoute({ route: 'alerts', forSeconds: 7200, reason: 'db upgrade', now: at(13_000) });
    await store.getMute({ route: 'alerts', now: at(14_000) });
    await store.unmuteRoute({ route: 'alerts', now: at(15_000) });
    await store.touchHeartbeat({ route: 'watchdog', intervalMs: 60_000, now: at(16_000) });
    await store.touchHeartbeat({ route: 'watchdog', intervalMs: 60_000, now: at(16_500) });
    await store.reserveLimit({ route: 'alerts', messages: { max: 1, windowSeconds: 3600 }, now: at(17_000) });
    await store.recordCreditsSpent({ route: 'alerts', deducted: 20, now: at(18_000) });
    await store.recordPrice({ creditsPerUnit: 20, now: at(19_000) });
    await store.reserveCredit({ estimate: 20, floor: 200, token: 't1' } as never).catch(() => undefined);
    await store.settleCredit({ token: 't1', estimate: 20, charged: 20 } as never).catch(() => undefined);
    await store.updateBalanceState({ balance: 500, threshold: 100, now: at(20_000) } as never);
    await store.updateBalanceState({ balance: 50, threshold: 100, now: at(21_000) } as never);
    await store.recordBalanceReading({ balance: 70, currency: 'TZS', now: at(22_000) } as never);
    await store.capturePayload({
      route: 'github',
      receivedAt: at(23_000),
      headers: { 'x-github-event': 'ping' },
      keepHeaders: ['x-github-event'],
      body: new TextEncoder().encode('{"a":1}'),
      recordIds: [id],
      keepSeconds: 60,
    } as never);
    await store.listCaptures('github', { now: at(24_000) });
    await store.openDigestWindow({ route: 'orders', windowSeconds: 600, now: at(25_000) } as never);

    expect(requests.length).toBeGreaterThan(40);
    const commands = new Set(requests.map((request) => request.command));
    expect([...commands].sort()).toEqual(
      expect.arrayContaining([
        'GetItemCommand',
        'PutItemCommand',
        'QueryCommand',
        'TransactWriteItemsCommand',
        'UpdateItemCommand',
      ]),
    );
    const replay = replayOf(requests, 'traffic-recorded');
    try {
      await sameEverywhere(replay);
    } finally {
      client.destroy();
    }
  });
});
