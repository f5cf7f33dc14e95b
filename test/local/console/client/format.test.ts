import { describe, expect, it } from 'vitest';
import { num } from '../../../../local/console/client/format';

describe("the console's numbers", () => {
  it("read as the browser's locale writes them, to two decimals unless told", () => {
    for (const value of [0, 7, 1234.5, 9_400_000, 0.125, -42.987])
      expect(num(value)).toBe(value.toLocaleString(undefined, { maximumFractionDigits: 2 }));
    expect(num(1234.5678, 0)).toBe((1234.5678).toLocaleString(undefined, { maximumFractionDigits: 0 }));
    expect(num(1234.5678, 3)).toBe((1234.5678).toLocaleString(undefined, { maximumFractionDigits: 3 }));
    // The formatter of each number of digits is kept: asking again with other digits changes nothing.
    expect(num(1234.5678)).toBe((1234.5678).toLocaleString(undefined, { maximumFractionDigits: 2 }));
  });

  it('show a dash for no number', () => {
    for (const value of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY]) expect(num(value)).toBe('—');
  });
});
