import { describe, expect, it } from 'vitest';
import {
  compileOnCall,
  onCallAt,
  shiftAt,
  type CompiledSchedule,
  type OnCallDirectory,
  type OnCallOverride,
} from '../../../../functions/core/oncall';

const PEOPLE = { asha: { phone: '0712345678' }, baraka: { phone: '0754000111' }, chuma: { phone: '0765000222' } };

function directory(
  timezone: string,
  every: number,
  start: string,
  people: string[] = ['asha', 'baraka'],
): OnCallDirectory {
  const problems: string[] = [];
  const compiled = compileOnCall(
    PEOPLE,
    { ops: { timezone, rotation: { people, every, start }, notifyHandoff: false } },
    problems,
  );
  expect(problems).toEqual([]);
  return compiled;
}

const schedule = (compiled: OnCallDirectory): CompiledSchedule => compiled.schedules.get('ops')!;
const at = (iso: string): Date => new Date(iso);
const who = (compiled: OnCallDirectory, iso: string): { person: string; from: string | undefined; until: string } => {
  const shift = shiftAt(schedule(compiled), at(iso));
  return { person: shift.person.name, from: shift.from?.toISOString(), until: shift.until.toISOString() };
};

const WEEK = 7 * 86_400;
const DAY = 86_400;

describe('shiftAt: a zone without daylight saving (Africa/Dar_es_Salaam, UTC+3)', () => {
  it('hands a weekly shift over at 09:00 local every Monday', () => {
    const ops = directory('Africa/Dar_es_Salaam', WEEK, '2026-11-30T09:00');
    expect(who(ops, '2026-11-30T06:00:00.000Z')).toEqual({
      person: 'asha',
      from: '2026-11-30T06:00:00.000Z',
      until: '2026-12-07T06:00:00.000Z',
    });
    expect(who(ops, '2026-12-07T05:59:59.999Z').person).toBe('asha');
    expect(who(ops, '2026-12-07T06:00:00.000Z')).toEqual({
      person: 'baraka',
      from: '2026-12-07T06:00:00.000Z',
      until: '2026-12-14T06:00:00.000Z',
    });
    expect(who(ops, '2026-12-14T06:00:00.000Z').person).toBe('asha');
    // A year on: shift 52 (even), still at 09:00 local.
    expect(who(ops, '2027-11-30T10:00:00.000Z')).toEqual({
      person: 'asha',
      from: '2027-11-29T06:00:00.000Z',
      until: '2027-12-06T06:00:00.000Z',
    });
  });

  it('takes daily, 12-hour and one-minute shifts in turn', () => {
    const daily = directory('Africa/Dar_es_Salaam', DAY, '2026-11-30T09:00', ['asha', 'baraka', 'chuma']);
    expect(
      ['2026-11-30T07:00:00Z', '2026-12-01T07:00:00Z', '2026-12-02T07:00:00Z', '2026-12-03T07:00:00Z'].map(
        (iso) => who(daily, iso).person,
      ),
    ).toEqual(['asha', 'baraka', 'chuma', 'asha']);
    const halves = directory('Africa/Dar_es_Salaam', 12 * 3600, '2026-11-30T09:00');
    expect(who(halves, '2026-11-30T18:00:00Z')).toEqual({
      person: 'baraka',
      from: '2026-11-30T18:00:00.000Z',
      until: '2026-12-01T06:00:00.000Z',
    });
    const minutes = directory('Africa/Dar_es_Salaam', 60, '2026-11-30T09:00');
    expect(who(minutes, '2026-11-30T06:00:30Z')).toEqual({
      person: 'asha',
      from: '2026-11-30T06:00:00.000Z',
      until: '2026-11-30T06:01:00.000Z',
    });
    expect(who(minutes, '2026-11-30T06:01:00Z').person).toBe('baraka');
    expect(who(minutes, '2026-11-30T06:59:59Z')).toEqual({
      person: 'baraka',
      from: '2026-11-30T06:59:00.000Z',
      until: '2026-11-30T07:00:00.000Z',
    });
  });

  it('puts the first person on call before the rotation starts, until the second shift', () => {
    const ops = directory('Africa/Dar_es_Salaam', WEEK, '2026-11-30T09:00');
    expect(who(ops, '2026-11-28T07:30:00Z')).toEqual({
      person: 'asha',
      from: undefined,
      until: '2026-12-07T06:00:00.000Z',
    });
  });
});

