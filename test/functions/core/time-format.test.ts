import { execFileSync } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { axisTick, formatTime, relativeTime, terminalClock } from '../../../functions/core/time-format';

/** The viewer in Berlin (UTC+1 in December), the routes in Dar es Salaam (UTC+3). */
const BERLIN = 'Europe/Berlin';
const DAR = 'Africa/Dar_es_Salaam';
const now = new Date('2026-12-04T15:54:00.000Z'); // 16:54 in Berlin, 18:54 in Dar es Salaam

describe('one time format for people', () => {
  it("shows a time in the viewer's zone 24-hour and unlabelled, and how long ago when recent", () => {
    expect(formatTime('2026-12-04T15:51:00.000Z', { zone: BERLIN, now })).toBe('16:51 (3 min ago)');
    expect(formatTime('2026-12-04T15:51:09.000Z', { zone: BERLIN, now, seconds: true })).toBe('16:51:09 (3 min ago)');
    expect(formatTime('2026-12-04T11:04:00.000Z', { zone: BERLIN, now })).toBe('12:04');
  });

  it("names the zone whenever it is not the viewer's, and says how soon a deadline is", () => {
    expect(formatTime('2026-12-04T16:06:00.000Z', { in: DAR, zone: BERLIN, now })).toBe(`19:06 ${DAR} (in 12 min)`);
    expect(formatTime('2026-12-04T16:06:00.000Z', { in: DAR, zone: DAR, now })).toBe('19:06 (in 12 min)');
  });

  it("leaves out a zone whose clock reads as the viewer's at that time", () => {
    expect(formatTime('2026-12-04T16:06:00.000Z', { in: 'Europe/Paris', zone: BERLIN, now })).toBe('17:06 (in 12 min)');
    expect(formatTime('2026-12-04T16:06:00.000Z', { in: 'Etc/UTC', zone: 'UTC', now, relative: false })).toBe('16:06');
    // London's clock is an hour behind Berlin's.
    expect(formatTime('2026-12-04T16:06:00.000Z', { in: 'Europe/London', zone: BERLIN, now, relative: false })).toBe(
      '16:06 Europe/London',
    );
  });

  it('shows a missing or unreadable time as a dash', () => {
    expect(formatTime(null)).toBe('-');
    expect(formatTime(undefined)).toBe('-');
    expect(formatTime('not a time')).toBe('-');
  });

  it("labels a chart's time axis in the viewer's zone, as fine as its step", () => {
    const at = new Date('2026-12-04T15:54:00.000Z');
    expect(axisTick(at, 600, { zone: DAR })).toBe('18:54');
    expect(axisTick(at, 86_400, { zone: BERLIN })).toBe('12-04');
    expect(axisTick(at, 30 * 86_400, { zone: BERLIN })).toBe('2026-12');
  });

  it('adds the date on another day in the zone shown', () => {
    // 23:30 in Berlin on the 4th is already the 5th in Dar es Salaam.
    const late = new Date('2026-12-04T22:30:00.000Z');
    expect(formatTime(late, { zone: BERLIN, now, relative: false })).toBe('23:30');
    expect(formatTime(late, { in: DAR, zone: BERLIN, now })).toBe(`2026-12-05 01:30 ${DAR}`);
  });

  it('says just now, N min ago or in N min within the hour, nothing further off', () => {
    expect(relativeTime(new Date(now.getTime() - 20_000), now)).toBe('just now');
    expect(relativeTime(new Date(now.getTime() - 59 * 60_000), now)).toBe('59 min ago');
    expect(relativeTime(new Date(now.getTime() + 5 * 60_000), now)).toBe('in 5 min');
    expect(relativeTime(new Date(now.getTime() - 2 * 3_600_000), now)).toBeUndefined();
  });

  it("keeps a terminal line's first column HH:MM:SS in the viewer's zone", () => {
    expect(terminalClock('2026-12-04T15:51:09.000Z', { zone: BERLIN })).toBe('16:51:09');
    expect(terminalClock('2026-12-04T15:51:09.000Z', { zone: DAR })).toBe('18:51:09');
    expect(terminalClock('not a time')).toBe('--:--:--');
  });

  it("takes the machine's zone (TZ) as the viewer's by default", () => {
    // vitest runs with the machine's TZ; whatever it is, a time in it is shown unlabelled.
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(formatTime(now, { now, in: zone })).toBe(formatTime(now, { now }));
    expect(formatTime(now, { now, in: zone === DAR ? BERLIN : DAR })).toContain(zone === DAR ? BERLIN : DAR);
  });

  it("shows a time in the viewer's own zone without building a date formatter (a browser's first one starts its ICU)", async () => {
    vi.resetModules();
    const built = vi.spyOn(Intl, 'DateTimeFormat');
    try {
      const fresh = await import('../../../functions/core/time-format');
      const shown = Array.from({ length: 150 }, (_, index) =>
        fresh.formatTime(new Date(now.getTime() - index * 1000), { now, seconds: true }),
      );
      fresh.terminalClock(now);
      expect(new Set(shown).size).toBe(150);
      expect(built).not.toHaveBeenCalled();
    } finally {
      built.mockRestore();
      vi.resetModules();
    }
  });

  it("shows the same text in the viewer's own zone as in that zone named, across a year of clock changes", () => {
    // A machine in each zone (TZ, which `Date` and Intl read alike), every 3,599 s of a year: the
    // offsets' changes, a half-hour one (Lord Howe) and a zone that keeps none.
    const script = `
      import { formatTime, terminalClock } from './functions/core/time-format.ts';
      const differ = [];
      let compared = 0;
      for (const zone of ['America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'Africa/Dar_es_Salaam', 'Asia/Kolkata']) {
        process.env.TZ = zone;
        const now = new Date('2026-03-29T01:30:00Z');
        for (let at = Date.parse('2026-01-01T00:00:00Z'); at < Date.parse('2027-01-01T00:00:00Z'); at += 3_599_000) {
          const time = new Date(at);
          const own = formatTime(time, { now, seconds: true }) + ' ' + terminalClock(time);
          const named = formatTime(time, { now, seconds: true, zone }) + ' ' + terminalClock(time, { zone });
          compared += 1;
          if (own !== named) differ.push(zone + ' ' + time.toISOString() + ': ' + own + ' / ' + named);
        }
      }
      console.log(JSON.stringify({ compared, differ: differ.slice(0, 5) }));`;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../../..', import.meta.url),
      encoding: 'utf8',
    });
    const { compared, differ } = JSON.parse(output) as { compared: number; differ: string[] };
    expect(differ).toEqual([]);
    expect(compared).toBeGreaterThan(40_000);
  });

  it("asks the runtime for the machine's zone once, not at every time shown (a page of 50 rows shows 150)", () => {
    formatTime(now, { now });
    const built = vi.spyOn(Intl, 'DateTimeFormat');
    try {
      const shown = Array.from({ length: 150 }, (_, index) =>
        formatTime(new Date(now.getTime() - index * 1000), { now, seconds: true }),
      );
      expect(new Set(shown).size).toBe(150);
      expect(built).not.toHaveBeenCalled();
    } finally {
      built.mockRestore();
    }
  });
});
