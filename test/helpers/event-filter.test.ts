import { describe, expect, it } from 'vitest';
import { matchesPattern, passesFilters, UnsupportedFilterError } from './event-filter';

const insert = {
  eventName: 'INSERT',
  dynamodb: { NewImage: { state: { S: 'PENDING' }, attempts: { N: '0' }, tags: { SS: ['a', 'b'] } } },
};

describe('Lambda event filtering, as the stream poller of npm run test:aws applies it', () => {
  it('matches exact values, every key of the pattern, at any depth', () => {
    expect(
      matchesPattern({ eventName: ['INSERT'], dynamodb: { NewImage: { state: { S: ['PENDING'] } } } }, insert),
    ).toBe(true);
    expect(matchesPattern({ eventName: ['MODIFY', 'INSERT'] }, insert)).toBe(true);
    expect(matchesPattern({ eventName: ['INSERT'], dynamodb: { NewImage: { state: { S: ['SENT'] } } } }, insert)).toBe(
      false,
    );
    // A key the event lacks fails the pattern; numbers of a DynamoDB image are strings.
    expect(matchesPattern({ dynamodb: { OldImage: { state: { S: ['PENDING'] } } } }, insert)).toBe(false);
    expect(matchesPattern({ dynamodb: { NewImage: { attempts: { N: [0] } } } }, insert)).toBe(false);
    // An array in the event matches when one element does.
    expect(matchesPattern({ dynamodb: { NewImage: { tags: { SS: ['b'] } } } }, insert)).toBe(true);
  });

  it('applies prefix, suffix, exists, anything-but and numeric', () => {
    expect(matchesPattern({ eventName: [{ prefix: 'INS' }] }, insert)).toBe(true);
    expect(matchesPattern({ eventName: [{ suffix: 'ERT' }] }, insert)).toBe(true);
    expect(matchesPattern({ dynamodb: { NewImage: { notice: [{ exists: false }] } } }, insert)).toBe(true);
    expect(matchesPattern({ dynamodb: { NewImage: { state: [{ exists: false }] } } }, insert)).toBe(false);
    expect(matchesPattern({ dynamodb: { NewImage: { state: [{ exists: true }] } } }, insert)).toBe(true);
    expect(matchesPattern({ eventName: [{ 'anything-but': ['REMOVE'] }] }, insert)).toBe(true);
    expect(matchesPattern({ eventName: [{ 'anything-but': 'INSERT' }] }, insert)).toBe(false);
    expect(matchesPattern({ eventName: [{ 'anything-but': { prefix: 'IN' } }] }, insert)).toBe(false);
    expect(matchesPattern({ size: [{ numeric: ['>', 0, '<=', 5] }] }, { size: 5 })).toBe(true);
    expect(matchesPattern({ size: [{ numeric: ['>', 0, '<=', 5] }] }, { size: 6 })).toBe(false);
    expect(matchesPattern({ size: [{ numeric: ['=', 1] }] }, { size: '1' })).toBe(false);
  });

  it('ORs the filters, passes everything without any, and refuses an operator it does not implement', () => {
    expect(passesFilters([{ eventName: ['MODIFY'] }, { eventName: ['INSERT'] }], insert)).toBe(true);
    expect(passesFilters([], insert)).toBe(true);
    expect(() => matchesPattern({ eventName: [{ 'equals-ignore-case': 'insert' }] }, insert)).toThrow(
      UnsupportedFilterError,
    );
  });
});
