import { describe, expect, it } from 'vitest';
import { maskNumbersInText } from '../../../../functions/core/recipients';

describe('maskNumbersInText: every spelling the relay accepts as a recipient', () => {
  it.each([
    ['call 712 345 678 now', 'call 2557****678 now'],
    ['0712 34 56 78', '2557****678'],
    ['+255 (0) 712 345 677', '2557****677'],
    ['255712345678', '2557****678'],
    ['+255712345678.', '2557****678.'],
    ['+255 712 345 678', '2557****678'],
    ['+255 0712 345 678', '2557****678'],
    ['00255712345678', '2557****678'],
    ['(0712) 345-678', '2557****678'],
    ['0754-321-000 and 0654 321 000', '2557****000 and 2556****000'],
    ['tel:0712345678', 'tel:2557****678'],
    ['Hook/1.0 (+255 712 345 608)', 'Hook/1.0 (2557****608)'],
    ['(0712 345 678)', '(2557****678)'],
    ['712345678', '2557****678'],
    ['0712345678,0754111222;0654321000', '2557****678,2557****222;2556****000'],
  ])('%j → %j', (text, masked) => {
    expect(maskNumbersInText(text)).toBe(masked);
  });
});

describe('maskNumbersInText: encoded spellings, masked where they stand', () => {
  it.each([
    ['percent-encoded', 'to=%2B255%20712%20345%20678&ok=1', 'to=2557****678&ok=1'],
    ['percent-encoded, lower case', 'to=%2b255%20712%20345%20678', 'to=2557****678'],
    ['form-encoded spaces', 'to=0712+345+678&next=255+754+111+222', 'to=2557****678&next=2557****222'],
    ['JSON \\u escapes', '{"to":"\\u0030712345678"}', '{"to":"2557****678"}'],
    ['a JSON \\u escaped plus', '{"to":"\\u002B255 712 345 678"}', '{"to":"2557****678"}'],
    ['after a JSON \\n', '{"text":"line one\\n0712 345 678"}', '{"text":"line one\\n2557****678"}'],
    ['JSON-escaped slashes', '{"to":"0712\\/345\\/678"}', '{"to":"2557****678"}'],
  ])('%s: %j → %j', (_kind, text, masked) => {
    expect(maskNumbersInText(text)).toBe(masked);
  });
});

// Decided: only what the relay would accept as a recipient is masked (a Tanzanian mobile number, or
// another country's mobile written with its code), so ids, amounts, times, hashes and landline
// numbers stay as they are. A bare
// nine-digit run that is a valid mobile number (`750000000`) is masked: the relay would send to it.
describe('maskNumbersInText: what is not a number the relay accepts stays as it is', () => {
  it.each([
    ['a Shopify order id', 'order 820982911946154508 #1001'],
    ['amounts', 'paid 150000 TZS, 12,500.00 USD, 1,250,000.50'],
    ['times', '2025-06-02T08:00:00.000Z 1717171717 08:15:30'],
    ['a digit run inside a hash or id', 'after a712345678f 6113728f27ae82c7 ch_0712345678abc'],
    ['longer digit runs', '1255712345678 and 2557123456789 and 07123456789'],
    ['a landline', '0222123456 is a landline'],
    ["another country's landline", '+254 20 222 2222 is in Nairobi'],
    ["another country's number without its code", 'dial 0712 3456 in Nairobi'],
    ['an already masked number', 'sent to 2557****678'],
    ['a UUID', '123e4567-e89b-12d3-a456-426614174000'],
    ['a percent sign and a backslash on their own', '100% \\ 50%2'],
  ])('%s: %j', (_kind, text) => {
    expect(maskNumbersInText(text)).toBe(text);
  });

  it('masks a bare nine-digit run that is a valid mobile number, as the relay would send to it', () => {
    expect(maskNumbersInText('amount 750000000')).toBe('amount 2557****000');
  });

  it("masks another country's mobile written with its code, as the relay sends to it through another provider", () => {
    expect(maskNumbersInText('+254 712 345 678 is in Kenya')).toBe('2547****678 is in Kenya');
    expect(maskNumbersInText('to 00256772123456, then %2B250788123456')).toBe('to 2567****456, then 2507****456');
  });

  it('finds a spaced number next to other digits', () => {
    expect(maskNumbersInText('call 0712 345 678 2 times, at 12:30 on 2025-06-02 0754 111 222')).toBe(
      'call 2557****678 2 times, at 12:30 on 2025-06-02 2557****222',
    );
  });
});

describe('maskNumbersInText: long stretches of digits and spaces are read in windows', () => {
  it('finds a number wherever it stands in a long stretch', () => {
    for (let before = 0; before < 160; before += 1) {
      const text = `${'5 '.repeat(before)}0712 345 678${' 3'.repeat(120)}`;
      const masked = maskNumbersInText(text);
      expect(masked, `after ${before} groups`).not.toContain('712 345 678');
      expect(masked).toBe(`${'5 '.repeat(before)}2557****678${' 3'.repeat(120)}`);
    }
  });

  it('masks each of many numbers in one stretch, once', () => {
    const text = Array.from({ length: 50 }, (_, index) => `0712 345 ${String(600 + index)}`).join(' ');
    expect(maskNumbersInText(text)).toBe(
      Array.from({ length: 50 }, (_, index) => `2557****${String(600 + index)}`).join(' '),
    );
  });
});

// The log masker's cases (logs once had a second, narrower masker): logs use this one.
describe('maskNumbersInText: log lines', () => {
  it.each([
    ['sent to 255712345678', 'sent to 2557****678'],
    ['sent to +255712345678.', 'sent to 2557****678.'],
    ['to 0712345678, 0654321000; and 0754-321-000', 'to 2557****678, 2556****000; and 2557****000'],
    ['to +255 712 345 678 ok', 'to 2557****678 ok'],
    ['{"to":["255712345678","255754321000"]}', '{"to":["2557****678","2557****000"]}'],
    ['order 820982911946154508', 'order 820982911946154508'],
    ['1255712345678 and 2557123456789', '1255712345678 and 2557123456789'],
    ['0222123456 is a landline', '0222123456 is a landline'],
    ['nothing here', 'nothing here'],
  ])('%j → %j', (text, masked) => {
    expect(maskNumbersInText(text)).toBe(masked);
  });

  it('is stateless across calls (global regex)', () => {
    expect(maskNumbersInText('0712345678')).toBe('2557****678');
    expect(maskNumbersInText('0712345678')).toBe('2557****678');
  });
});
