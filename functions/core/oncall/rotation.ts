import { instantAt, localTime } from '../local-time';
import type { CompiledSchedule, Person } from './schedule';

/** One shift of a rotation. */
export interface Shift {
  /** 0 for the first shift (from `start`), counting up. */
  readonly index: number;
  readonly person: Person;
  /** When it began; `undefined` before the rotation's start (the first person is on call until the second shift). */
  readonly from: Date | undefined;
  /** When the next shift begins. */
  readonly until: Date;
}

/** The instant shift `index` begins: the first time the zone's wall clock shows its start. */
function shiftStart(schedule: CompiledSchedule, index: number): number {
  const { rotation, timeZone } = schedule;
  return instantAt(rotation.startWall + index * rotation.everyMs, timeZone);
}

/** What the zone's wall clock shows at `at`, as `Date.UTC` fields with milliseconds. */
function wallClock(at: number, zone: string): number {
  const { year, month, day, hour, minute, second } = localTime(new Date(at), zone);
  return Date.UTC(year, month - 1, day, hour, minute, second) + (((at % 1000) + 1000) % 1000);
}

/**
 * The rotation's shift at `at`. Shifts are counted on the zone's wall clock, whatever their
 * length: shift `n` begins when the clock first shows `start + n × every`, so a handoff at 09:00
 * stays at 09:00 across a change of the clocks, and a shift that spans the change is an hour
 * shorter or longer; a shift lying wholly in the hour the clocks skip has no length (its person is
 * passed over that once). Before `start` the first person is on call (an alert before the rotation
 * begins still reaches someone), until the second shift begins.
 *
 * @example
 * ```ts
 * shiftAt(ops, new Date('2026-12-01T10:00:00Z')); // { index: 0, person: { name: 'asha', … }, until: 2026-12-07T06:00:00Z, … }
 * ```
 */
export function shiftAt(schedule: CompiledSchedule, at: Date): Shift {
  const { rotation, timeZone } = schedule;
  const time = at.getTime();
  const personOf = (index: number): Person => rotation.people[index % rotation.people.length]!;
  if (time < shiftStart(schedule, 0))
    return { index: 0, person: personOf(0), from: undefined, until: new Date(shiftStart(schedule, 1)) };
  // The wall clock names the shift; near a change of the clocks the instants decide.
  let index = Math.max(0, Math.floor((wallClock(time, timeZone) - rotation.startWall) / rotation.everyMs));
  while (shiftStart(schedule, index + 1) <= time) index += 1;
  while (index > 0 && shiftStart(schedule, index) > time) index -= 1;
  return {
    index,
    person: personOf(index),
    from: new Date(shiftStart(schedule, index)),
    until: new Date(shiftStart(schedule, index + 1)),
  };
}
