import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_PARTS,
  Encoding,
  FitFailureReason,
  type FitResult,
  type FitSuccess,
  fitMessage,
  InvalidFitOptionsError,
  LengthPolicy,
} from '../../../../functions/core/fitting/index';
import { MAX_PARTS_CEILING, MIN_LIMIT } from '../../../../functions/core/fitting/constants';

/** Whether a text holds half of a surrogate pair on its own: a broken character on the handset. */
const hasLoneSurrogate = (text: string): boolean =>
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

const POLICIES = Object.values(LengthPolicy);

const success = (result: FitResult): FitSuccess => {
  if (!result.ok) throw new Error(`expected success, got ${result.reason}: ${result.detail}`);
  return result;
};

const texts = (result: FitResult): string[] => success(result).parts.map((part) => part.text);

describe('fitMessage: within the limit', () => {
  it.each(POLICIES)('%s: a short message is one part, unchanged', (policy) => {
    expect(fitMessage('Build #12 passed', { policy })).toEqual({
      ok: true,
      parts: [{ text: 'Build #12 passed', encoding: Encoding.GSM_7, characters: 16, segments: 1 }],
      truncated: false,
      replacedCharacters: 0,
    });
  });

  it.each(POLICIES)('%s: exactly 160 characters is one part', (policy) => {
    expect(texts(fitMessage('a'.repeat(160), { policy }))).toEqual(['a'.repeat(160)]);
  });

  it('counts UTF-16 units: 80 emoji fit, 81 do not', () => {
    expect(texts(fitMessage('😀'.repeat(80)))).toEqual(['😀'.repeat(80)]);
    const result = success(fitMessage('😀'.repeat(81)));
    expect(result.truncated).toBe(true);
    expect(result.parts[0]?.characters).toBeLessThanOrEqual(160);
  });

  it('reports look-alike replacements and keeps the message GSM-7', () => {
    const result = success(fitMessage('Deploy “api” — done…'));
    expect(result.parts).toEqual([
      { text: 'Deploy "api" - done...', encoding: Encoding.GSM_7, characters: 22, segments: 1 },
    ]);
    expect(result.replacedCharacters).toBe(4);
  });

  it('measures to the limit after normalisation, not before', () => {
    expect(texts(fitMessage(`  ${'a '.repeat(80)}  `))).toEqual([`${'a '.repeat(79)}a`]);
  });
});

describe('fitMessage: empty messages', () => {
  it.each(
    POLICIES.flatMap((policy) =>
      ['', '   ', '\n\t \r\n', '\u200B\uFEFF', '\u00A0\u3000', '\x00'].map((text) => [policy, text] as const),
    ),
  )('%s: %j is an empty message', (policy, text) => {
    expect(fitMessage(text, { policy })).toEqual({
      ok: false,
      reason: FitFailureReason.EMPTY_MESSAGE,
      detail: expect.stringContaining('empty'),
      characters: 0,
    });
  });
});

describe('fitMessage: truncate', () => {
  it('cuts on a word boundary and appends ...', () => {
    const [text] = texts(fitMessage('word '.repeat(40)));
    expect(text).toBe(`${'word '.repeat(30)}word...`);
    expect(text?.length).toBe(157);
  });

  it('cuts at a line break', () => {
    const lines = Array.from({ length: 20 }, (_, i) => `Line-${i}:status-ok`).join('\n');
    const [text] = texts(fitMessage(lines));
    expect(text).toBe(`${lines.slice(0, lines.lastIndexOf('\n', 157))}...`);
    expect(text).toMatch(/status-ok\.\.\.$/);
  });

  it('hard-cuts a text without any boundary', () => {
    expect(texts(fitMessage('x'.repeat(300)))).toEqual([`${'x'.repeat(157)}...`]);
  });

  it('takes a boundary inside the last 30% of the room (157 after the ellipsis)', () => {
    const text = `${'x'.repeat(110)} ${'y'.repeat(100)}`;
    expect(texts(fitMessage(text))).toEqual([`${'x'.repeat(110)}...`]);
  });

  it('hard-cuts when the only boundary is further back than 30%', () => {
    const text = `${'x'.repeat(109)} ${'y'.repeat(100)}`;
    expect(texts(fitMessage(text))).toEqual([`${'x'.repeat(109)} ${'y'.repeat(47)}...`]);
  });

  it('never splits a surrogate pair', () => {
    expect(texts(fitMessage('😀'.repeat(100)))).toEqual([`${'😀'.repeat(78)}...`]);
  });

  it('keeps a base letter with its combining mark', () => {
    expect(texts(fitMessage('e\u0301'.repeat(100)))).toEqual([`${'e\u0301'.repeat(78)}...`]);
  });

  it('keeps an emoji ZWJ sequence whole', () => {
    const family = '👨‍👩‍👧';
    expect(texts(fitMessage(family.repeat(30)))).toEqual([`${family.repeat(19)}...`]);
  });

  it('hard-cuts inside a grapheme cluster longer than the room, on a code point', () => {
    const zalgo = `a${'\u0301'.repeat(300)}`;
    expect(texts(fitMessage(zalgo))).toEqual([`${zalgo.slice(0, 157)}...`]);
  });

  it('honours a custom limit', () => {
    const [text] = texts(fitMessage('The quick brown fox jumps over the lazy dog', { limit: 20 }));
    expect(text).toBe('The quick brown...');
  });
});