describe('shiftAt: a zone with daylight saving (Europe/London)', () => {
  it('keeps a weekly 09:00 handoff at 09:00 local across both changes of the clocks', () => {
    const spring = directory('Europe/London', WEEK, '2027-03-22T09:00');
    // 09:00 GMT is 09:00Z; after the clocks go forward on 28 March, 09:00 BST is 08:00Z.
    expect(who(spring, '2027-03-29T07:59:59Z')).toEqual({
      person: 'asha',
      from: '2027-03-22T09:00:00.000Z',
      until: '2027-03-29T08:00:00.000Z',
    });
    expect(who(spring, '2027-03-29T08:00:00Z')).toEqual({
      person: 'baraka',
      from: '2027-03-29T08:00:00.000Z',
      until: '2027-04-05T08:00:00.000Z',
    });
    const autumn = directory('Europe/London', WEEK, '2027-10-25T09:00');
    // The clocks go back on 31 October: that week's shift is an hour longer.
    expect(who(autumn, '2027-11-01T08:30:00Z')).toEqual({
      person: 'asha',
      from: '2027-10-25T08:00:00.000Z',
      until: '2027-11-01T09:00:00.000Z',
    });
    expect(who(autumn, '2027-11-01T09:00:00Z').person).toBe('baraka');
  });

  it('keeps daily and 12-hour handoffs on the wall clock: the shift over the change is an hour shorter', () => {
    const daily = directory('Europe/London', DAY, '2027-03-27T09:00', ['asha', 'baraka', 'chuma']);
    expect(who(daily, '2027-03-28T08:00:00Z')).toEqual({
      person: 'baraka',
      from: '2027-03-28T08:00:00.000Z',
      until: '2027-03-29T08:00:00.000Z',
    });
    const halves = directory('Europe/London', 12 * 3600, '2027-03-27T09:00');
    expect(who(halves, '2027-03-27T21:00:00Z')).toEqual({
      person: 'baraka',
      from: '2027-03-27T21:00:00.000Z',
      until: '2027-03-28T08:00:00.000Z',
    });
    expect(who(halves, '2027-03-28T20:00:00Z')).toEqual({
      person: 'baraka',
      from: '2027-03-28T20:00:00.000Z',
      until: '2027-03-29T08:00:00.000Z',
    });
  });

  it('passes over one-minute shifts in the hour the clocks skip, and stretches the last one over the hour they repeat', () => {
    // 28 March 2027: 01:00 GMT becomes 02:00 BST at 01:00Z. Shifts of 01:00 to 01:59 have no length; 02:00's is index 62.
    const spring = directory('Europe/London', 60, '2027-03-28T00:58');
    expect(who(spring, '2027-03-28T00:59:30Z')).toEqual({
      person: 'baraka',
      from: '2027-03-28T00:59:00.000Z',
      until: '2027-03-28T01:00:00.000Z',
    });
    expect(shiftAt(schedule(spring), at('2027-03-28T01:00:30Z'))).toMatchObject({
      index: 62,
      person: { name: 'asha' },
      until: at('2027-03-28T01:01:00Z'),
    });
    // 31 October 2027: 02:00 BST becomes 01:00 GMT at 01:00Z; the wall clock shows 01:00 to 01:59 twice.
    const autumn = directory('Europe/London', 60, '2027-10-31T00:58');
    expect(shiftAt(schedule(autumn), at('2027-10-31T00:30:30Z'))).toMatchObject({
      index: 32,
      from: at('2027-10-31T00:30:00Z'),
    });
    expect(shiftAt(schedule(autumn), at('2027-10-31T01:30:00Z'))).toMatchObject({
      index: 61,
      from: at('2027-10-31T00:59:00Z'),
      until: at('2027-10-31T02:00:00Z'),
    });
  });
});

