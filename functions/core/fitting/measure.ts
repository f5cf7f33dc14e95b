import { Encoding, SEGMENT_CAPACITY } from './constants';
import { encodingOf, septetsOf } from './gsm';
import type { MeasuredText } from './types';
import { isHighSurrogate, isLowSurrogate } from './utf16';

/**
 * Septet segments. A 2-septet extension character is not split across segments (ESC and its
 * code travel together), so a segment can end one septet short.
 */
const gsmSegments = (text: string): number => {
  const { single, concatenated } = SEGMENT_CAPACITY[Encoding.GSM_7];
  let total = 0;
  let segments = 1;
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    const cost = septetsOf(text.charCodeAt(i));
    total += cost;
    if (used + cost > concatenated) {
      segments++;
      used = 0;
    }
    used += cost;
  }
  if (total === 0) return 0;
  return total <= single ? 1 : segments;
};

/** UTF-16 segments; a surrogate pair is kept within one segment. */
const ucs2Segments = (text: string): number => {
  const { single, concatenated } = SEGMENT_CAPACITY[Encoding.UCS_2];
  if (text.length === 0) return 0;
  if (text.length <= single) return 1;
  let segments = 1;
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    const cost = isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
    if (used + cost > concatenated) {
      segments++;
      used = 0;
    }
    used += cost;
    i += cost - 1;
  }
  return segments;
};

/**
 * Number of SMS segments `text` is billed as: GSM-7 fits 160 septets in one segment, 153 per
 * segment once concatenated (extension characters cost 2); UCS-2 fits 70 code units, 67 once
 * concatenated. The empty string is 0 segments.
 *
 * @example
 * ```typescript
 * import { countSegments } from './index';
 *
 * countSegments('a'.repeat(160)); // 1
 * countSegments('a'.repeat(161)); // 2
 * countSegments('€'.repeat(80)); // 1 (160 septets)
 * ```
 */
export const countSegments = (text: string, encoding: Encoding = encodingOf(text)): number =>
  encoding === Encoding.GSM_7 ? gsmSegments(text) : ucs2Segments(text);

/**
 * Encoding, length and segments of a message as it will be sent. `characters` is UTF-16 code
 * units (a character outside the BMP, such as most emoji, counts 2): the conservative reading
 * of the service's "160 characters", and what {@link fitMessage} checks its `limit` against.
 *
 * @example
 * ```typescript
 * import { measureMessage } from './index';
 *
 * measureMessage('Deployed 🚀');
 * // { text: 'Deployed 🚀', encoding: 'UCS-2', characters: 11, segments: 1 }
 * ```
 */
export const measureMessage = (text: string): MeasuredText => {
  const encoding = encodingOf(text);
  return { text, encoding, characters: text.length, segments: countSegments(text, encoding) };
};
