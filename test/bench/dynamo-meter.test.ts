import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { attributeValueSize, itemKind, itemSize, numberSize, readUnits, writeUnits } from '../../bench/dynamo-meter';

type Item = Record<string, AttributeValue>;

const message = (state: string, updatedAt: string, text = 'hello'): Item => ({
  pk: { S: 'MSG#01J0' },
  sk: { S: 'MSG' },
  route: { S: 'alerts' },
  createdAt: { S: '2026-11-22T00:00:00.000Z' },
  state: { S: state },
  updatedAt: { S: updatedAt },
  text: { S: text },
});

describe('DynamoDB item sizes', () => {
  it('counts names and values the way DynamoDB does', () => {
    expect(attributeValueSize({ S: 'héllo' })).toBe(6);
    expect(numberSize('12345')).toBe(4);
    expect(numberSize('-0.0012300')).toBe(3);
    expect(attributeValueSize({ BOOL: true })).toBe(1);
    expect(attributeValueSize({ L: [{ S: 'ab' }, { N: '1' }] })).toBe(3 + 2 + 2);
    expect(attributeValueSize({ M: { a: { S: 'xy' } } })).toBe(3 + 1 + 2);
    expect(attributeValueSize({ SS: ['a', 'bc'] })).toBe(3);
    expect(itemSize({ pk: { S: 'MSG#1' }, n: { N: '7' } })).toBe(2 + 5 + 1 + 2);
    expect(itemSize(undefined)).toBe(0);
  });

  it('labels items by their partition key', () => {
    expect(itemKind({ pk: { S: 'MSG#01J' }, sk: { S: 'MSG' } })).toBe('MSG');
    expect(itemKind({ pk: { S: 'LIMIT#alerts' }, sk: { S: 'W#0000000001' } })).toBe('LIMIT W');
    expect(itemKind({ pk: { S: 'BALANCE' }, sk: { S: 'STATE' } })).toBe('BALANCE');
  });
});

describe('write request units', () => {
  it('charges a new message record once in the table and once in each index', () => {
    expect(writeUnits(undefined, message('PENDING', 't1'), false)).toEqual({ table: 1, indexes: { byState: 1, byRoute: 1 } });
  });

  it('charges a state change twice in byState (delete + put) and not at all in the keys-only byRoute', () => {
    expect(writeUnits(message('PENDING', 't1'), message('SENDING', 't2'), false)).toEqual({ table: 1, indexes: { byState: 2, byRoute: 0 } });
  });

  it('charges a keys-only entry for its keys, however large the item', () => {
    expect(writeUnits(undefined, message('PENDING', 't1', 'x'.repeat(1500)), false)).toEqual({ table: 2, indexes: { byState: 2, byRoute: 1 } });
  });

  it('charges items without index keys in the table only', () => {
    const guard: Item = { pk: { S: 'DEDUPE#alerts#k' }, sk: { S: 'DEDUPE' }, status: { S: 'ACCEPTING' } };
    expect(writeUnits(undefined, guard, false)).toEqual({ table: 1, indexes: { byState: 0, byRoute: 0 } });
  });

  it('charges a failed condition for the item size and no index write', () => {
    expect(writeUnits(message('PENDING', 't1'), message('PENDING', 't1'), true)).toEqual({ table: 1, indexes: { byState: 0, byRoute: 0 } });
  });

  it('rounds sizes up to whole kilobytes, taking the larger of before and after', () => {
    const big = message('SENT', 't3', 'x'.repeat(1500));
    const units = writeUnits(message('SENDING', 't2'), big, false);
    expect(units.table).toBe(2);
    expect(units.indexes).toEqual({ byState: 1 + 2, byRoute: 0 });
  });

  it('charges reads per 4 KB, half for eventually consistent ones, at least one unit', () => {
    expect(readUnits([100], true)).toBe(1);
    expect(readUnits([0], true)).toBe(1);
    expect(readUnits([3000, 3000], true)).toBe(2);
    expect(readUnits([5000], false)).toBe(1);
  });
});
