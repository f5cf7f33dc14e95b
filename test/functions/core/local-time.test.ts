import { describe, expect, it } from 'vitest';
import { clockTime, formatSeconds, formatSpan, instantAt, monthBounds } from '../../../functions/core/local-time';

describe('local time', () => {
  it('counts the calendar month in the zone: 22:00 UTC on 31 October is November in Dar es Salaam', () => {
    expect(monthBounds(new Date('2026-10-31T22:00:00Z'), 'Africa/Dar_es_Salaam').month).toBe('2026-11');
    expect(monthBounds(new Date('2026-10-31T22:00:00Z'), 'UTC').month).toBe('2026-10');
    expect(monthBounds(new Date('2026-11-15T12:00:00Z'), 'Africa/Dar_es_Salaam')).toEqual({
      month: '2026-11',
      startsAt: Date.parse('2026-10-31T21:00:00Z'),
      endsAt: Date.parse('2026-11-30T21:00:00Z'),
    });
    // Across a change of offset: Berlin's March starts at UTC+1 and April at UTC+2; December ends the year.
    expect(monthBounds(new Date('2026-03-15T12:00:00Z'), 'Europe/Berlin')).toMatchObject({
      startsAt: Date.parse('2026-02-28T23:00:00Z'),
      endsAt: Date.parse('2026-03-31T22:00:00Z'),
    });
    expect(monthBounds(new Date('2026-12-15T12:00:00Z'), 'Africa/Dar_es_Salaam')).toMatchObject({
      month: '2026-12',
      endsAt: Date.parse('2026-12-31T21:00:00Z'),
    });
  });

  it('finds the first instant a wall-clock time shows, on the nights the clocks change too', () => {
    const wall = (iso: string): number => Date.parse(`${iso}Z`);
    const utc = (at: number): string => new Date(at).toISOString();
    expect(utc(instantAt(wall('2026-11-26T07:00:00'), 'Africa/Dar_es_Salaam'))).toBe('2026-11-26T04:00:00.000Z');
    // Skipped (01:00 GMT → 02:00 BST; 02:00 EST → 03:00 EDT): the instant the clocks jump.
    expect(utc(instantAt(wall('2026-03-29T01:30:00'), 'Europe/London'))).toBe('2026-03-29T01:00:00.000Z');
    expect(utc(instantAt(wall('2026-03-08T02:30:00'), 'America/New_York'))).toBe('2026-03-08T07:00:00.000Z');
    // Shown twice (02:00 BST → 01:00 GMT; 02:00 EDT → 01:00 EST): the first time.
    expect(utc(instantAt(wall('2026-10-25T01:30:00'), 'Europe/London'))).toBe('2026-10-25T00:30:00.000Z');
    expect(utc(instantAt(wall('2026-11-01T01:30:00'), 'America/New_York'))).toBe('2026-11-01T05:30:00.000Z');
    // Either side of a change, the one instant.
    expect(utc(instantAt(wall('2026-03-29T02:00:00'), 'Europe/London'))).toBe('2026-03-29T01:00:00.000Z');
    expect(utc(instantAt(wall('2026-03-29T00:59:00'), 'Europe/London'))).toBe('2026-03-29T00:59:00.000Z');
    // A month that starts in a skipped hour starts when the clocks jump: Santiago skips 00:00–00:59 on 2026-09-06.
    expect(utc(instantAt(wall('2026-09-06T00:00:00'), 'America/Santiago'))).toBe('2026-09-06T04:00:00.000Z');
  });

  it('says 14:30 on the same local day, the date too on another', () => {
    const now = new Date('2026-11-26T09:00:00Z');
    expect(clockTime(new Date('2026-11-26T11:30:00Z'), 'Africa/Dar_es_Salaam', now)).toBe('14:30');
    expect(clockTime(new Date('2026-11-27T11:30:00Z'), 'Africa/Dar_es_Salaam', now)).toBe('2026-11-27 14:30');
    expect(clockTime(new Date('2026-11-26T21:30:00Z'), 'Africa/Dar_es_Salaam', now)).toBe('2026-11-27 00:30');
  });

  it('writes durations as the config does and spans as people say them', () => {
    expect([300, 120, 3600, 90, 86_400].map(formatSeconds)).toEqual(['5m', '2m', '1h', '90s', '1d']);
    expect([47 * 60_000, 20_000, 3 * 3_600_000 + 5 * 60_000, 2 * 86_400_000].map(formatSpan)).toEqual([
      '47 min',
      '1 min',
      '3 h 5 min',
      '2 d',
    ]);
  });
});