describe('onCallAt: overrides', () => {
  const ops = directory('Africa/Dar_es_Salaam', WEEK, '2026-11-30T09:00', ['asha', 'baraka']);
  const override = (
    person: string,
    from: string,
    hours: number,
    createdAt = from,
    scheduleName = 'ops',
  ): OnCallOverride => ({
    id: `01K${createdAt.replace(/\D/g, '').slice(0, 14)}${person.toUpperCase().padEnd(9, 'X').slice(0, 9)}`,
    schedule: scheduleName,
    person,
    from,
    until: new Date(Date.parse(from) + hours * 3_600_000).toISOString(),
    reason: '',
    createdAt,
  });
  const now = (
    overrides: OnCallOverride[],
    iso: string,
  ): { person: string; until: string | undefined; override: boolean } => {
    const found = onCallAt(schedule(ops), overrides, ops.people, at(iso));
    return { person: found.person.name, until: found.until?.toISOString(), override: found.override !== undefined };
  };

  it("puts the override's person on call until it ends, then the rotation again", () => {
    const overrides = [override('baraka', '2026-12-01T10:00:00.000Z', 8)];
    expect(now(overrides, '2026-12-01T09:59:59Z')).toEqual({
      person: 'asha',
      until: '2026-12-01T10:00:00.000Z',
      override: false,
    });
    expect(now(overrides, '2026-12-01T12:00:00Z')).toEqual({
      person: 'baraka',
      until: '2026-12-01T18:00:00.000Z',
      override: true,
    });
    expect(now(overrides, '2026-12-01T18:00:00Z')).toEqual({
      person: 'asha',
      until: '2026-12-07T06:00:00.000Z',
      override: false,
    });
  });

  it('lets the newest override in force win, and the one it covers resume when it ends', () => {
    const overrides = [
      override('baraka', '2026-12-01T10:00:00.000Z', 8),
      override('chuma', '2026-12-01T11:00:00.000Z', 2),
    ];
    expect(now(overrides, '2026-12-01T12:00:00Z')).toEqual({
      person: 'chuma',
      until: '2026-12-01T13:00:00.000Z',
      override: true,
    });
    expect(now(overrides, '2026-12-01T13:00:00Z')).toEqual({
      person: 'baraka',
      until: '2026-12-01T18:00:00.000Z',
      override: true,
    });
  });

  it('counts until the person changes: an override of the person on call runs on past the handoff', () => {
    // asha's shift ends 06:00Z on 7 December; her override keeps her on until 13:00Z.
    expect(now([override('asha', '2026-12-07T05:00:00.000Z', 8)], '2026-12-07T05:30:00Z')).toEqual({
      person: 'asha',
      until: '2026-12-07T13:00:00.000Z',
      override: true,
    });
  });

  it("ignores another schedule's overrides and overrides of people no longer in people", () => {
    const overrides = [
      override('baraka', '2026-12-01T10:00:00.000Z', 8, undefined, 'db'),
      override('zawadi', '2026-12-01T10:00:00.000Z', 8),
    ];
    expect(now(overrides, '2026-12-01T12:00:00Z')).toEqual({
      person: 'asha',
      until: '2026-12-07T06:00:00.000Z',
      override: false,
    });
  });

  it('says no end for a rotation of one person', () => {
    const alone = directory('Africa/Dar_es_Salaam', DAY, '2026-11-30T09:00', ['asha']);
    expect(onCallAt(schedule(alone), [], alone.people, at('2026-12-01T12:00:00Z'))).toMatchObject({
      person: { name: 'asha' },
      until: undefined,
    });
  });
});
