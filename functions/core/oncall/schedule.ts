/**
 * A schedule as the relay uses it: the config's `schedules.<name>` with its people's numbers
 * normalised and its start read, built once at config load by `compileSchedules`.
 */

/** A person of the config's `people`, the number normalised (`255` + nine digits). */
export interface Person {
  readonly name: string;
  readonly number: string;
  /** `people.<name>.email`, lower-cased: how tools that page by user (Opsgenie) name the person. */
  readonly email?: string;
}

/** A rotation: `people` take turns of `everyMs`, counted on the zone's wall clock from `startWall`. */
export interface Rotation {
  /** In turn order; a name may appear more than once. */
  readonly people: readonly Person[];
  /** The length of a shift on the wall clock, in ms (at least a minute). */
  readonly everyMs: number;
  /** The first shift's start as the zone's wall clock shows it, its fields read as UTC (`Date.UTC(2026, 10, 30, 9, 0)`). */
  readonly startWall: number;
}

/** One schedule, compiled. */
export interface CompiledSchedule {
  readonly name: string;
  /** IANA zone the rotation's start and shifts are counted in. */
  readonly timeZone: string;
  readonly rotation: Rotation;
  /** Tell each person when their shift begins (`notifyHandoff`). */
  readonly notifyHandoff: boolean;
}

/** The config's `people` and `schedules`, compiled: what `person:` and `oncall:` recipients name. */
export interface OnCallDirectory {
  readonly people: ReadonlyMap<string, Person>;
  readonly schedules: ReadonlyMap<string, CompiledSchedule>;
  /** Each person's `email:` (lower-cased) to their name: one person per address. */
  readonly byEmail: ReadonlyMap<string, string>;
}

/** A directory naming nobody: a config without `people` and `schedules`. */
export const NO_ONE: OnCallDirectory = Object.freeze({
  people: new Map<string, Person>(),
  schedules: new Map<string, CompiledSchedule>(),
  byEmail: new Map<string, string>(),
});

/** `2026-11-30T09:00`: a wall-clock time without a zone, as `rotation.start` is written. */
const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/;

/**
 * Reads `2026-11-30T09:00` as wall-clock fields (`Date.UTC` of them), or `undefined` when it is not
 * that shape or not a real date and time (`2026-02-30T09:00`, `24:00`).
 *
 * @example
 * ```ts
 * parseLocalDateTime('2026-11-30T09:00'); // Date.UTC(2026, 10, 30, 9, 0)
 * ```
 */
export function parseLocalDateTime(text: string): number | undefined {
  const match = LOCAL_DATE_TIME.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hour, minute] = match.slice(1).map(Number) as [number, number, number, number, number];
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  const back = new Date(wall);
  const same =
    back.getUTCFullYear() === year &&
    back.getUTCMonth() === month - 1 &&
    back.getUTCDate() === day &&
    back.getUTCHours() === hour &&
    back.getUTCMinutes() === minute;
  return same ? wall : undefined;
}
