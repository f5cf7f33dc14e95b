import { Encoding, WORD_BOUNDARY_WINDOW } from './constants';
import { encodingOf } from './gsm';
import { isBreakingSpace } from './normalise';
import { splitsSurrogatePair } from './utf16';

/**
 * Built once, on first use: constructing a segmenter loads ICU break rules (tens of ms), and only
 * a message outside GSM-7 that has to be cut needs one, so a cold start does not pay for it.
 */
let graphemes: Intl.Segmenter | null | undefined;

function graphemeSegmenter(): Intl.Segmenter | undefined {
  graphemes ??= typeof Intl.Segmenter === 'function' ? new Intl.Segmenter('en', { granularity: 'grapheme' }) : null;
  return graphemes ?? undefined;
}

/**
 * Characters past the last possible cut that are still segmented: whether a position is a
 * grapheme boundary depends on what follows it (combining marks, ZWJ), never on much.
 */
const LOOKAHEAD = 32;

/**
 * Finds where to cut a message normalised by {@link normaliseMessage}. Prefers a space or line
 * break, then a grapheme cluster boundary (so a base letter keeps its combining marks and an
 * emoji ZWJ sequence stays whole), and only inside a cluster longer than the room falls back
 * to a code point boundary: a surrogate pair is never split.
 */
export class TextCutter {
  readonly #text: string;
  readonly #segments: Intl.Segments | undefined;

  /**
   * @param text - the whole normalised message
   * @param horizon - no cut will be asked for beyond this index; segmenting stops shortly
   *   after it, so a huge message costs no more than the part of it that can be sent
   */
  public constructor(text: string, horizon: number = text.length) {
    this.#text = text;
    const end = horizon + LOOKAHEAD;
    const window = end < text.length ? text.slice(0, end) : text;
    // GSM 03.38 has no combining marks, joiners or surrogates, and normalisation removed CR:
    // in GSM-7 text every code unit boundary is a grapheme boundary, no segmenter needed.
    this.#segments = encodingOf(window) === Encoding.GSM_7 ? undefined : graphemeSegmenter()?.segment(window);
  }

  /**
   * End (exclusive) of the piece starting at `start` with at most `room` characters. Any
   * space or line break at the end is still to be trimmed by the caller. Always `> start` for
   * `room >= 2`.
   */
  public cut(start: number, room: number): number {
    const text = this.#text;
    const max = start + room;
    if (max >= text.length) return text.length;
    const earliestWordCut = start + Math.ceil(room * (1 - WORD_BOUNDARY_WINDOW));
    for (let i = max; i >= earliestWordCut; i--) {
      if (isBreakingSpace(text.charCodeAt(i)) && this.#isGraphemeBoundary(i) && this.#isGraphemeBoundary(i + 1)) {
        return i;
      }
    }
    const clusterStart = this.#clusterStart(max);
    if (clusterStart > start) return clusterStart;
    return splitsSurrogatePair(text, max) ? max - 1 : max;
  }

  #clusterStart(index: number): number {
    if (this.#segments === undefined) {
      return splitsSurrogatePair(this.#text, index) ? index - 1 : index;
    }
    return this.#segments.containing(index)?.index ?? index;
  }

  #isGraphemeBoundary(index: number): boolean {
    if (index <= 0 || index >= this.#text.length) return true;
    return this.#clusterStart(index) === index;
  }
}
