import { describe, expect, it } from 'vitest';
import { maskMsisdn, MSISDN_REJECTIONS, normalizeMsisdn } from '../../../../functions/core/recipients';

describe('normalizeMsisdn', () => {
  it.each([
    '+255 712 345 678',
    '+255712345678',
    '255712345678',
    '0712345678',
    '712345678',
    '+255-712-345-678',
    '(0712) 345 678',
    '0712.345.678',
    '00255712345678',
    '+255 0712 345 678',
    '  0712345678\t',
  ])('%j → 255712345678', (raw) => {
    expect(normalizeMsisdn(raw)).toEqual({ ok: true, number: '255712345678' });
  });

  it.each([
    ['0612345678', '255612345678'],
    ['0689123456', '255689123456'],
    ['0754321000', '255754321000'],
    ['0782 000 111', '255782000111'],
  ])('accepts the mobile range %j', (raw, number) => {
    expect(normalizeMsisdn(raw)).toEqual({ ok: true, number });
  });

  it.each([
    ['', MSISDN_REJECTIONS.empty],
    ['   ', MSISDN_REJECTIONS.empty],
    ['hello', MSISDN_REJECTIONS.notANumber],
    ['0712abc678', MSISDN_REJECTIONS.notANumber],
    ['0712-FLOWER', MSISDN_REJECTIONS.notANumber],
    ['+', MSISDN_REJECTIONS.notANumber],
    ['255+712345678', MSISDN_REJECTIONS.notANumber],
    ['#0712345678', MSISDN_REJECTIONS.notANumber],
    ['+254712345678', 'not a Tanzanian number (+254…)'],
    ['+256 772 123456', 'not a Tanzanian number (+256…)'],
    ['0044 7911 123456', 'not a Tanzanian number (+44…)'],
    ['+999 1234567', MSISDN_REJECTIONS.unknownCountry],
    ['25571234567', MSISDN_REJECTIONS.tooShort],
    ['071234567', MSISDN_REJECTIONS.tooShort],
    ['12', MSISDN_REJECTIONS.tooShort],
    ['2557123456789', MSISDN_REJECTIONS.tooLong],
    ['07123456789', MSISDN_REJECTIONS.tooLong],
    ['0222123456', 'not a mobile number (landline)'],
    ['255222123456', 'not a mobile number (landline)'],
    ['0800123456', 'not a mobile number (toll-free)'],
    ['0512345678', MSISDN_REJECTIONS.invalid],
  ])('rejects %j: %s', (raw, reason) => {
    expect(normalizeMsisdn(raw)).toEqual({ ok: false, reason });
  });

  it('never puts the number in a reason', () => {
    for (const raw of ['+254712345678', '0222123456', '2557123456789', '0800123456', '0512345678']) {
      const result = normalizeMsisdn(raw);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).not.toMatch(/\d{5}/);
    }
  });

  it('accepts a number where YAML gave one instead of a string', () => {
    expect(normalizeMsisdn(255712345678 as unknown as string)).toEqual({ ok: true, number: '255712345678' });
  });

  describe('memo', () => {
    /** Distinct valid mobiles `0713 000 000`…, that no other test uses. */
    const numbers = (count: number, from = 0): string[] =>
      Array.from({ length: count }, (_, index) => `0713 ${String(from + index).padStart(6, '0')}`);
    const expected = (raw: string) => ({ ok: true, number: `255${raw.replace(/\D/g, '').slice(1)}` });

    it('answers a repeated text with the same frozen result', () => {
      const first = normalizeMsisdn('0754 555 222');
      expect(first).toEqual({ ok: true, number: '255754555222' });
      expect(Object.isFrozen(first)).toBe(true);
      expect(normalizeMsisdn('0754 555 222')).toBe(first);
      const rejected = normalizeMsisdn('+254 712 345 678');
      expect(normalizeMsisdn('+254 712 345 678')).toBe(rejected);
      expect(Object.isFrozen(rejected)).toBe(true);
    });

    it('keeps recently used texts and forgets the least recently used beyond its capacity (between 100 and 1,000)', () => {
      const [kept, forgotten] = ['0713 999 001', '0713 999 002'].map((raw) => [raw, normalizeMsisdn(raw)] as const);
      for (const [index, raw] of numbers(1_000).entries()) {
        expect(normalizeMsisdn(raw)).toEqual(expected(raw));
        // `kept` is used every 50 numbers, so it stays among the most recent; `forgotten` never is.
        if (index % 50 === 0) expect(normalizeMsisdn(kept![0])).toBe(kept![1]);
      }
      expect(normalizeMsisdn(forgotten![0])).not.toBe(forgotten![1]);
      expect(normalizeMsisdn(forgotten![0])).toEqual(forgotten![1]);
    });

    it('gives the same answers, from the memo or not, for every form and rejection', () => {
      const raws = [
        '+255 713 000 001',
        '00255713000001',
        '(0713) 000-001',
        '0222123456',
        'hello',
        '',
        '12',
        '+999 1234567',
      ];
      const first = raws.map((raw) => normalizeMsisdn(raw));
      for (const raw of numbers(1_000, 500_000)) normalizeMsisdn(raw); // evicts them all
      expect(raws.map((raw) => normalizeMsisdn(raw))).toEqual(first);
      expect(raws.map((raw) => normalizeMsisdn(raw))).toEqual(first);
    });

    it('parses long texts every time instead of keeping them', () => {
      const padded = `${' '.repeat(40)}0713 000 123`;
      const first = normalizeMsisdn(padded);
      expect(first).toEqual({ ok: true, number: '255713000123' });
      expect(normalizeMsisdn(padded)).not.toBe(first);
      expect(normalizeMsisdn(padded)).toEqual(first);
    });
  });
});

describe('maskMsisdn', () => {
  it.each([
    ['255712345678', '2557****678'],
    ['+255 712 345 678', '2557****678'],
    ['0712345678', '0712****678'],
    ['12345678', '1234****678'],
    ['1234567', '****'],
    ['', '****'],
  ])('%j → %j', (number, masked) => {
    expect(maskMsisdn(number)).toBe(masked);
  });
});
