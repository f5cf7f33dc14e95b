import {
  DEFAULT_LIMIT,
  DEFAULT_MAX_PARTS,
  FitFailureReason,
  LengthPolicy,
  MAX_PARTS_CEILING,
  MIN_LIMIT,
} from './constants';
import { InvalidFitOptionsError } from './errors';
import { measureMessage } from './measure';
import { normaliseMessage } from './normalise';
import { splitMessage } from './split';
import { truncateMessage } from './truncate';
import type { FitOptions, FitResult } from './types';

const POLICIES: ReadonlySet<string> = new Set(Object.values(LengthPolicy));

const assertValidOptions = (policy: string, maxParts: number, limit: number): void => {
  if (!POLICIES.has(policy)) {
    throw new InvalidFitOptionsError(`Unknown length policy "${policy}"; expected one of ${[...POLICIES].join(', ')}.`);
  }
  if (!Number.isInteger(limit) || limit < MIN_LIMIT) {
    throw new InvalidFitOptionsError(`limit must be an integer of at least ${MIN_LIMIT}, got ${limit}.`);
  }
  if (!Number.isInteger(maxParts) || maxParts < 1 || maxParts > MAX_PARTS_CEILING) {
    throw new InvalidFitOptionsError(`maxParts must be an integer from 1 to ${MAX_PARTS_CEILING}, got ${maxParts}.`);
  }
};

const fitted = (parts: readonly string[], truncated: boolean, replacedCharacters: number): FitResult => ({
  ok: true,
  parts: parts.map(measureMessage),
  truncated,
  replacedCharacters,
});

/**
 * Fits a message to the SMS service's length limit (160 characters, counted as UTF-16 code
 * units). The text is normalised first ({@link normaliseMessage}: look-alikes, repairs,
 * whitespace). A message within the limit is returned as one part whatever the policy; over it:
 *
 * - `truncate` (default): one part, cut on the last space or line break within the final 30%
 *   of the room, else at a grapheme boundary, followed by `...`; `truncated: true`.
 * - `split`: parts prefixed `(i/n) `, each at most `limit` characters including the prefix,
 *   cut the same way (the space or line break at a cut is dropped). If more than `maxParts`
 *   parts would be needed, part `maxParts` is truncated with `...` and `truncated` is `true`.
 *   `maxParts: 1` behaves as `truncate`.
 * - `reject`: `{ ok: false, reason: 'too-long' }`.
 *
 * A message that is empty after normalisation is `{ ok: false, reason: 'empty-message' }`
 * under every policy. Outcomes are returned, not thrown: callers record `reason`/`detail`.
 * Only unusable options throw {@link InvalidFitOptionsError}.
 *
 * No cut splits a surrogate pair, and cuts fall between grapheme clusters unless a single
 * cluster is longer than the room. GSM-7 input stays GSM-7: prefix and ellipsis are GSM-7.
 *
 * @example
 * ```typescript
 * import { LengthPolicy, fitMessage } from './index';
 *
 * const result = fitMessage(renderedTemplate, { policy: LengthPolicy.Split, maxParts: 3 });
 * if (result.ok) {
 *   for (const part of result.parts) await sms.send({ to, message: part.text });
 * } else {
 *   logger.warn('SMS not sent', { reason: result.reason, detail: result.detail });
 * }
 * ```
 */
export const fitMessage = (
  text: string,
  { policy = LengthPolicy.Truncate, maxParts = DEFAULT_MAX_PARTS, limit = DEFAULT_LIMIT }: FitOptions = {},
): FitResult => {
  assertValidOptions(policy, maxParts, limit);
  const { text: message, replacedCharacters } = normaliseMessage(text);
  if (message.length === 0) {
    return {
      ok: false,
      reason: FitFailureReason.EMPTY_MESSAGE,
      detail: 'The message is empty or only whitespace; the SMS service rejects empty messages.',
      characters: 0,
    };
  }
  if (message.length <= limit) return fitted([message], false, replacedCharacters);
  switch (policy) {
    case LengthPolicy.Reject:
      return {
        ok: false,
        reason: FitFailureReason.TOO_LONG,
        detail: `The message is ${message.length} characters; the limit is ${limit}.`,
        characters: message.length,
      };
    case LengthPolicy.Split: {
      const { parts, truncated } = splitMessage(message, limit, maxParts);
      return fitted(parts, truncated, replacedCharacters);
    }
    case LengthPolicy.Truncate:
      return fitted([truncateMessage(message, limit).text], true, replacedCharacters);
  }
};
