import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE, createTableInput, ensureTable, newId } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

describe('ensureTable', () => {
  it('creates the table with its indexes and a stream once, then finds it', async () => {
    const first = await ensureTable(db.client, 'sms-relay-setup');
    // dynalite has no TTL; DynamoDB Local answers as AWS (ENABLING when switched on, then ENABLED), only at once.
    expect(first).toEqual({ created: true, timeToLive: db.engine === 'dynalite' ? 'UNSUPPORTED' : 'ENABLING' });
    expect(await ensureTable(db.client, 'sms-relay-setup')).toEqual({
      created: false,
      timeToLive: db.engine === 'dynalite' ? 'UNSUPPORTED' : 'ENABLED',
    });

    const { Table: table } = await db.client.send(new DescribeTableCommand({ TableName: 'sms-relay-setup' }));
    expect(table?.TableStatus).toBe('ACTIVE');
    expect(table?.KeySchema).toEqual([
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ]);
    // Sorted by name: DynamoDB Local describes them in an order of its own.
    expect(
      table?.GlobalSecondaryIndexes?.map((index) => [
        index.IndexName,
        index.KeySchema?.map((key) => key.AttributeName),
        index.Projection?.ProjectionType,
      ]).sort(([a], [b]) => String(a).localeCompare(String(b))),
    ).toEqual([
      ['byDue', ['state', 'dueAt'], 'INCLUDE'],
      ['byRoute', ['route', 'createdAt'], 'KEYS_ONLY'],
      ['byStateSummary', ['state', 'updatedAt'], 'INCLUDE'],
    ]);
  });

  it('survives concurrent callers', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => ensureTable(db.client, 'sms-relay-race')));
    expect(results.filter((result) => result.created)).toHaveLength(1);
  });

  it('describes an on-demand table with a new-image stream', () => {
    const input = createTableInput('x-table');
    expect(input).toMatchObject({
      TableName: 'x-table',
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
    });
    expect(input.AttributeDefinitions?.map((definition) => definition.AttributeName).sort()).toEqual([
      'createdAt',
      'dueAt',
      'pk',
      'route',
      'sk',
      'state',
      'updatedAt',
    ]);
  });
});

describe('newId', () => {
  it('is 26 Crockford base32 characters whose first 10 encode the millisecond', () => {
    expect(newId(new Date(0))).toMatch(/^0{10}[0-9A-HJKMNP-TV-Z]{16}$/);
    expect(newId(new Date(1_469_918_176_385)).slice(0, 10)).toBe('01ARYZ6S41');
  });

  it('sorts by time across milliseconds and does not repeat', () => {
    const times = [0, 1, 31, 32, 1_000, 1_740_823_200_000, 2 ** 48 - 1];
    const ids = times.map((ms) => newId(new Date(ms)));
    expect([...ids].sort()).toEqual(ids);
    const many = new Set(Array.from({ length: 10_000 }, () => newId(new Date(0))));
    expect(many.size).toBe(10_000);
  });

  it('refuses times it cannot encode', () => {
    expect(() => newId(new Date(2 ** 48))).toThrow(RangeError);
    expect(() => newId(new Date(Number.NaN))).toThrow(RangeError);
  });
});
