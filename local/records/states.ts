/**
 * The states of the local record API and how a command line or a request names them (`--state`,
 * `--since`): no zod here, so that a CLI command that only asks the running relay loads none of the
 * request schemas (`contract.ts`, which re-exports this module).
 */
import { parseDurationSeconds } from '../../functions/core/config/duration';
import { HttpError } from '../http/error';

/** Every state of a message record (the store's `MessageState`, checked in `index.ts`). */
export const STATES = [
  'PENDING',
  'SENDING',
  'SENT',
  'FAILED',
  'UNKNOWN',
  'PARKED',
  'HELD',
  'DROPPED',
  'DEFERRED',
  'DIGESTED',
  'DISMISSED',
] as const;
export type State = (typeof STATES)[number];

/** States a record can be dismissed from (ended without sending): the ones the stuck-now gauges and their alarms count. */
export const DISMISS_STATES = ['UNKNOWN', 'FAILED', 'HELD', 'PARKED'] as const satisfies readonly State[];
export type DismissState = (typeof DISMISS_STATES)[number];

/** Why a record in any other state is not dismissed: it is sent, on its way, or already final. */
export const NOT_DISMISSIBLE = `only ${DISMISS_STATES.join(', ')} records can be dismissed`;

/** States a record can be redriven from (sent back to PENDING); UNKNOWN only when duplicates are accepted. */
export const REDRIVE_STATES = ['PARKED', 'FAILED', 'HELD', 'UNKNOWN'] as const satisfies readonly State[];
export type RedriveState = (typeof REDRIVE_STATES)[number];

/** A state whose records may already have arrived: redriving one needs the caller to accept a duplicate. */
export const needsAcceptDuplicates = (state: string): boolean => state === 'UNKNOWN';

/** Why redriving UNKNOWN records needs `--accept-duplicates` (`acceptDuplicates`, the console's confirmation). */
export const MAY_HAVE_ARRIVED =
  'an UNKNOWN SMS may already have arrived: the SMS service failed after the request left (a time-out, a reset, a 5xx), so it may have sent it, and a redrive sends it again';

/** A redrive request names at most this many ids; the CLI sends larger sets in pieces. */
export const MAX_REDRIVE_IDS = 100;

/** The state named by `value` (any case) if it is one of `allowed`. */
export function stateIn<const T extends readonly State[]>(value: string, allowed: T): T[number] | undefined {
  const state = value.trim().toUpperCase();
  return allowed.find((each) => each === state);
}

export const expectedState = (allowed: readonly string[], value: string): string =>
  `expected one of ${allowed.join(', ')}, got "${value}"`;

/**
 * Reads a state name, any case.
 *
 * @throws {HttpError} 400, naming `setting`, when it is not one of `allowed`
 */
export function parseState<const T extends readonly State[]>(
  value: string,
  allowed: T,
  setting = '--state',
): T[number] {
  const found = stateIn(value, allowed);
  if (found === undefined) throw new HttpError(400, `${setting}: ${expectedState(allowed, value)}`);
  return found;
}

/** `since`, read: a duration back from `now` (bare digits are seconds, as in the config) or an ISO-looking time. */
export function sinceOf(value: string, now: Date): Date | undefined {
  const seconds = /^\s*\d+\s*$/.test(value) ? parseDurationSeconds(Number(value)) : parseDurationSeconds(value);
  if (seconds !== undefined) return new Date(now.getTime() - seconds * 1000);
  // Date.parse accepts odd things ("1"); only ISO-looking input is taken as a time.
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) {
    const at = new Date(value.trim());
    if (!Number.isNaN(at.getTime())) return at;
  }
  return undefined;
}

export const expectedSince = (value: string): string =>
  `expected a duration like 30m, 2h, 3d or an ISO time like 2025-01-31T08:00:00Z, got "${value}"`;

/**
 * Reads `--since`: a duration back from now (`30m`, `2h`, `3d`, seconds) or an ISO-8601 time.
 *
 * @throws {HttpError} 400, naming `--since`
 *
 * @example
 * ```ts
 * parseSince('2h', new Date('2025-01-01T12:00:00Z')); // 2025-01-01T10:00:00.000Z
 * parseSince('2025-01-01T08:00:00Z'); // that instant
 * ```
 */
export function parseSince(value: string, now: Date = new Date()): Date {
  const at = sinceOf(value, now);
  if (at === undefined) throw new HttpError(400, `--since: ${expectedSince(value)}`);
  return at;
}
