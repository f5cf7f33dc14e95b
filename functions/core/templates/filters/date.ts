import type { SmsFilter } from './types';
import { isTimeZone } from '../../local-time';
import { formatInZone } from './zone';

/** Format used when `date_tz` gets none: short, unambiguous, SMS-friendly. */
export const DEFAULT_DATE_FORMAT = '%Y-%m-%d %H:%M';

/**
 * Epoch values below this are seconds, at or above it milliseconds. 1e11 seconds is the year
 * 5138 and 1e11 milliseconds is March 1973: no webhook timestamp falls between the two.
 */
export const EPOCH_MILLIS_THRESHOLD = 1e11;

const EPOCH = /^-?\d+(?:\.\d+)?$/;
// ISO 8601 date-time without an offset (WooCommerce's `date_created_gmt`): read as UTC, so the
// result doesn't depend on the zone of the machine rendering it.
const ISO_WITHOUT_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
// RFC 2822 / HTTP dates (`Sun, 01 Mar 2026 10:00:00 GMT`). Anything looser is refused: V8's
// fallback parser turns text like `Order 12` into a date.
const RFC_2822_DATE =
  /^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{2}:\d{2}(?::\d{2})?\s*(?:[A-Z]{1,5}|[+-]\d{4})?$/;

const fromEpoch = (epoch: number): Date | undefined => {
  if (!Number.isFinite(epoch)) return undefined;
  const date = new Date(Math.abs(epoch) >= EPOCH_MILLIS_THRESHOLD ? epoch : epoch * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date;
};

/** Reads a webhook timestamp; `undefined` when it isn't one. */
export const toDate = (value: unknown): Date | undefined => {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value === 'number') return fromEpoch(value);
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === 'now' || text === 'today') return new Date();
  if (EPOCH.test(text)) return fromEpoch(Number(text));
  let iso: string;
  if (ISO_WITHOUT_OFFSET.test(text)) iso = `${text.replace(' ', 'T')}Z`;
  else if (ISO_DATE.test(text) || RFC_2822_DATE.test(text)) iso = text;
  else return undefined;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? undefined : date;
};

/**
 * `date_tz`: a timestamp as wall-clock time in a zone (default: the engine's).
 *
 * Reads ISO 8601 strings (no offset → UTC), RFC 2822 strings, `Date`s, and epoch numbers or digit
 * strings (seconds below {@link EPOCH_MILLIS_THRESHOLD}, milliseconds from it on). The format uses
 * LiquidJS's strftime tokens (`%Y %m %d %H %M %S %b %B %a %A %-d %I %p %z`). Anything that isn't
 * a timestamp, or an unknown zone, returns the input unchanged so the message still goes out.
 */
export const createDateFilter = ({
  timeZone,
  locale,
}: {
  readonly timeZone: string;
  readonly locale: string;
}): SmsFilter =>
  function date_tz(value, format, zone) {
    const date = toDate(value);
    const targetZone = typeof zone === 'string' && zone.trim() !== '' ? zone.trim() : timeZone;
    if (!date || !isTimeZone(targetZone)) return value;
    const pattern = typeof format === 'string' && format !== '' ? format : DEFAULT_DATE_FORMAT;
    // The offset is resolved for this very date, so DST zones get it right on both sides.
    return formatInZone(this, date, pattern, targetZone, locale);
  };
