import type { Person, CompiledSchedule } from './schedule';
import { shiftAt } from './rotation';

/**
 * An override: `person` is on call for `schedule` from `from` until `until`, whatever the rotation
 * says (`sms-relay oncall override`). Kept in the table; times are ISO-8601 UTC.
 */
export interface OnCallOverride {
  readonly id: string;
  readonly schedule: string;
  /** A name of the config's `people`. */
  readonly person: string;
  readonly from: string;
  readonly until: string;
  readonly reason: string;
  readonly createdAt: string;
}

/** Who is on call for a schedule at an instant, and until when. */
export interface OnCallNow {
  readonly schedule: string;
  readonly person: Person;
  /** When someone else takes over; `undefined` when nobody ever does (a rotation of one person). */
  readonly until: Date | undefined;
  /** The override that put `person` on call, if one did. */
  readonly override: OnCallOverride | undefined;
}

/** People to look up an override's name in: the compiled config's `people`. */
export type People = ReadonlyMap<string, Person>;

const isNewer = (a: OnCallOverride, b: OnCallOverride): boolean =>
  a.createdAt === b.createdAt ? a.id > b.id : a.createdAt > b.createdAt;

/** The newest override of the schedule in force at `time` whose person is still in `people`. */
function winningOverride(
  schedule: string,
  overrides: readonly OnCallOverride[],
  people: People,
  time: number,
): OnCallOverride | undefined {
  let winner: OnCallOverride | undefined;
  for (const override of overrides) {
    if (override.schedule !== schedule || !people.has(override.person)) continue;
    if (Date.parse(override.from) > time || Date.parse(override.until) <= time) continue;
    if (winner === undefined || isNewer(override, winner)) winner = override;
  }
  return winner;
}

function whoAt(
  schedule: CompiledSchedule,
  overrides: readonly OnCallOverride[],
  people: People,
  time: number,
): { readonly person: Person; readonly override: OnCallOverride | undefined } {
  const override = winningOverride(schedule.name, overrides, people, time);
  if (override !== undefined) return { person: people.get(override.person)!, override };
  return { person: shiftAt(schedule, new Date(time)).person, override: undefined };
}

/**
 * Who is on call for `schedule` at `at`: the newest override in force (an override set later wins
 * over one set earlier; an override whose person was removed from `people` is ignored), else the
 * rotation's person; and until when, that is the next instant someone else is, across shifts and
 * overrides.
 *
 * @example
 * ```ts
 * const now = onCallAt(ops, overrides, people, new Date());
 * `${now.person.name} until ${now.until?.toISOString() ?? 'further notice'}`;
 * ```
 */
export function onCallAt(
  schedule: CompiledSchedule,
  overrides: readonly OnCallOverride[],
  people: People,
  at: Date,
): OnCallNow {
  const time = at.getTime();
  const current = whoAt(schedule, overrides, people, time);
  const own = overrides.filter((override) => override.schedule === schedule.name);
  const bounds = own.flatMap((override) => [Date.parse(override.from), Date.parse(override.until)]);
  // Each step passes one shift or one override bound; the person changes within the rotation's length unless nobody else is in it.
  const steps = 2 * (schedule.rotation.people.length + bounds.length) + 4;
  let cursor = time;
  for (let step = 0; step < steps; step += 1) {
    const inForce = winningOverride(schedule.name, own, people, cursor) !== undefined;
    // Under an override the rotation's handoffs change nothing: only an override's bounds can.
    const candidates = bounds.filter((bound) => bound > cursor);
    if (!inForce) candidates.push(shiftAt(schedule, new Date(cursor)).until.getTime());
    if (candidates.length === 0) break;
    cursor = Math.min(...candidates);
    if (whoAt(schedule, own, people, cursor).person.name !== current.person.name)
      return { schedule: schedule.name, ...current, until: new Date(cursor) };
  }
  return { schedule: schedule.name, ...current, until: undefined };
}
