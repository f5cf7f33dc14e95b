import { filters } from 'liquidjs';
import { isTimeZone, offsetMs } from '../../local-time';
import type { FilterContext } from './types';

// LiquidJS's `date` filter accepts an IANA zone, but then works out the offset with two
// `toLocaleString({ timeZone })` calls per date, and each `%b`/`%A` name with a new
// Intl.DateTimeFormat: around a millisecond per date. Here the offset and the names come from
// formatters built once per zone, and LiquidJS only does the strftime, with a numeric offset.

const liquidDate = filters['date'] as unknown as (
  this: FilterContext,
  value: unknown,
  format?: unknown,
  zone?: unknown,
) => unknown;

/**
 * Minutes to add to local time in `zone` to get UTC at `date` (the sign convention of
 * `Date#getTimezoneOffset`, which LiquidJS uses): -180 for Dar es Salaam.
 */
export const zoneOffsetMinutes = (date: Date, zone: string): number | undefined => {
  if (!isTimeZone(zone)) return undefined;
  const minutes = Math.round(-offsetMs(date, zone) / 60_000);
  // Never -0: LiquidJS would print UTC's offset as -0000.
  return minutes === 0 ? 0 : minutes;
};

const NAME_OPTIONS: Readonly<Record<string, Intl.DateTimeFormatOptions>> = {
  a: { weekday: 'short' },
  A: { weekday: 'long' },
  b: { month: 'short' },
  B: { month: 'long' },
};

const nameFormatters = new Map<string, Intl.DateTimeFormat>();

const nameOf = (token: string, date: Date, zone: string, locale: string): string => {
  const key = `${locale}|${zone}|${token}`;
  let formatter = nameFormatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat(locale, { ...NAME_OPTIONS[token], timeZone: zone });
    nameFormatters.set(key, formatter);
  }
  return formatter.format(date);
};

// `%%` is matched so that `%%b` stays a literal `%b`; flagged forms (`%^b`) are left to LiquidJS.
const NAME_TOKENS = /%%|%([aAbB])/g;

/**
 * Formats `date` in `zone` with LiquidJS's strftime. `%Z` (the zone's name) needs LiquidJS's own
 * slow path: with a numeric offset it has no name to print.
 */
export const formatInZone = (
  context: FilterContext,
  date: Date,
  format: string,
  zone: string,
  locale: string,
): unknown => {
  const offset = format.includes('%Z') ? undefined : zoneOffsetMinutes(date, zone);
  if (offset === undefined) return liquidDate.call(context, date, format, zone);
  const named = format.replace(NAME_TOKENS, (match, token: string | undefined) =>
    token === undefined ? match : nameOf(token, date, zone, locale),
  );
  return liquidDate.call(context, date, named, offset);
};

/** Reads a value the way LiquidJS's `date` filter does; `undefined` when it isn't a date. */
const toLiquidInstant = (value: unknown): Date | undefined => {
  let date: Date;
  if (value instanceof Date) date = value;
  else if (typeof value === 'number') date = new Date(value * 1000);
  else if (typeof value === 'string') {
    if (value === 'now' || value === 'today') date = new Date();
    else if (/^\d+$/.test(value)) date = new Date(Number(value) * 1000);
    else date = new Date(value);
  } else return undefined;
  return Number.isNaN(date.getTime()) ? undefined : date;
};

/**
 * LiquidJS's `date` filter, same input rules and output, defaulting to the engine's zone, minus
 * the per-call cost of resolving a zone name.
 */
export const createLiquidDateFilter = ({ timeZone, locale }: { readonly timeZone: string; readonly locale: string }) =>
  function date(this: FilterContext, value: unknown, format?: unknown, zone?: unknown): unknown {
    const instant = toLiquidInstant(value);
    const targetZone = zone === undefined || zone === null ? timeZone : zone;
    if (!instant || typeof targetZone !== 'string' || !isTimeZone(targetZone)) {
      return liquidDate.call(this, value, format, zone ?? timeZone);
    }
    const pattern = format === undefined || format === null ? this.context.opts.dateFormat : String(format);
    return formatInZone(this, instant, pattern, targetZone, locale);
  };
