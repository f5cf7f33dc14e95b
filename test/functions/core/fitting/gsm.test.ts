import { describe, expect, it } from 'vitest';
import { Encoding, encodingOf, isGsmCharacter } from '../../../../functions/core/fitting/index';

describe('GSM 03.38 alphabet', () => {
  it('has 127 basic characters (ESC excluded) and 10 extension characters in the BMP', () => {
    let count = 0;
    for (let code = 0; code <= 0xffff; code++) {
      if (isGsmCharacter(String.fromCharCode(code))) count++;
    }
    expect(count).toBe(127 + 10);
  });

  it.each([
    ['€'],
    ['{'],
    ['}'],
    ['['],
    [']'],
    ['~'],
    ['|'],
    ['^'],
    ['\\'],
    ['\f'],
    ['@'],
    ['£'],
    ['¤'],
    ['Ç'],
    ['Δ'],
    ['\n'],
    ['\r'],
  ])('%j is a GSM character', (char) => {
    expect(isGsmCharacter(char)).toBe(true);
  });

  it.each([['ç'], ['`'], ['\t'], ['\x1b'], ['á'], ['α'], ['’'], [''], ['ab'], ['😀']])(
    '%j is not a GSM character',
    (char) => {
      expect(isGsmCharacter(char)).toBe(false);
    },
  );
});

describe('encodingOf', () => {
  it.each([
    ['', Encoding.GSM_7],
    ['Hello, world!', Encoding.GSM_7],
    ['@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ¤¡ÄÖÑÜ§¿äöñüà', Encoding.GSM_7],
    ['{}[]~|^\\€\f', Encoding.GSM_7],
    ['line\r\nbreak', Encoding.GSM_7],
    ['Olá', Encoding.UCS_2],
    ['it’s', Encoding.UCS_2],
    ['code `x`', Encoding.UCS_2],
    ['façade', Encoding.UCS_2],
    ['tab\there', Encoding.UCS_2],
    ['escape \x1b', Encoding.UCS_2],
    ['Ελλάδα', Encoding.UCS_2],
    ['مرحبا', Encoding.UCS_2],
    ['你好', Encoding.UCS_2],
    ['ok 😀', Encoding.UCS_2],
    ['lone \uD800', Encoding.UCS_2],
  ])('%j is %s', (text, encoding) => {
    expect(encodingOf(text)).toBe(encoding);
  });
});
