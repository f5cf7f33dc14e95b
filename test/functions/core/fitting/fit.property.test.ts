import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_PARTS,
  ELLIPSIS,
  Encoding,
  encodingOf,
  FitFailureReason,
  type FitOptions,
  type FitSuccess,
  fitMessage,
  GSM_LOOKALIKES,
  isGsmCharacter,
  LengthPolicy,
  MAX_PARTS_CEILING,
  normaliseMessage,
  toGsmLookalikes,
} from '../../../../functions/core/fitting/index';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const PREFIX = /^\((\d+)\/(\d+)\) /;
const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

const isBreakingSpace = (char: string | undefined): boolean => char === ' ' || char === '\n';

const skipBreakingSpaces = (text: string, from: number): number => {
  let index = from;
  while (isBreakingSpace(text[index])) index++;
  return index;
};

/** Grapheme boundaries of `text` and the longest cluster, in UTF-16 units. */
const graphemeBoundaries = (text: string) => {
  const starts = new Set<number>([text.length]);
  let longest = 0;
  for (const { index, segment } of segmenter.segment(text)) {
    starts.add(index);
    longest = Math.max(longest, segment.length);
  }
  return { starts, longest };
};

const GSM_UNITS = [
  ...Array.from({ length: 0x2100 }, (_, code) => String.fromCharCode(code)).filter(
    (char) => isGsmCharacter(char) && char !== '\n' && char !== ' ',
  ),
  ...Object.keys(GSM_LOOKALIKES),
];

/** Text that is GSM-7 once look-alikes are replaced: words, spaces, line breaks, look-alikes. */
const gsmText = fc.string({
  unit: fc.oneof(
    { arbitrary: fc.constantFrom(...GSM_UNITS), weight: 8 },
    { arbitrary: fc.constantFrom(' ', ' ', '\n', '\r\n', '  '), weight: 1 },
  ),
  maxLength: 1200,
  size: 'max',
});

const words = (unit: 'grapheme' | 'binary') =>
  fc
    .array(fc.tuple(fc.string({ unit, minLength: 1, maxLength: 30 }), fc.constantFrom(' ', '\n', '  ', '\n\n')), {
      maxLength: 150,
      size: 'max',
    })
    .map((pairs) => pairs.map(([word, gap]) => word + gap).join(''));

/** Well-formed UTF-16: any code point, graphemes (emoji, ZWJ sequences, combining marks), ASCII. */
const wellFormedText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 2000, size: 'max' }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 500, size: 'max' }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 2000, size: 'max' }),
  words('grapheme'),
  words('binary'),
  gsmText,
);

/** Arbitrary code units: lone surrogates and pairs formed by chance. */
const brokenText = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
    fc.constantFrom('a', ' ', '😀', '€', '\u0301', '\u200D'),
  ),
  maxLength: 400,
  size: 'max',
});

const anyText = fc.oneof(wellFormedText, brokenText);

const options: fc.Arbitrary<Required<FitOptions>> = fc.record({
  policy: fc.constantFrom(...Object.values(LengthPolicy)),
  maxParts: fc.oneof(fc.integer({ min: 1, max: MAX_PARTS_CEILING }), fc.constant(DEFAULT_MAX_PARTS)),
  limit: fc.oneof(fc.constant(160), fc.integer({ min: 16, max: 320 })),
});

const RUNS = { numRuns: 300 };

/**
 * Walks `normalised` with the parts' contents (prefix and ellipsis removed), checking each is
 * the next piece of the text after skipping spaces/line breaks dropped at a cut, and that each
 * cut falls on a grapheme boundary or dropped whitespace. Returns where the walk ended.
 */
const walk = (normalised: string, contents: readonly string[], checkBoundaries: boolean) => {
  const { starts } = graphemeBoundaries(normalised);
  let cursor = 0;
  for (const content of contents) {
    cursor = skipBreakingSpaces(normalised, cursor);
    expect(content.length).toBeGreaterThan(0);
    expect(normalised.startsWith(content, cursor)).toBe(true);
    cursor += content.length;
    if (checkBoundaries) {
      expect(starts.has(cursor) || isBreakingSpace(normalised[cursor])).toBe(true);
    }
  }
  return cursor;
};

const contentsOf = (result: FitSuccess): string[] =>
  result.parts.map((part, i) => {
    let text = result.parts.length > 1 ? part.text.replace(PREFIX, '') : part.text;
    if (result.truncated && i === result.parts.length - 1) {
      expect(text.endsWith(ELLIPSIS)).toBe(true);
      text = text.slice(0, -ELLIPSIS.length);
    }
    return text;
  });

