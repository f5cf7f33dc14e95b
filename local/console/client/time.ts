/**
 * The console's one time format: 24-hour, in the browser's zone, the date only when not today;
 * another zone's time (a route's, a schedule's) names its zone; recent events and near deadlines
 * say how far: `14:02 (3 min ago)`, `09:00 (in 2 h)`. Never ISO with a Z.
 *
 * The one module the pages take times from: when the CLI's shared time format lands, this is the
 * file to point at it.
 */

import { localTime } from '../../../functions/core/local-time';

/** Within this, an event or a deadline also says how far it is. */
const NEAR_MS = 24 * 3_600_000;

const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;

function valid(iso: string | null | undefined): Date | null {
  if (!iso) return null;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

const pad2 = (value: number): string => String(value).padStart(2, '0');

/** `date` on `timeZone`'s clock, two digits a field (the year whole): the relay's one formatter per zone. */
function parts(date: Date, timeZone: string): Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', string> {
  const at = localTime(date, timeZone);
  return {
    year: String(at.year),
    month: pad2(at.month),
    day: pad2(at.day),
    hour: pad2(at.hour),
    minute: pad2(at.minute),
    second: pad2(at.second),
  };
}

/** Whether `timeZone`'s clock reads the same as the browser's at `date` (then it is not named). */
function sameClock(date: Date, timeZone: string): boolean {
  const a = parts(date, timeZone);
  const b = parts(date, browserZone());
  return a.hour === b.hour && a.minute === b.minute && a.day === b.day;
}

export interface ClockOptions {
  /** Whose clock: a route's or a schedule's zone. @default the browser's */
  readonly timeZone?: string;
  /** `14:02:11` instead of `14:02`. @default false */
  readonly seconds?: boolean;
  /** Now, for "today" and the distance. @default the current time */
  readonly now?: Date;
  /** Adds `(3 min ago)` / `(in 2 h)` when within a day. @default false */
  readonly relative?: boolean;
}

/**
 * A time on one clock: `14:02` today, `12-04 14:02` another day this year, `2025-12-04 14:02`
 * before; `09:00 Africa/Dar_es_Salaam` when `timeZone`'s clock is not the browser's.
 *
 * @example
 * ```ts
 * clock('2026-12-05T02:52:02.967Z'); // '03:52' in Europe/Berlin
 * clock(at, { timeZone: 'Africa/Dar_es_Salaam', relative: true }); // '05:52 Africa/Dar_es_Salaam (just now)'
 * ```
 */
export function clock(iso: string | null | undefined, options: ClockOptions = {}): string {
  const date = valid(iso);
  if (!date) return iso ?? '—';
  const now = options.now ?? new Date();
  const zone = options.timeZone ?? browserZone();
  const at = parts(date, zone);
  const today = parts(now, zone);
  const time = `${at.hour}:${at.minute}${options.seconds ? `:${at.second}` : ''}`;
  const day =
    at.year === today.year && at.month === today.month && at.day === today.day
      ? time
      : at.year === today.year
        ? `${at.month}-${at.day} ${time}`
        : `${at.year}-${at.month}-${at.day} ${time}`;
  const named =
    options.timeZone === undefined || sameClock(date, options.timeZone) ? day : `${day} ${options.timeZone}`;
  const distance = Math.abs(date.getTime() - now.getTime());
  return options.relative && distance < NEAR_MS ? `${named} (${fromNow(iso, now.getTime())})` : named;
}

/** `just now`, `3 min ago`, `2 h ago`, `5 d ago`; ahead: `in 3 min`, `in 2 h`. */
export function fromNow(iso: string | null | undefined, now = Date.now()): string {
  const date = valid(iso);
  if (!date) return 'never';
  const ms = date.getTime() - now;
  const seconds = Math.round(Math.abs(ms) / 1000);
  if (seconds < 45) return 'just now';
  const size =
    seconds < 3600
      ? `${Math.max(1, Math.round(seconds / 60))} min`
      : seconds < 86_400
        ? `${Math.floor(seconds / 3600)} h`
        : `${Math.floor(seconds / 86_400)} d`;
  return ms < 0 ? `${size} ago` : `in ${size}`;
}

/**
 * A chart axis's tick, in the browser's zone, as fine as the ticks' step: `2026-12`, `12-04`, `17:04`.
 *
 * @param seconds the tick, in seconds since the epoch (uPlot's time scale)
 * @param step seconds between two ticks
 */
export function tick(seconds: number, step: number): string {
  const at = parts(new Date(seconds * 1000), browserZone());
  if (step >= 28 * 86_400) return `${at.year}-${at.month}`;
  if (step >= 86_400) return `${at.month}-${at.day}`;
  return `${at.hour}:${at.minute}`;
}
