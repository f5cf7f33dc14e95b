import { type CharacterMapping, mapCharacters } from './lookalikes';

const isBreakingSpace = (code: number): boolean => code === 0x20 || code === 0x0a;

/** Trims spaces and line breaks, the only whitespace left after normalisation. */
export const trimBreakingSpaces = (text: string): string => {
  let start = 0;
  let end = text.length;
  while (start < end && isBreakingSpace(text.charCodeAt(start))) start++;
  while (end > start && isBreakingSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
};

/** Index of the first character at or after `from` that is not a space or line break. */
export const skipBreakingSpaces = (text: string, from: number): number => {
  let index = from;
  while (index < text.length && isBreakingSpace(text.charCodeAt(index))) index++;
  return index;
};

export { isBreakingSpace };

/** Two or more spaces/line breaks: the only runs the whitespace rules change. */
const WHITESPACE_RUN = /[ \n]{2,}/g;

/** One blank line at most, no spaces around a line break, one space for a run of spaces. */
const collapseRun = (run: string): string => {
  const firstBreak = run.indexOf('\n');
  if (firstBreak === -1) return ' ';
  return run.indexOf('\n', firstBreak + 1) === -1 ? '\n' : '\n\n';
};

/**
 * Prepares text for sending; {@link fitMessage} runs it before measuring anything.
 *
 * 1. Look-alike replacement ({@link GSM_LOOKALIKES}).
 * 2. Repairs: a lone surrogate becomes `?` (U+FFFD would force UCS-2 for what is already a
 *    broken character); CR LF, CR, VT, FF and NEL become `\n`; a tab becomes a space; other
 *    C0/C1 control characters and DEL are removed.
 * 3. Whitespace: line breaks are kept (SMS readers expect them), but spaces around a line
 *    break are dropped, runs of spaces collapse to one, more than one blank line collapses to
 *    one, and the whole text is trimmed. Templates leak indentation and blank lines that would
 *    otherwise cost characters.
 *
 * `replacedCharacters` counts steps 1 and 2 except the layout rewrites of line breaks and tabs.
 *
 * @example
 * ```typescript
 * import { normaliseMessage } from './index';
 *
 * normaliseMessage('  Build\u00A0#12 — “ok”  \r\n\r\n\r\n  next  ');
 * // { text: 'Build #12 - "ok"\n\nnext', replacedCharacters: 4 }
 * ```
 */
export const normaliseMessage = (text: string): CharacterMapping => {
  const mapped = mapCharacters(text, true);
  const collapsed = mapped.text.replace(WHITESPACE_RUN, collapseRun);
  return { text: trimBreakingSpaces(collapsed), replacedCharacters: mapped.replacedCharacters };
};
