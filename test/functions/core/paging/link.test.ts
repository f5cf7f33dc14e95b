import { describe, expect, it } from 'vitest';
import { linkLength } from '../../../../functions/core/paging/compile';
import { ackLink, fitWithLink } from '../../../../functions/core/paging/link';

const TOKEN = 'AbCdEfGhIjKlMnOpQrSt_-';
const LINK = ackLink('https://sms.example.co.tz/', TOKEN);

describe('fitWithLink', () => {
  it('appends the link after a space to a text that fits', () => {
    expect(LINK).toBe(`https://sms.example.co.tz/a/${TOKEN}`);
    expect(fitWithLink('[FIRING] DiskFull', LINK)).toMatchObject({
      text: `[FIRING] DiskFull ${LINK}`,
      segments: 1,
      encoding: 'GSM-7',
    });
  });

  it('shortens a long text and keeps the link whole within 160 characters', () => {
    const long = `[FIRING] DiskAlmostFull: ${'the data volume on db-1 is almost full '.repeat(6)}`;
    const fitted = fitWithLink(long, LINK)!;
    expect(fitted.characters).toBeLessThanOrEqual(160);
    expect(fitted.text.endsWith(` ${LINK}`)).toBe(true);
    expect(fitted.text.slice(0, -LINK.length - 1)).toMatch(/\.\.\.$/);
    expect(linkLength('https://sms.example.co.tz')).toBe(LINK.length + 1);
  });

  it('gives up when the link leaves no room for a text', () => {
    expect(fitWithLink('x', `https://${'a'.repeat(140)}/a/${TOKEN}`)).toBeUndefined();
    expect(fitWithLink('   ', LINK)).toBeUndefined();
  });
});
