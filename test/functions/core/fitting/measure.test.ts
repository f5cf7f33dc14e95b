import { describe, expect, it } from 'vitest';
import { countSegments, Encoding, measureMessage } from '../../../../functions/core/fitting/index';

const a = (n: number) => 'a'.repeat(n);
const kana = (n: number) => 'あ'.repeat(n);

describe('countSegments', () => {
  it.each([
    ['empty', '', 0],
    ['1 GSM char', a(1), 1],
    ['160 GSM chars', a(160), 1],
    ['161 GSM chars', a(161), 2],
    ['153 * 2 GSM chars', a(306), 2],
    ['153 * 2 + 1 GSM chars', a(307), 3],
    ['80 extension chars = 160 septets', '€'.repeat(80), 1],
    ['81 extension chars = 162 septets', '€'.repeat(81), 2],
    ['159 + 1 extension = 161 septets', `${a(159)}€`, 2],
    ['306 septets, extension char straddling a segment boundary', `${a(152)}€${a(152)}`, 3],
    ['306 septets, extension char inside a segment', `${a(151)}€${a(153)}`, 2],
    ['70 UCS-2 units', kana(70), 1],
    ['71 UCS-2 units', kana(71), 2],
    ['67 * 2 UCS-2 units', kana(134), 2],
    ['67 * 2 + 1 UCS-2 units', kana(135), 3],
    ['35 emoji = 70 units', '😀'.repeat(35), 1],
    ['36 emoji = 72 units', '😀'.repeat(36), 2],
    ['134 units, surrogate pair straddling a segment boundary', `${kana(66)}😀${kana(66)}`, 3],
    ['134 units, surrogate pair inside a segment', `${kana(65)}😀${kana(67)}`, 2],
  ])('%s → %i', (_, text, segments) => {
    expect(countSegments(text)).toBe(segments);
  });

  it('one non-GSM character makes a 160-character message 3 UCS-2 segments', () => {
    expect(countSegments(`${a(159)}’`)).toBe(3);
  });
});

describe('measureMessage', () => {
  it.each([
    ['hello', Encoding.GSM_7, 5, 1],
    ['€', Encoding.GSM_7, 1, 1],
    ['😀', Encoding.UCS_2, 2, 1],
    ['👨‍👩‍👧', Encoding.UCS_2, 8, 1],
    ['e\u0301', Encoding.UCS_2, 2, 1],
    [a(200), Encoding.GSM_7, 200, 2],
    ['', Encoding.GSM_7, 0, 0],
  ])('%j → %s, %i characters, %i segments', (text, encoding, characters, segments) => {
    expect(measureMessage(text)).toEqual({ text, encoding, characters, segments });
  });
});
