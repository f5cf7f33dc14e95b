import { findNumbers } from 'libphonenumber-js/max';
import { maskMsisdn } from './mask';
import { normalizeMsisdn } from './msisdn';

/**
 * The text as a reader would decode it, one character per entry, each with the span of the
 * original text it came from: `%2B` is one `+` spanning three characters, `\u0030` one `0`
 * spanning six. A number found in the decoded text is masked over its original span.
 */
interface DecodedText {
  readonly text: string;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

/**
 * Where a number may stand in the decoded text: digits and what people type between them. Only
 * these stretches go to libphonenumber, whose matcher over a whole 256 KiB body takes a second.
 */
const CANDIDATE = /[+(]*\d[\d\s().\-/]*/g;
/**
 * Whether a stretch may hold a Tanzanian number: nine national digits at least, and a run of
 * digits alone is one only with 9 (`712345678`), 10 (`0712…`), 12 (`255…`) or 13 (`2550712…`).
 * Most digit runs in a body (ids, amounts, times) end here, before libphonenumber.
 */
function mayBeNumber(stretch: string): boolean {
  const digits = stretch.replace(/\D/g, '').length;
  if (digits < 9) return false;
  return /\d\D+\d/.test(stretch.trim()) || [9, 10, 12, 13].includes(digits);
}
const HEX2 = /^[0-9a-fA-F]{2}$/;
const HEX4 = /^[0-9a-fA-F]{4}$/;
/** JSON's one-letter escapes: whitespace reads as a space (a boundary), the rest as themselves. */
const JSON_ESCAPES: Readonly<Record<string, string>> = { n: ' ', r: ' ', t: ' ', b: ' ', f: ' ', '/': '/', '\\': '\\', '"': '"' };

function decode(text: string): DecodedText {
  const chars: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  const push = (char: string, start: number, end: number): void => {
    chars.push(char);
    starts.push(start);
    ends.push(end);
  };
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    const pair = text.slice(index + 1, index + 3);
    const quad = text.slice(index + 2, index + 6);
    if (char === '%' && HEX2.test(pair)) {
      const code = Number.parseInt(pair, 16);
      // Only ASCII matters to a number; any other byte is a boundary.
      push(code < 0x80 ? String.fromCharCode(code) : ' ', index, index + 3);
      index += 3;
    } else if (char === '\\' && text[index + 1] === 'u' && HEX4.test(quad)) {
      push(String.fromCharCode(Number.parseInt(quad, 16)), index, index + 6);
      index += 6;
    } else if (char === '\\' && JSON_ESCAPES[text[index + 1] ?? ''] !== undefined) {
      push(JSON_ESCAPES[text[index + 1]!]!, index, index + 2);
      index += 2;
    } else {
      push(char, index, index + 1);
      index += 1;
    }
  }
  // Form encoding writes spaces as `+`: after a digit a `+` is a space, never a country prefix.
  // `00255…` is the international prefix the relay reads as `+` (see `parsePhone`).
  for (let at = 0; at < chars.length; at += 1) {
    const previous = chars[at - 1] ?? '';
    if (chars[at] === '+' && /\d/.test(previous)) chars[at] = ' ';
    else if (chars[at] === '0' && chars[at + 1] === '0' && chars.slice(at + 2, at + 5).join('') === '255' && !/\d/.test(previous)) {
      // One `+` spanning both zeros, so the mask replaces them too.
      chars.splice(at, 2, '+');
      starts.splice(at + 1, 1);
      ends.splice(at, 1);
    }
  }
  return { text: chars.join(''), starts, ends };
}

/**
 * Masks every phone number the relay would send to, in any spelling it accepts, wherever it
 * stands in a text: `712 345 678`, `0712 34 56 78`, `+255 (0) 712 345 678`, `00255712345678`,
 * percent-encoded (`%2B255%20712…`), form-encoded (`0712+345+678`) or JSON-escaped (`\u0030712…`).
 * Each becomes its `255` form masked (`2557****678`), in place of the characters that spelled it.
 *
 * Numbers are found by libphonenumber (region TZ) and kept only when `normalizeMsisdn` accepts
 * them, so ids, amounts, times, landlines and other countries' numbers stay as they are; digits
 * joined to letters (`a712345678f`, a hash) are part of a word, not a number. A bare nine-digit run
 * that is a valid mobile number is masked even when it was meant as an amount: the relay would
 * send to it. For what the console and its captures show; logs use the cheaper
 * `maskPhoneNumbersIn`, which does not load libphonenumber.
 *
 * @example
 * ```ts
 * maskNumbersInText('call 712 345 678 or %2B255%20754%20111%20222'); // 'call 2557****678 or 2557****222'
 * maskNumbersInText('order 820982911946154508');                    // unchanged
 * ```
 */
export function maskNumbersInText(text: string): string {
  if (!/\d/.test(text)) return text;
  const decoded = decode(text);
  let masked = '';
  let from = 0;
  for (const candidate of decoded.text.matchAll(CANDIDATE)) {
    if (!mayBeNumber(candidate[0])) continue;
    // libphonenumber reads the neighbours too: a number joined to a letter is part of a word.
    const offset = Math.max(0, candidate.index - 1);
    const window = decoded.text.slice(offset, candidate.index + candidate[0].length + 1);
    for (const found of findNumbers(window, { defaultCountry: 'TZ', v2: true })) {
      const normalized = normalizeMsisdn(found.number.number);
      if (!normalized.ok) continue;
      let startsAt = offset + found.startsAt;
      const spelled = decoded.text.slice(startsAt, offset + found.endsAt);
      // libphonenumber takes the `(` of `(+255 712 345 678)` but not its `)`: the pair stays.
      if (spelled.startsWith('(') && spelled.split('(').length > spelled.split(')').length) startsAt += 1;
      const start = decoded.starts[startsAt]!;
      masked += `${text.slice(from, start)}${maskMsisdn(normalized.number)}`;
      from = decoded.ends[offset + found.endsAt - 1]!;
    }
  }
  return from === 0 ? text : masked + text.slice(from);
}