describe('fitMessage properties', () => {
  it('every part is within the limit, non-empty, measured, and free of lone surrogates', () => {
    fc.assert(
      fc.property(anyText, options, (input, opts) => {
        const result = fitMessage(input, opts);
        const normalised = normaliseMessage(input).text;
        if (!result.ok) {
          if (normalised.length === 0) {
            expect(result.reason).toBe(FitFailureReason.EMPTY_MESSAGE);
          } else {
            expect(result.reason).toBe(FitFailureReason.TOO_LONG);
            expect(opts.policy).toBe(LengthPolicy.Reject);
            expect(result.characters).toBe(normalised.length);
            expect(normalised.length).toBeGreaterThan(opts.limit);
          }
          return;
        }
        const maxParts = opts.policy === LengthPolicy.Split ? opts.maxParts : 1;
        expect(result.parts.length).toBeGreaterThanOrEqual(1);
        expect(result.parts.length).toBeLessThanOrEqual(maxParts);
        for (const part of result.parts) {
          expect(part.characters).toBe(part.text.length);
          expect(part.characters).toBeLessThanOrEqual(opts.limit);
          expect(part.text.trim()).not.toBe('');
          expect(part.encoding).toBe(encodingOf(part.text));
          expect(part.text).not.toMatch(LONE_SURROGATE);
        }
      }),
      RUNS,
    );
  });

  it('input that is GSM-7 after look-alike replacement gives GSM-7 parts', () => {
    fc.assert(
      fc.property(fc.oneof(gsmText, anyText), options, (input, opts) => {
        fc.pre(encodingOf(toGsmLookalikes(input)) === Encoding.GSM_7);
        const result = fitMessage(input, opts);
        if (!result.ok) return;
        for (const part of result.parts) expect(part.encoding).toBe(Encoding.GSM_7);
      }),
      RUNS,
    );
  });

  it('truncate keeps a prefix of the normalised input followed by ...', () => {
    fc.assert(
      fc.property(anyText, options, (input, opts) => {
        const result = fitMessage(input, { ...opts, policy: LengthPolicy.Truncate });
        if (!result.ok) return;
        const normalised = normaliseMessage(input).text;
        expect(result.parts).toHaveLength(1);
        const [part] = result.parts;
        if (!result.truncated) {
          expect(part?.text).toBe(normalised);
          return;
        }
        expect(normalised.length).toBeGreaterThan(opts.limit);
        const kept = part?.text.slice(0, -ELLIPSIS.length) ?? '';
        expect(part?.text.endsWith(ELLIPSIS)).toBe(true);
        expect(kept.length).toBeGreaterThan(0);
        expect(normalised.startsWith(kept)).toBe(true);
        expect(isBreakingSpace(kept.at(-1))).toBe(false);
      }),
      RUNS,
    );
  });

  it('split parts, prefixes removed, reproduce the normalised input in order', () => {
    fc.assert(
      fc.property(anyText, options, (input, opts) => {
        const result = fitMessage(input, { ...opts, policy: LengthPolicy.Split });
        if (!result.ok) return;
        const normalised = normaliseMessage(input).text;
        const total = result.parts.length;
        if (total > 1) {
          result.parts.forEach((part, i) => {
            expect(part.text.match(PREFIX)?.slice(1)).toEqual([String(i + 1), String(total)]);
          });
        }
        if (result.truncated) expect(total).toBe(opts.maxParts);
        const contents = contentsOf(result);
        const end = walk(normalised, contents, false);
        if (!result.truncated) {
          expect(skipBreakingSpaces(normalised, end)).toBe(normalised.length);
          const squash = (text: string) => text.replace(/[ \n]/g, '');
          expect(squash(contents.join(''))).toBe(squash(normalised));
        }
      }),
      RUNS,
    );
  });

  it('cuts fall between grapheme clusters when no cluster is longer than the room', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'grapheme', maxLength: 600, size: 'max' }), words('grapheme')),
        options,
        (input, opts) => {
          const normalised = normaliseMessage(input).text;
          const smallestRoom = opts.limit - (4 + 2 * String(opts.maxParts).length) - ELLIPSIS.length;
          fc.pre(graphemeBoundaries(normalised).longest <= smallestRoom);
          for (const policy of [LengthPolicy.Truncate, LengthPolicy.Split]) {
            const result = fitMessage(input, { ...opts, policy });
            if (result.ok) walk(normalised, contentsOf(result), true);
          }
        },
      ),
      RUNS,
    );
  });

  it('prefers a space or line break within the last 30% of the room', () => {
    fc.assert(
      fc.property(gsmText, options, (input, opts) => {
        const result = fitMessage(input, { ...opts, policy: LengthPolicy.Split });
        if (!result.ok || result.parts.length === 1) return;
        const normalised = normaliseMessage(input).text;
        const contents = contentsOf(result);
        let start = 0;
        contents.forEach((content, i) => {
          start = skipBreakingSpaces(normalised, start);
          const part = result.parts[i]?.text ?? '';
          const isLastTruncated = result.truncated && i === contents.length - 1;
          const room = opts.limit - (part.length - content.length);
          const end = start + content.length;
          if (end < normalised.length) {
            const window = normalised.slice(start + Math.ceil(room * 0.7), start + room + 1);
            if (/[ \n]/.test(window)) expect(isBreakingSpace(normalised[end])).toBe(true);
          }
          if (isLastTruncated) expect(end).toBeLessThan(normalised.length);
          start = end;
        });
      }),
      RUNS,
    );
  });

  it('normalisation is idempotent and never leaves lone surrogates or edge whitespace', () => {
    fc.assert(
      fc.property(anyText, (input) => {
        const once = normaliseMessage(input);
        expect(normaliseMessage(once.text)).toEqual({ text: once.text, replacedCharacters: 0 });
        expect(once.text).not.toMatch(LONE_SURROGATE);
        expect(once.text).toBe(once.text.replace(/^[ \n]+|[ \n]+$/g, ''));
        expect(once.text).not.toMatch(/ {2}| \n|\n |\n{3}|[\t\r]/);
      }),
      RUNS,
    );
  });
});
