import { ELLIPSIS } from './constants';
import { TextCutter } from './boundaries';
import { trimBreakingSpaces } from './normalise';

/**
 * The piece of `text` from `start` that fits in `room` characters: all of it when it fits,
 * otherwise a prefix cut by `cutter` (word boundary preferred) followed by {@link ELLIPSIS}.
 * `text[start]` must not be a space or line break.
 */
export const truncateFrom = (
  text: string,
  start: number,
  room: number,
  cutter: TextCutter,
): { readonly text: string; readonly truncated: boolean } => {
  if (text.length - start <= room) return { text: text.slice(start), truncated: false };
  const end = cutter.cut(start, room - ELLIPSIS.length);
  return { text: trimBreakingSpaces(text.slice(start, end)) + ELLIPSIS, truncated: true };
};

/** `text` cut to at most `limit` characters, ellipsis included. */
export const truncateMessage = (text: string, limit: number) =>
  truncateFrom(text, 0, limit, new TextCutter(text, limit));
