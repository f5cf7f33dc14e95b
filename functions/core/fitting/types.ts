import type { Encoding, FitFailureReason, LengthPolicy } from './constants';
import type { MAX_MESSAGE_LENGTH } from '../defaults';

/** A message (or one part of one) as it will be sent. */
export interface MeasuredText {
  readonly text: string;
  readonly encoding: Encoding;
  /** UTF-16 code units: what the service's 160-character limit is checked against. */
  readonly characters: number;
  /** SMS segments it is billed as (see {@link countSegments}); informational. */
  readonly segments: number;
}

/** One SMS to send; under the `split` policy its text includes the `(i/n) ` prefix. */
export type FittedPart = MeasuredText;

export interface FitOptions {
  /** What to do when the message is over `limit`. @defaultValue `'truncate'` */
  readonly policy?: LengthPolicy;
  /** Most parts the `split` policy produces (1–10). @defaultValue 3 */
  readonly maxParts?: number;
  /** Most characters (UTF-16 code units) per part, at least 16. @defaultValue {@link MAX_MESSAGE_LENGTH} */
  readonly limit?: number;
}

export interface FitSuccess {
  readonly ok: true;
  /** One part, or 2 to `maxParts` under `split`. Never empty, each ≤ `limit` characters. */
  readonly parts: readonly FittedPart[];
  /** Text was dropped: `truncate` cut it, or `split` needed more than `maxParts` parts. */
  readonly truncated: boolean;
  /** Characters replaced or removed by normalisation (see {@link normaliseMessage}). */
  readonly replacedCharacters: number;
}

export interface FitFailure {
  readonly ok: false;
  readonly reason: FitFailureReason;
  /** Human-readable, safe to log: never contains the message text. */
  readonly detail: string;
  /** Length of the normalised message in characters (0 when empty). */
  readonly characters: number;
}

export type FitResult = FitSuccess | FitFailure;
