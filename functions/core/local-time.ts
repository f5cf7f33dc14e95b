/**
 * Wall-clock time in a route's time zone, without LiquidJS (the sender and the sweeper render no
 * templates): the calendar month a monthly budget counts in, the end of a quiet period, the `14:30`
 * of a mute, a heartbeat or a digest SMS, and durations as the config writes them and as an SMS says
 * them. One formatter per zone, built on first use.
 */

const formatters = new Map<string, Intl.DateTimeFormat | undefined>();

/** The zone's formatter, or `undefined` for a zone this runtime does not know (remembered too: templates may name one per webhook). */
function formatterOf(zone: string): Intl.DateTimeFormat | undefined {
  if (formatters.has(zone)) return formatters.get(zone);
  let built: Intl.DateTimeFormat | undefined;
  try {
    built = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
  } catch {
    built = undefined;
  }
  formatters.set(zone, built);
  return built;
}

function formatter(zone: string): Intl.DateTimeFormat {
  const built = formatterOf(zone);
  if (built === undefined) throw new RangeError(`unknown time zone "${zone}"`);
  return built;
}

/** Whether `zone` is an IANA time zone this runtime knows (`Africa/Dar_es_Salaam`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  return formatterOf(zone) !== undefined;
}

/** The wall-clock fields of a time in a zone. */
export interface LocalTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

/** The wall-clock fields of `at` in `zone`. */
export function localTime(at: Date, zone: string): LocalTime {
  const parts: Record<string, string> = {};
  for (const { type, value } of formatter(zone).formatToParts(at)) parts[type] = value;
  const year = Number(parts['year']);
  return {
    // Astronomical years before the common era (1 BC is year 0), as Date.UTC counts them.
    year: parts['era'] === 'BC' ? 1 - year : year,
    month: Number(parts['month']),
    day: Number(parts['day']),
    hour: Number(parts['hour']) % 24,
    minute: Number(parts['minute']),
    second: Number(parts['second']),
  };
}

/**
 * The wall-clock fields of `at` on this machine's (or browser's) own clock, read from `Date` alone:
 * the same fields as {@link localTime} in that zone, without a date formatter, whose first use in a
 * page starts the runtime's ICU (35-265 ms in Chromium at load 15, before a row can be drawn).
 */
export function ownLocalTime(at: Date): LocalTime {
  return {
    year: at.getFullYear(),
    month: at.getMonth() + 1,
    day: at.getDate(),
    hour: at.getHours(),
    minute: at.getMinutes(),
    second: at.getSeconds(),
  };
}

const pad = (value: number): string => String(value).padStart(2, '0');

/** Milliseconds `zone` is ahead of UTC at `at` (whole seconds: the wall clock shows no more). */
export function offsetMs(at: Date, zone: string): number {
  const { year, month, day, hour, minute, second } = localTime(at, zone);
  return Date.UTC(year, month - 1, day, hour, minute, second) - Math.floor(at.getTime() / 1000) * 1000;
}

const DAY_MS = 86_400_000;

/** What the wall clock in `zone` shows at `at`, as `Date.UTC` fields read as one number. */
const wallAt = (at: number, zone: string): number => at + offsetMs(new Date(at), zone);

/**
 * The first instant (epoch ms) at which the wall clock in `zone` shows `wall`, its fields read as
 * UTC (`Date.UTC(year, month - 1, day, hour, minute)`), or a later time: the one instant that time
 * names; the earlier of two when the clocks go back over it; and when they skip it (01:30 on the
 * night the clocks go from 01:00 to 02:00), the instant they skip it at (02:00), so a period that
 * ends at a time that never shows ends once, for every message in it.
 */
export function instantAt(wall: number, zone: string): number {
  // The offsets before and after any change of the clocks near that time (at most one a day).
  const before = wall - offsetMs(new Date(wall - DAY_MS), zone);
  const after = wall - offsetMs(new Date(wall + DAY_MS), zone);
  if (before === after) return before;
  const shown = [before, after].filter((at) => wallAt(at, zone) === wall);
  if (shown.length > 0) return Math.min(...shown);
  // Skipped: the clock shows less than `wall` at `after` and more at `before`; the jump between
  // them falls on a whole second.
  let low = after;
  let high = before;
  while (high - low > 1000) {
    const middle = low + Math.floor((high - low) / 2000) * 1000;
    if (wallAt(middle, zone) >= wall) high = middle;
    else low = middle;
  }
  return high;
}

/**
 * The bounds of the calendar month of `at` in `zone`, in epoch milliseconds: from local midnight on
 * the first to local midnight on the first of the next month.
 */
export function monthBounds(
  at: Date,
  zone: string,
): { readonly month: string; readonly startsAt: number; readonly endsAt: number } {
  const { year, month } = localTime(at, zone);
  return {
    month: `${year}-${pad(month)}`,
    startsAt: instantAt(Date.UTC(year, month - 1, 1), zone),
    endsAt: instantAt(Date.UTC(year, month, 1), zone),
  };
}

/**
 * `14:30` for a time on the same local day as `now`, `2026-11-28 14:30` for another day: what a
 * mute's or a heartbeat's SMS says.
 */
export function clockTime(at: Date, zone: string, now: Date = at): string {
  const local = localTime(at, zone);
  const today = localTime(now, zone);
  const time = `${pad(local.hour)}:${pad(local.minute)}`;
  const sameDay = local.year === today.year && local.month === today.month && local.day === today.day;
  return sameDay ? time : `${local.year}-${pad(local.month)}-${pad(local.day)} ${time}`;
}

/** A number of seconds as the config writes it: `5m`, `2h`, `90s`, `1d`. */
export function formatSeconds(seconds: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

/** A span as people say it in an SMS: `47 min`, `3 h 5 min`, `2 d 4 h`. */
export function formatSpan(ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** A configured length as an SMS says it, exactly: `10 min`, `2 h`, `90 s` (a digest's window). */
export function spokenDuration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
