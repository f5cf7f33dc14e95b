import { type LocalTime, localTime, offsetMs, ownLocalTime } from './local-time';

/**
 * The one way a person is shown a time, on the terminal, in the CLI, on the acknowledge page and in
 * the console (bundled for the browser too: no Node import here): 24-hour; the zone named whenever
 * its clock is not the viewer's (the terminal and the CLI: the machine's zone or `--tz`; the
 * console: the browser's; a page anyone may open: always named); and, for recent events and near
 * deadlines, how long ago or how soon (`3 min ago`, `in 12 min`). `--json` and the APIs keep
 * ISO-8601 UTC: this is for people only.
 */

/** Within this of now, a time also says how long ago or how soon it is. */
export const RECENT_MS = 60 * 60_000;

/** Who is looking: their zone, and now. */
export interface Viewer {
  /**
   * The viewer's IANA zone: a time in it is shown without a zone name.
   * @default the machine's (or the browser's) zone
   */
  readonly zone?: string;
  /**
   * Now, for "N min ago" and for whether a time is today.
   * @default new Date()
   */
  readonly now?: Date;
}

/** How one time is shown. */
export interface TimeFormatOptions extends Viewer {
  /**
   * The zone to show the time in (a route's, for its quiet hours or a mute).
   * @default the viewer's zone
   */
  readonly in?: string;
  /**
   * Seconds too (`14:02:09`), for a terminal line.
   * @default false
   */
  readonly seconds?: boolean;
  /**
   * Add `(3 min ago)` / `(in 12 min)` when within {@link RECENT_MS} of now.
   * @default true
   */
  readonly relative?: boolean;
}

let ownZone: string | undefined;

/**
 * The zone of this machine (or browser): what `TZ` names, else the system's. Read once per process
 * (or page): building a date formatter to ask costs about as much as formatting 50 times, and the
 * console's Activity page shows three times a row.
 */
export function machineZone(): string {
  ownZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return ownZone;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/**
 * `14:02`, `14:02 (3 min ago)`, `2026-12-04 17:04`, `21:06 Africa/Dar_es_Salaam (in 12 min)`: the
 * date only when it is not the viewer's today in that zone, the zone only when its clock reads
 * otherwise than the viewer's at that time (`Etc/UTC` for a viewer on `UTC` is not named, nor
 * `Europe/Paris` for one in Berlin). No time (`null`, `undefined`, not a date): `-`.
 *
 * @example
 * ```ts
 * formatTime('2026-12-04T18:06:00Z', { in: 'Africa/Dar_es_Salaam', zone: 'Europe/Berlin', now }); // '21:06 Africa/Dar_es_Salaam (in 12 min)'
 * ```
 */
export function formatTime(at: Date | string | null | undefined, options: TimeFormatOptions = {}): string {
  const time = typeof at === 'string' ? new Date(at) : at;
  if (time === null || time === undefined || Number.isNaN(time.getTime())) return '-';
  const now = options.now ?? new Date();
  const seconds = options.seconds === true;
  let named: string;
  if (options.in === undefined && options.zone === undefined) {
    // The viewer's own zone (the console's rows): read from `Date` alone, and never named.
    named = dateAndClock(ownLocalTime(time), ownLocalTime(now), seconds);
  } else {
    const viewer = options.zone ?? machineZone();
    const zone = options.in ?? viewer;
    const shown = dateAndClock(localTime(time, zone), localTime(now, zone), seconds);
    named = zone === viewer || offsetMs(time, zone) === offsetMs(time, viewer) ? shown : `${shown} ${zone}`;
  }
  const recent = options.relative === false ? undefined : relativeTime(time, now);
  return recent === undefined ? named : `${named} (${recent})`;
}

/** `14:02` (`14:02:09` with seconds) on `today`, else `2026-12-04 14:02`: the date only when it is not today. */
function dateAndClock(local: LocalTime, today: LocalTime, seconds: boolean): string {
  const clock = `${pad(local.hour)}:${pad(local.minute)}${seconds ? `:${pad(local.second)}` : ''}`;
  const sameDay = local.year === today.year && local.month === today.month && local.day === today.day;
  return sameDay ? clock : `${local.year}-${pad(local.month)}-${pad(local.day)} ${clock}`;
}

/**
 * A route's time in a reason stored on a record (`muted until 21:06 Africa/Dar_es_Salaam`, `quiet
 * hours until 07:00`): on the route's clock, its zone named when the relay's clock reads otherwise
 * (the reason is read beside the relay's own times: its terminal line, `logs`; on AWS the relay's
 * clock is UTC), and no "(in 12 min)", which a stored reason would keep long after.
 *
 * @param relayZone the zone the relay's times are shown in; @default the machine's
 */
export function reasonTime(at: Date | string, routeZone: string, now: Date, relayZone: string = machineZone()): string {
  return formatTime(at, { in: routeZone, zone: relayZone, now, relative: false });
}

/**
 * `just now`, `3 min ago`, `in 12 min`, for a time within {@link RECENT_MS} of now; `undefined`
 * further off (the clock time says it better).
 */
export function relativeTime(at: Date, now: Date = new Date()): string | undefined {
  const ms = at.getTime() - now.getTime();
  if (Math.abs(ms) > RECENT_MS) return undefined;
  const minutes = Math.round(Math.abs(ms) / 60_000);
  if (minutes === 0) return ms <= 0 ? 'just now' : 'in under a minute';
  return ms < 0 ? `${minutes} min ago` : `in ${minutes} min`;
}

/**
 * `14:02:09` in the viewer's zone, no date and no relative part: the first column of a terminal
 * line, kept as the README shows it.
 */
export function terminalClock(at: Date | string, viewer: Viewer = {}): string {
  const time = typeof at === 'string' ? new Date(at) : at;
  if (Number.isNaN(time.getTime())) return '--:--:--';
  const local = viewer.zone === undefined ? ownLocalTime(time) : localTime(time, viewer.zone);
  return `${pad(local.hour)}:${pad(local.minute)}:${pad(local.second)}`;
}

/**
 * A chart axis's tick in the viewer's zone, as fine as the ticks' step: `2026-12` a month or more
 * apart, `12-04` a day or more, else `17:04` (the Credit chart's time axis, instead of the chart
 * library's `12/4/26 5:04pm`).
 *
 * @param at the tick's time
 * @param stepSeconds seconds between two ticks
 */
export function axisTick(at: Date, stepSeconds: number, viewer: Pick<Viewer, 'zone'> = {}): string {
  const local = localTime(at, viewer.zone ?? machineZone());
  if (stepSeconds >= 28 * 86_400) return `${local.year}-${pad(local.month)}`;
  if (stepSeconds >= 86_400) return `${pad(local.month)}-${pad(local.day)}`;
  return `${pad(local.hour)}:${pad(local.minute)}`;
}
