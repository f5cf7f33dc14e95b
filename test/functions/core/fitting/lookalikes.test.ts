import { describe, expect, it } from 'vitest';
import {
  Encoding,
  encodingOf,
  GSM_LOOKALIKES,
  isGsmCharacter,
  normaliseMessage,
  toGsmLookalikes,
} from '../../../../functions/core/fitting/index';

describe('GSM_LOOKALIKES', () => {
  const entries = Object.entries(GSM_LOOKALIKES);

  it.each(entries)('%j → %j', (from, to) => {
    expect(isGsmCharacter(from)).toBe(false);
    expect(encodingOf(to)).toBe(Encoding.GSM_7);
    expect(toGsmLookalikes(from)).toBe(to);
  });

  it('covers the quotes, dashes, spaces and zero-width characters asked for', () => {
    const required =
      '‘’‚‛“”„‟′″‐‑‒–—―−…•«»\u00A0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A' +
      '\u202F\u205F\u3000\u200B\u200C\u200D\uFEFF';
    for (const char of required) expect(GSM_LOOKALIKES).toHaveProperty([char]);
  });
});

describe('toGsmLookalikes', () => {
  it.each([
    ['“Deploy” – done…', '"Deploy" - done...'],
    ['it’s ‘fine’', "it's 'fine'"],
    ['„Zitat“ und ‚so‘', '"Zitat" und \'so\''],
    ['«Bonjour»', '"Bonjour"'],
    ['5′ 10″', '5\' 10"'],
    ['a‐b‑c‒d–e—f―g−h', 'a-b-c-d-e-f-g-h'],
    ['• one\n• two', '* one\n* two'],
    ['10\u00A0000\u202F€', '10 000 €'],
    ['zero\u200Bwidth\uFEFF', 'zerowidth'],
    ['soft\u00ADhyphen', 'softhyphen'],
    ['a\u200Db\u200Cc', 'abc'],
    ['Olá, você está aí?', 'Ola, voce esta ai?'],
    ['Ação', 'AÇao'],
    ['ÁÀÂÃ ÈÊË ÍÌÎÏ ÓÒÔÕ ÚÙÛ', 'AAAA EEE IIII OOOO UUU'],
    ['run `npm test`', "run 'npm test'"],
    ['line\u2028sep', 'line\nsep'],
  ])('%j → %j', (input, expected) => {
    expect(toGsmLookalikes(input)).toBe(expected);
    expect(encodingOf(expected)).toBe(Encoding.GSM_7);
  });

  it.each([
    ['GSM accents are kept', 'Café à la crème, Müller, niño, Øre'],
    ['GSM extension characters are kept', '{json} [x] ~ | ^ \\ €'],
    ['other letters are not guessed', 'Łazienki, şehir, œuvre, ÿ'],
    ['controls and lone surrogates are not its job', 'a\tb\x00c\uD800'],
    ['emoji ZWJ sequences keep their joiner', '👨‍💻 👨‍👩‍👧'],
    ['Persian ZWNJ is kept', 'می\u200Cخواهم'],
  ])('%s', (_, text) => {
    expect(toGsmLookalikes(text)).toBe(text);
  });

  it('still replaces look-alikes in text that stays UCS-2', () => {
    const text = toGsmLookalikes('Deployed 🚀 – “ok”');
    expect(text).toBe('Deployed 🚀 - "ok"');
    expect(encodingOf(text)).toBe(Encoding.UCS_2);
  });

  it('removes a joiner between a look-alike and GSM text', () => {
    expect(toGsmLookalikes('á\u200Db')).toBe('ab');
  });
});

describe('normaliseMessage', () => {
  it.each([
    ['  Build\u00A0#12 — “ok”  \r\n\r\n\r\n  next  ', 'Build #12 - "ok"\n\nnext', 4],
    ['a\r\nb\rc\nd', 'a\nb\nc\nd', 0],
    ['a\tb \t c', 'a b c', 0],
    ['a    b', 'a b', 0],
    ['  indented\n    lines  \n', 'indented\nlines', 0],
    ['para\n\n\n\n\npara', 'para\n\npara', 0],
    ['page\fbreak\vtab\u0085nel', 'page\nbreak\ntab\nnel', 0],
    ['nul\x00bell\x07esc\x1bdel\x7fc1\x9b', 'nulbellescdelc1', 5],
    ['lone \uD800 high and \uDC00 low', 'lone ? high and ? low', 2],
    ['pair 😀 ok', 'pair 😀 ok', 0],
    ['\uDE00\uD83D', '??', 2],
    ['\u200B \u00A0\n\t', '', 2],
  ])('%j → %j (%i replaced)', (input, text, replacedCharacters) => {
    expect(normaliseMessage(input)).toEqual({ text, replacedCharacters });
  });
});
