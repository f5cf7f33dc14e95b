/**
 * Quiet hours and digest windows, as pure time arithmetic in a route's time zone (through
 * `local-time.ts`, no LiquidJS: the sweeper uses this too). The store keeps the windows' state;
 * this only says when a window ends and how the digest SMS describes it.
 */
import { instantAt, localTime } from './local-time';

/** The days of `quietHours.days`, in the order `Date#getUTCDay` counts them. */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A route's `quietHours`: from `from` to `to` (HH:MM, the route's zone), starting on `days`. */
export interface QuietHours {
  readonly from: string;
  readonly to: string;
  readonly days: readonly Weekday[];
}

/** Why a message waits, and until when: the end of the window it belongs to. */
export interface Deferral {
  readonly until: Date;
  readonly reason: string;
}

const MINUTE_MS = 60_000;
const DAY_MINUTES = 24 * 60;

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/**
 * When the quiet period `at` falls in ends, or `undefined` outside quiet hours. A period belongs to
 * the day it starts on: `22:00`–`07:00` on `fri` covers Friday night into Saturday morning. It runs
 * from the first instant the clock shows `from` to the first it shows `to` (see `instantAt`): one
 * start and one end even on the nights the clocks change.
 *
 * @example
 * ```ts
 * quietUntil(new Date('2026-11-26T20:30:00Z'), { from: '22:00', to: '07:00', days: ['thu'] }, 'Africa/Dar_es_Salaam');
 * // 2026-11-27T04:00:00.000Z (07:00 in Dar es Salaam)
 * ```
 */
export function quietUntil(at: Date, quiet: QuietHours, zone: string): Date | undefined {
  const local = localTime(at, zone);
  const today = Date.UTC(local.year, local.month - 1, local.day);
  const from = minutesOf(quiet.from);
  const length = (minutesOf(quiet.to) - from + DAY_MINUTES) % DAY_MINUTES;
  // A period that started today, and one that started yesterday and runs past midnight.
  for (const daysBack of [0, 1]) {
    const day = today - daysBack * DAY_MINUTES * MINUTE_MS;
    if (!quiet.days.includes(WEEKDAYS[new Date(day).getUTCDay()]!)) continue;
    if (at.getTime() < instantAt(day + from * MINUTE_MS, zone)) continue;
    const endsAt = instantAt(day + (from + length) * MINUTE_MS, zone);
    if (at.getTime() < endsAt) return new Date(endsAt);
  }
  return undefined;
}

/**
 * A route's digest template when it sets no `digestTemplate`: the one message as it is when the
 * window held only one, else the count, the window and the texts, oldest first (fitted to one SMS
 * afterwards): `12 orders in 10 min: #1042 TZS 25,000; #1043 …`, with the source pack's `digestNoun`.
 *
 * @example
 * ```ts
 * defaultDigestTemplate('orders'); // '{% if count == 1 %}{{ messages[0] }}{% else %}{{ count }} orders {{ window }}: …'
 * ```
 */
export function defaultDigestTemplate(noun = 'messages'): string {
  return `{% if count == 1 %}{{ messages[0] }}{% else %}{{ count }} ${noun} {{ window }}: {{ messages | join: "; " }}{% endif %}`;
}

/** The variables a digest template renders with. */
export interface DigestScope {
  readonly count: number;
  /** The texts that would have been sent, oldest first. */
  readonly messages: readonly string[];
  /** When the oldest and the newest of them were accepted (ISO 8601; `| date` shows them in the route's zone). */
  readonly first: string;
  readonly last: string;
  readonly route: string;
  /** How the window reads in a sentence: `in 10 min` (a digest window) or `since 22:00` (quiet hours). */
  readonly window: string;
}
