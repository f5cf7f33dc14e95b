import { TextCutter } from './boundaries';
import { skipBreakingSpaces, trimBreakingSpaces } from './normalise';
import { truncateFrom, truncateMessage } from './truncate';

const digitCount = (value: number): number => String(value).length;

/**
 * `(i/n) ` in front of every part: short (6 characters up to 9 parts), GSM-7, and readable on
 * any handset whether or not it reassembles the parts in order.
 */
export const partPrefix = (index: number, total: number): string => `(${index}/${total}) `;

/** `(`, `/`, `)` and the space, plus the digits. */
const prefixWidth = (index: number, totalDigits: number): number => 4 + digitCount(index) + totalDigits;

/**
 * Greedy split assuming the total part count has `totalDigits` digits: each piece as long as
 * its prefix allows, cut on a word boundary where one is near the end.
 */
const chunk = (
  text: string,
  cutter: TextCutter,
  limit: number,
  maxParts: number,
  totalDigits: number,
): { readonly chunks: string[]; readonly truncated: boolean } => {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    const index = chunks.length + 1;
    const room = limit - prefixWidth(index, totalDigits);
    if (index === maxParts) {
      const last = truncateFrom(text, start, room, cutter);
      chunks.push(last.text);
      return { chunks, truncated: last.truncated };
    }
    const end = cutter.cut(start, room);
    chunks.push(trimBreakingSpaces(text.slice(start, end)));
    start = skipBreakingSpaces(text, end);
  }
  return { chunks, truncated: false };
};

/**
 * Splits a normalised message longer than `limit` into numbered parts `(i/n) text`, each at
 * most `limit` characters with its prefix. Beyond `maxParts` the last part is truncated with
 * the ellipsis; with `maxParts` 1 the result is the plain truncated message, no prefix.
 */
export const splitMessage = (
  text: string,
  limit: number,
  maxParts: number,
): { readonly parts: readonly string[]; readonly truncated: boolean } => {
  if (maxParts === 1) {
    const only = truncateMessage(text, limit);
    return { parts: [only.text], truncated: only.truncated };
  }
  const cutter = new TextCutter(text, maxParts * limit);
  // The prefix width depends on the total, known only after splitting: try 1 digit, then 2.
  for (let totalDigits = 1; ; totalDigits++) {
    const { chunks, truncated } = chunk(text, cutter, limit, maxParts, totalDigits);
    const total = chunks.length;
    if (digitCount(total) <= totalDigits) {
      return { parts: chunks.map((piece, i) => partPrefix(i + 1, total) + piece), truncated };
    }
  }
};
