import { describe, expect, it } from 'vitest';
import { clockTime, spokenDuration } from '../../../functions/core/local-time';
import { quietUntil } from '../../../functions/core/windows';

const DAR = 'Africa/Dar_es_Salaam';
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
    expect(quietUntil(new Date('2026-11-26T20:00:00Z'), thursdayNight, DAR)?.toISOString()).toBe('2026-11-27T04:00:00.000Z'); // Thu 23:00
    expect(quietUntil(new Date('2026-11-27T01:00:00Z'), thursdayNight, DAR)?.toISOString()).toBe('2026-11-27T04:00:00.000Z'); // Fri 04:00
    expect(quietUntil(new Date('2026-11-27T20:00:00Z'), thursdayNight, DAR)).toBeUndefined(); // Fri 23:00
    expect(quietUntil(new Date('2026-11-26T01:00:00Z'), thursdayNight, DAR)).toBeUndefined(); // Thu 04:00: Wednesday's night
  });

  it('handles a period within one day, and a zone with daylight saving time', () => {
    const lunch = { from: '12:00', to: '14:00', days: every };
    expect(quietUntil(new Date('2026-11-26T10:00:00Z'), lunch, DAR)?.toISOString()).toBe('2026-11-26T11:00:00.000Z');
    expect(quietUntil(new Date('2026-11-26T11:00:00Z'), lunch, DAR)).toBeUndefined();
    // Europe/Berlin: the night of 28–29 March 2026 loses an hour; 07:00 is 05:00 UTC after the change.
    expect(quietUntil(new Date('2026-03-28T22:30:00Z'), { from: '22:00', to: '07:00', days: every }, 'Europe/Berlin')?.toISOString()).toBe('2026-03-29T05:00:00.000Z');
  });
});

describe('clockTime and spokenDuration', () => {
  it('say times and lengths the way an SMS does', () => {
    expect(clockTime(new Date('2026-11-26T19:05:00Z'), DAR)).toBe('22:05');
    expect([spokenDuration(600), spokenDuration(7200), spokenDuration(90)]).toEqual(['10 min', '2 h', '90 s']);
  });
});
