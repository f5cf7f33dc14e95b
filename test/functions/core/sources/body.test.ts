import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasUnsafeDigitRun, parseJson } from '../../../../functions/core/sources/body';

/** What `hasUnsafeDigitRun` replaces: the reference it must agree with on every input. */
const REFERENCE = /\d{16}/;

describe('hasUnsafeDigitRun', () => {
  it.each([
    ['', false],
    ['123456789012345', false],
    ['1234567890123456', true],
    ['x1234567890123456', true],
    ['{"id": 820982911946154508}', true],
    ['{"a": 123456789012345, "b": 123456789012345}', false],
    ['12345678901234a12345678901234', false],
    // Runs that straddle, start at or end at a probe position (15, 31, …).
    [`${'x'.repeat(15)}${'1'.repeat(16)}`, true],
    [`${'x'.repeat(16)}${'1'.repeat(16)}`, true],
    [`${'x'.repeat(31)}${'1'.repeat(16)}`, true],
    [`${'x'.repeat(30)}${'1'.repeat(15)}x`, false],
    // Non-ASCII digits are not `\d`.
    ['١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦', false],
  ])('%j → %s, as /\\d{16}/', (text, expected) => {
    expect(hasUnsafeDigitRun(text)).toBe(expected);
    expect(REFERENCE.test(text)).toBe(expected);
  });

  it('agrees with /\\d{16}/ on digit-heavy text', () => {
    const digitHeavy = fc
      .array(
        fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...'0123456789') },
          { weight: 1, arbitrary: fc.constantFrom('x', '-', '"', '.', '٣', ' ') },
        ),
        { maxLength: 200 },
      )
      .map((characters) => characters.join(''));
    fc.assert(
      fc.property(digitHeavy, (text) => hasUnsafeDigitRun(text) === REFERENCE.test(text)),
      { numRuns: 5_000 },
    );
  });

  it('agrees with /\\d{16}/ on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => hasUnsafeDigitRun(text) === REFERENCE.test(text)),
      { numRuns: 2_000 },
    );
  });
});

describe('parseJson', () => {
  it('keeps integers beyond 2^53 exact and reads the rest as JSON.parse does', () => {
    expect(parseJson('{"id": 820982911946154508, "n": 1.5, "s": "1234567890123456"}')).toEqual({
      id: '820982911946154508',
      n: 1.5,
      s: '1234567890123456',
    });
    expect(parseJson('{"id": 9007199254740991}')).toEqual({ id: 9007199254740991 });
  });
});
