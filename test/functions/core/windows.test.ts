import { describe, expect, it } from 'vitest';
import { clockTime, spokenDuration } from '../../../functions/core/local-time';
import { quietUntil } from '../../../functions/core/windows';

const DAR = 'Africa/Dar_es_Salaam';
const LONDON = 'Europe/London';
const every = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

describe('quietUntil', () => {
  // 2026-11-26 is a Thursday; Dar es Salaam is UTC+3 all year.
  it('ends an overnight period the next morning, in the route zone', () => {
    const night = { from: '22:00', to: '07:00', days: every };
    expect(quietUntil(new Date('2026-11-26T19:00:00Z'), night, DAR)?.toISOString()).toBe('2026-11-27T04:00:00.000Z'); // 22:00
    expect(quietUntil(new Date('2026-11-27T03:59:59Z'), night, DAR)?.toISOString()).toBe('2026-11-27T04:00:00.000Z'); // 06:59:59
    expect(quietUntil(new Date('2026-11-27T04:00:00Z'), night, DAR)).toBeUndefined(); // 07:00
    expect(quietUntil(new Date('2026-11-26T18:59:59Z'), night, DAR)).toBeUndefined(); // 21:59:59
  });

  it('counts a period on the day it starts', () => {
    const thursdayNight = { from: '22:00', to: '07:00', days: ['thu'] as const };
    expect(quietUntil(new Date('2026-11-26T20:00:00Z'), thursdayNight, DAR)?.toISOString()).toBe(
      '2026-11-27T04:00:00.000Z',
    ); // Thu 23:00
    expect(quietUntil(new Date('2026-11-27T01:00:00Z'), thursdayNight, DAR)?.toISOString()).toBe(
      '2026-11-27T04:00:00.000Z',
    ); // Fri 04:00
    expect(quietUntil(new Date('2026-11-27T20:00:00Z'), thursdayNight, DAR)).toBeUndefined(); // Fri 23:00
    expect(quietUntil(new Date('2026-11-26T01:00:00Z'), thursdayNight, DAR)).toBeUndefined(); // Thu 04:00: Wednesday's night
  });

  it('handles a period within one day, and a zone with daylight saving time', () => {
    const lunch = { from: '12:00', to: '14:00', days: every };
    expect(quietUntil(new Date('2026-11-26T10:00:00Z'), lunch, DAR)?.toISOString()).toBe('2026-11-26T11:00:00.000Z');
    expect(quietUntil(new Date('2026-11-26T11:00:00Z'), lunch, DAR)).toBeUndefined();
    // Europe/Berlin: the night of 28–29 March 2026 loses an hour; 07:00 is 05:00 UTC after the change.
    expect(
      quietUntil(
        new Date('2026-03-28T22:30:00Z'),
        { from: '22:00', to: '07:00', days: every },
        'Europe/Berlin',
      )?.toISOString(),
    ).toBe('2026-03-29T05:00:00.000Z');
  });

  it('gives a period one end when its end falls in the hour the clocks skip: the first instant after it', () => {
    // Europe/London, 29 March 2026: 01:00 GMT becomes 02:00 BST, so 01:30 never shows; the period ends at 02:00 BST (01:00 UTC).
    const early = { from: '00:00', to: '01:30', days: every };
    const end = '2026-03-29T01:00:00.000Z';
    expect(quietUntil(new Date('2026-03-29T00:00:00Z'), early, LONDON)?.toISOString()).toBe(end);
    expect(quietUntil(new Date('2026-03-29T00:59:00Z'), early, LONDON)?.toISOString()).toBe(end);
    expect(quietUntil(new Date('2026-03-29T00:59:59.999Z'), early, LONDON)?.toISOString()).toBe(end);
    expect(quietUntil(new Date('2026-03-29T01:00:00Z'), early, LONDON)).toBeUndefined(); // 02:00 BST
    expect(quietUntil(new Date('2026-03-29T01:10:00Z'), early, LONDON)).toBeUndefined(); // 02:10 BST
    // A start in the skipped hour starts the period at the first instant after it, as its end would.
    expect(
      quietUntil(new Date('2026-03-29T01:00:00Z'), { from: '01:30', to: '03:00', days: every }, LONDON)?.toISOString(),
    ).toBe('2026-03-29T02:00:00.000Z');
    expect(
      quietUntil(new Date('2026-03-29T00:59:59Z'), { from: '01:30', to: '03:00', days: every }, LONDON),
    ).toBeUndefined();
  });

  it('gives a period one end when the clocks go back inside it: the first time the clock shows its end', () => {
    // Europe/London, 25 October 2026: 02:00 BST becomes 01:00 GMT, so 01:00–01:59 shows twice.
    const early = { from: '00:00', to: '01:30', days: every };
    const end = '2026-10-25T00:30:00.000Z'; // 01:30 BST, the first 01:30
    expect(quietUntil(new Date('2026-10-24T23:00:00Z'), early, LONDON)?.toISOString()).toBe(end); // 00:00 BST
    expect(quietUntil(new Date('2026-10-25T00:20:00Z'), early, LONDON)?.toISOString()).toBe(end); // 01:20 BST
    expect(quietUntil(new Date('2026-10-25T00:40:00Z'), early, LONDON)).toBeUndefined(); // 01:40 BST
    expect(quietUntil(new Date('2026-10-25T01:10:00Z'), early, LONDON)).toBeUndefined(); // 01:10 GMT, the second time round
  });
});

describe('clockTime and spokenDuration', () => {
  it('say times and lengths the way an SMS does', () => {
    expect(clockTime(new Date('2026-11-26T19:05:00Z'), DAR)).toBe('22:05');
    expect([spokenDuration(600), spokenDuration(7200), spokenDuration(90)]).toEqual(['10 min', '2 h', '90 s']);
  });
});
