import { maskMsisdn } from './mask';
import { normalizeMsisdn } from './msisdn';
import { normalizeRecipient } from './numbering';

/**
 * The text as a reader would decode it, one character per entry, each with the span of the
 * original text it came from: `%2B` is one `+` spanning three characters, `\u0030` one `0`
 * spanning six. A number found in the decoded text is masked over its original span.
 */
interface DecodedText {
  readonly text: string;
  /** Where the decoded character at `index` starts in the original text. */
  readonly start: (index: number) => number;
  /** Where the decoded character at `index` ends in the original text. */
  readonly end: (index: number) => number;
}

/**
 * Where a number may stand in the decoded text: digits and what people type between them (what
 * `normalizeMsisdn` allows), with a leading `+` or `(`.
 */
const CANDIDATE = /[+(]*\d[\d\s().\-/]*/g;
/**
 * The digits of a Tanzanian mobile number as it may be written: nine national digits starting 6
 * or 7 (libphonenumber's TZ mobile ranges), after `0`, `255`, `00255` or `255 0`. A cheap test
 * before the relay's normaliser decides.
 */
const MOBILE_DIGITS = /^(?:(?:00)?2550?|0)?[67]\d{8}$/;
/** The most digits a spelling has: `00255 (0) 712 345 678`, or E.164's 15 after `00`. */
const MAX_DIGITS = 17;
/** The fewest digits of a number written with its country code (a country code and six digits). */
const MIN_INTERNATIONAL_DIGITS = 8;
const HEX2 = /^[0-9a-fA-F]{2}$/;
const HEX4 = /^[0-9a-fA-F]{4}$/;
/** JSON's one-letter escapes: whitespace reads as a space (a boundary), the rest as themselves. */
const JSON_ESCAPES: Readonly<Record<string, string>> = {
  n: ' ',
  r: ' ',
  t: ' ',
  b: ' ',
  f: ' ',
  '/': '/',
  '\\': '\\',
  '"': '"',
};

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
  for (let at = 1; at < chars.length; at += 1) if (chars[at] === '+' && isDigit(chars[at - 1]!)) chars[at] = ' ';
  return { text: chars.join(''), start: (at) => starts[at]!, end: (at) => ends[at]! };
}

/**
 * Masks every phone number the relay would send to, in any spelling it accepts, wherever it
 * stands in a text: `712 345 678`, `0712 34 56 78`, `+255 (0) 712 345 678`, `00255712345678`,
 * percent-encoded (`%2B255%20712…`), form-encoded (`0712+345+678`) or JSON-escaped (`\u0030712…`).
 * Each becomes its `255` form masked (`2557****678`), in place of the characters that spelled it.
 *
 * Each stretch of digits and separators is read by the relay's own normaliser (`normalizeMsisdn`:
 * libphonenumber, region TZ, mobile numbers only; a number written with another country's code,
 * `+254…` or `00254…`, by `normalizeRecipient`, as the relay sends to it), so ids, amounts, times,
 * landlines and numbers of other countries written without their code stay as they are; digits
 * joined to letters (`a712345678f`, a hash) are part of a word, not a number. A bare nine-digit run
 * that is a valid mobile number is masked even when it was meant as an amount: the relay would
 * send to it. The one masker of free text: log lines (the Lambda logger, the local terminal),
 * error messages and what the console and its captures show.
 *
 * @example
 * ```ts
 * maskNumbersInText('call 712 345 678 or %2B255%20754%20111%20222'); // 'call 2557****678 or 2557****222'
 * maskNumbersInText('order 820982911946154508');                    // unchanged
 * ```
 */
export function maskNumbersInText(text: string): string {
  // A number has nine digits at least, and an encoded digit is spelled with digits (`%37`, `\u0037`).
  if ((text.match(/\d/g)?.length ?? 0) < 9) return text;
  // Log lines are masked on every write: text with nothing encoded is its own decoding.
  const decoded = /[%\\+]/.test(text) ? decode(text) : plain(text);
  let masked = '';
  let from = 0;
  for (const candidate of decoded.text.matchAll(CANDIDATE)) {
    for (const span of numbersIn(decoded.text, candidate.index, candidate.index + candidate[0].length)) {
      masked += `${text.slice(from, decoded.start(span.start))}${maskMsisdn(span.number)}`;
      from = decoded.end(span.end - 1);
    }
  }
  return from === 0 ? text : masked + text.slice(from);
}

function plain(text: string): DecodedText {
  return { text, start: (at) => at, end: (at) => at + 1 };
}

interface FoundNumber {
  /** Indices in the decoded text, end exclusive. */
  readonly start: number;
  readonly end: number;
  /** E.164's digits: `255` and nine digits for a Tanzanian number. */
  readonly number: string;
}

/**
 * The numbers the relay accepts in one stretch `text[start, end)`: from each group of digits, the
 * longest run of groups that `normalizeMsisdn` accepts, then on after it. libphonenumber's own
 * `findNumbers` is not used: it misses a spaced number next to other digits (`call 0712 345 678 2
 * times`) and slows down more than linearly on a long stretch.
 */
function numbersIn(text: string, start: number, end: number): FoundNumber[] {
  const groups = [...text.slice(start, end).matchAll(/\d+/g)].map((group) => ({
    start: start + group.index,
    end: start + group.index + group[0].length,
    digits: group[0],
  }));
  const found: FoundNumber[] = [];
  for (let first = 0; first < groups.length; ) {
    let best: FoundNumber | undefined;
    let last = first;
    let digits = '';
    for (
      let next = first;
      next < groups.length && digits.length + groups[next]!.digits.length <= MAX_DIGITS;
      next += 1
    ) {
      digits += groups[next]!.digits;
      const tanzanian = MOBILE_DIGITS.test(digits);
      // Another country's number is one written with its code (`+254…`, `00254…`): the relay sends to it.
      const international =
        !tanzanian &&
        digits.length >= MIN_INTERNATIONAL_DIGITS &&
        (digits.startsWith('00') || text[groups[first]!.start - 1] === '+');
      if (!tanzanian && !international) continue;
      const span = spelling(text, start, groups[first]!.start, groups[next]!.end);
      // A number joined to a letter is part of a word (`a712345678f`, a hash), as libphonenumber reads it.
      if (isLetter(text, span.start - 1) || isLetter(text, span.end)) continue;
      const spelled = text.slice(span.start, span.end);
      const normalized = tanzanian ? normalizeMsisdn(spelled) : normalizeRecipient(spelled);
      if (normalized.ok) {
        best = { ...span, number: normalized.number };
        last = next;
      }
    }
    if (best !== undefined) found.push(best);
    first = best === undefined ? first + 1 : last + 1;
  }
  return found;
}

/** A number's characters: its digits and what is between them, with its own `+` and a `(` it closes. */
function spelling(text: string, floor: number, from: number, to: number): { start: number; end: number } {
  let start = from;
  if (start > floor && text[start - 1] === '+') start -= 1;
  const inner = text.slice(start, to);
  if (start > floor && text[start - 1] === '(' && inner.split(')').length > inner.split('(').length) start -= 1;
  return { start, end: to };
}

function isDigit(char: string): boolean {
  return char >= '0' && char <= '9';
}

function isLetter(text: string, index: number): boolean {
  return /\p{L}/u.test(text[index] ?? '');
}
