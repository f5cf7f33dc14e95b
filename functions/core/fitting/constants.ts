import { MAX_MESSAGE_LENGTH } from '../defaults';

/**
 * How the SMS service encodes a message: GSM-7 when every character is in the GSM 03.38
 * alphabet, UCS-2 (in practice UTF-16) as soon as one character is not.
 *
 * @example
 * ```typescript
 * import { Encoding, encodingOf } from './index';
 *
 * encodingOf('Hi €5') === Encoding.GSM_7; // true
 * ```
 */
export const Encoding = {
  GSM_7: 'GSM-7',
  UCS_2: 'UCS-2',
} as const;

export type Encoding = (typeof Encoding)[keyof typeof Encoding];

/**
 * What {@link fitMessage} does with a message longer than the limit.
 *
 * - `truncate` — keep one part, cut on a word boundary, append `...`.
 * - `split` — numbered parts `(1/3) …`, at most `maxParts`, the last one truncated if need be.
 * - `reject` — no parts; a `too-long` outcome the caller records.
 *
 * @example
 * ```typescript
 * import { LengthPolicy, fitMessage } from './index';
 *
 * fitMessage(text, { policy: LengthPolicy.Split, maxParts: 3 });
 * ```
 *
 * A route's `length` (`config/policies.ts` re-exports this one).
 */
export const LengthPolicy = {
  Truncate: 'truncate',
  Split: 'split',
  Reject: 'reject',
} as const;

export type LengthPolicy = (typeof LengthPolicy)[keyof typeof LengthPolicy];

/**
 * Why {@link fitMessage} produced no parts.
 *
 * - `empty-message` — only whitespace after normalisation (the service rejects empty messages).
 * - `too-long` — over the limit under the `reject` policy.
 */
export const FitFailureReason = {
  EMPTY_MESSAGE: 'empty-message',
  TOO_LONG: 'too-long',
} as const;

export type FitFailureReason = (typeof FitFailureReason)[keyof typeof FitFailureReason];

/**
 * Units per SMS segment: septets for GSM-7, UTF-16 code units for UCS-2. A concatenated
 * message loses room in every segment to the 6-byte user data header (UDH).
 */
export const SEGMENT_CAPACITY = {
  [Encoding.GSM_7]: { single: 160, concatenated: 153 },
  [Encoding.UCS_2]: { single: 70, concatenated: 67 },
} as const;

/** `…` (U+2026) is not in GSM 03.38; three dots keep a truncated message GSM-7. */
export const ELLIPSIS = '...';

/** The SMS service's limit, {@link MAX_MESSAGE_LENGTH}. */
export const DEFAULT_LIMIT = MAX_MESSAGE_LENGTH;

/** A route's `maxParts` when it sets none (docs/configuration.md). */
export const DEFAULT_MAX_PARTS = 3;

/**
 * Smallest accepted `limit`: with the longest prefix `(10/10) ` and the ellipsis there are still
 * 5 characters left, enough to always make progress without splitting a surrogate pair.
 */
export const MIN_LIMIT = 16;

/**
 * The most parts a route may split one message into (`maxParts`, docs/configuration.md): ten SMS
 * for one webhook is already a long read on a phone, and each part costs credit.
 */
export const MAX_PARTS_CEILING = 10;

/**
 * A word-boundary cut is only taken within the last 30% of the room; further back it would
 * waste too much of the message, so a hard cut is made instead.
 */
export const WORD_BOUNDARY_WINDOW = 0.3;