describe('fitMessage: split', () => {
  const split = { policy: LengthPolicy.Split } as const;

  it('numbers the parts (i/n) and cuts on word boundaries', () => {
    const parts = texts(fitMessage('word '.repeat(50), split));
    expect(parts).toEqual([`(1/2) ${'word '.repeat(30)}word`, `(2/2) ${'word '.repeat(18)}word`]);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(160);
  });

  it('uses two-digit numbering at 10 parts, every part still within the limit', () => {
    const result = success(fitMessage('abcdefgh '.repeat(200), { ...split, maxParts: 10 }));
    expect(result.parts).toHaveLength(10);
    expect(result.parts[0]?.text.startsWith('(1/10) ')).toBe(true);
    expect(result.parts[9]?.text.startsWith('(10/10) ')).toBe(true);
    for (const part of result.parts) expect(part.characters).toBeLessThanOrEqual(160);
  });

  it('a text with no word boundary fills 10 parts to the limit exactly, never over it: the (i/10) prefix is counted', () => {
    // 9 parts of 153 characters after "(i/10) " and a 10th of the rest: 1,500 characters, all sent.
    const result = success(fitMessage('x'.repeat(1_500), { ...split, maxParts: 10 }));
    expect(result.truncated).toBe(false);
    expect(result.parts.map((part) => part.text.slice(0, part.text.indexOf(' ') + 1))).toEqual(
      Array.from({ length: 10 }, (_, index) => `(${index + 1}/10) `),
    );
    expect(result.parts.slice(0, 9).map((part) => part.characters)).toEqual(Array(9).fill(160));
    expect(result.parts.map((part) => part.text.replace(/^\(\d+\/10\) /, '')).join('')).toBe('x'.repeat(1_500));
  });

  it('never splits a surrogate pair between parts: an odd room moves the cut back one unit', () => {
    const result = success(fitMessage('😀'.repeat(400), { ...split, maxParts: 10 }));
    for (const part of result.parts) {
      expect(part.characters).toBeLessThanOrEqual(160);
      expect(hasLoneSurrogate(part.text)).toBe(false);
    }
  });

  it('cuts a grapheme cluster longer than a part on a code point, every part within the limit', () => {
    // One cluster of 202 code units (a thumb and 100 skin-tone modifiers), as a hostile payload could send.
    // A limit of 159 leaves an odd room (153) after "(1/2) ": the cut falls inside a pair.
    const result = success(fitMessage(`👍${'🏽'.repeat(100)}`, { ...split, maxParts: 3, limit: 159 }));
    expect(result.parts.length).toBeGreaterThan(1);
    for (const part of result.parts) {
      expect(part.characters).toBeLessThanOrEqual(159);
      expect(hasLoneSurrogate(part.text)).toBe(false);
    }
  });

  it('truncates the last part when more than maxParts would be needed', () => {
    const result = success(fitMessage('word '.repeat(400), { ...split, maxParts: 3 }));
    expect(result.truncated).toBe(true);
    expect(result.parts.map((part) => part.text.slice(0, 6))).toEqual(['(1/3) ', '(2/3) ', '(3/3) ']);
    expect(result.parts[2]?.text.endsWith('word...')).toBe(true);
  });

  it('with maxParts 1 behaves as truncate (no prefix)', () => {
    const result = success(fitMessage('word '.repeat(40), { ...split, maxParts: 1 }));
    expect(result.parts.map((part) => part.text)).toEqual(texts(fitMessage('word '.repeat(40))));
    expect(result.truncated).toBe(true);
  });

  it('keeps GSM-7 parts GSM-7 and UCS-2 parts measured as UCS-2', () => {
    const gsm = success(fitMessage('“quoted” text '.repeat(30), split));
    expect(gsm.parts.every((part) => part.encoding === Encoding.GSM_7)).toBe(true);
    const ucs2 = success(fitMessage('📦 shipped '.repeat(40), split));
    expect(ucs2.parts.every((part) => part.encoding === Encoding.UCS_2)).toBe(true);
    expect(ucs2.parts[0]?.segments).toBe(3);
  });
});

describe('fitMessage: reject', () => {
  it('returns too-long without parts and without the message text', () => {
    const secret = `OTP 123456 ${'x'.repeat(200)}`;
    const result = fitMessage(secret, { policy: LengthPolicy.Reject });
    expect(result).toEqual({
      ok: false,
      reason: FitFailureReason.TOO_LONG,
      detail: 'The message is 211 characters; the limit is 160.',
      characters: 211,
    });
  });
});

describe('fitMessage: options', () => {
  it.each([
    [{ limit: 15 }],
    [{ limit: 160.5 }],
    [{ limit: Number.NaN }],
    [{ maxParts: 0 }],
    [{ maxParts: 11 }],
    [{ maxParts: 2.5 }],
    [{ policy: 'ignore' as LengthPolicy }],
  ])('%j throws InvalidFitOptionsError', (options) => {
    expect(() => fitMessage('hello', options)).toThrow(InvalidFitOptionsError);
  });

  it('accepts the bounds themselves: maxParts at its ceiling and the smallest limit', () => {
    expect(
      success(fitMessage('word '.repeat(40), { policy: LengthPolicy.Split, maxParts: MAX_PARTS_CEILING })).ok,
    ).toBe(true);
    const smallest = success(fitMessage('word '.repeat(40), { limit: MIN_LIMIT }));
    expect(smallest.parts[0]?.characters).toBeLessThanOrEqual(MIN_LIMIT);
  });

  it('names its error', () => {
    expect(() => fitMessage('hello', { limit: 1 })).toThrow(
      expect.objectContaining({ name: 'InvalidFitOptionsError' }),
    );
  });

  it('handles a megabyte of input', () => {
    const result = success(fitMessage('lorem ipsum '.repeat(100_000), { policy: 'split' }));
    expect(result.parts).toHaveLength(DEFAULT_MAX_PARTS);
    expect(result.truncated).toBe(true);
  });
});
