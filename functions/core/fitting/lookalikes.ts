import { septetsOf } from './gsm';
import { isHighSurrogate, isLowSurrogate } from './utf16';

/**
 * Characters outside GSM 03.38 and what they become. Only replacements a reader would not
 * notice or would expect anyway; anything else is left alone (and keeps the message UCS-2).
 *
 * | From | To | Why |
 * |---|---|---|
 * | `‘ ’ ‚ ‛ ′` (U+2018, U+2019, U+201A, U+201B, U+2032), `` ` `` | `'` | quotes, prime, backtick |
 * | `“ ” „ ‟ ″ « »` (U+201C–U+201F, U+2033, U+00AB, U+00BB) | `"` | quotes, double prime, guillemets |
 * | `‐ ‑ ‒ – — ― −` (U+2010–U+2015, U+2212) | `-` | hyphens, dashes, minus |
 * | `…` (U+2026) | `...` | ellipsis |
 * | `•` (U+2022) | `*` | bullet |
 * | U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000 | space | no-break and typographic spaces |
 * | U+2028, U+2029 | `\n` | line and paragraph separators |
 * | U+200B, U+2060, U+FEFF, U+00AD | removed | zero-width space, word joiner, BOM, soft hyphen |
 * | U+200C, U+200D | removed, see below | zero-width (non-)joiner |
 * | `á â ã` / `Á À Â Ã` | `a` / `A` | accents GSM lacks (GSM has à ä å) |
 * | `ê ë` / `È Ê Ë` | `e` / `E` | (GSM has è é É) |
 * | `í î ï` / `Í Ì Î Ï` | `i` / `I` | (GSM has ì) |
 * | `ó ô õ` / `Ó Ò Ô Õ` | `o` / `O` | (GSM has ò ö ø) |
 * | `ú û` / `Ú Ù Û` | `u` / `U` | (GSM has ù ü) |
 * | `ç` | `Ç` | GSM 0x09 is Ç; 3GPP TS 23.038 notes handsets often show it as ç |
 *
 * The joiners U+200C/U+200D are only removed when neither neighbour stays outside GSM: inside
 * an emoji ZWJ sequence (👨‍💻) or Persian/Indic text they carry meaning, and such text is
 * UCS-2 whatever we do.
 */
export const GSM_LOOKALIKES: Readonly<Record<string, string>> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201A': "'",
  '\u201B': "'",
  '\u2032': "'",
  '`': "'",
  '\u201C': '"',
  '\u201D': '"',
  '\u201E': '"',
  '\u201F': '"',
  '\u2033': '"',
  '\u00AB': '"',
  '\u00BB': '"',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2015': '-',
  '\u2212': '-',
  '\u2026': '...',
  '\u2022': '*',
  '\u00A0': ' ',
  '\u2000': ' ',
  '\u2001': ' ',
  '\u2002': ' ',
  '\u2003': ' ',
  '\u2004': ' ',
  '\u2005': ' ',
  '\u2006': ' ',
  '\u2007': ' ',
  '\u2008': ' ',
  '\u2009': ' ',
  '\u200A': ' ',
  '\u202F': ' ',
  '\u205F': ' ',
  '\u3000': ' ',
  '\u2028': '\n',
  '\u2029': '\n',
  '\u200B': '',
  '\u2060': '',
  '\uFEFF': '',
  '\u00AD': '',
  '\u200C': '',
  '\u200D': '',
  á: 'a',
  â: 'a',
  ã: 'a',
  Á: 'A',
  À: 'A',
  Â: 'A',
  Ã: 'A',
  ê: 'e',
  ë: 'e',
  È: 'E',
  Ê: 'E',
  Ë: 'E',
  í: 'i',
  î: 'i',
  ï: 'i',
  Í: 'I',
  Ì: 'I',
  Î: 'I',
  Ï: 'I',
  ó: 'o',
  ô: 'o',
  õ: 'o',
  Ó: 'O',
  Ò: 'O',
  Ô: 'O',
  Õ: 'O',
  ú: 'u',
  û: 'u',
  Ú: 'U',
  Ù: 'U',
  Û: 'U',
  ç: 'Ç',
};

/** Keyed by code unit: every look-alike source is a single BMP code unit. */
const LOOKALIKES: ReadonlyMap<number, string> = new Map(
  Object.entries(GSM_LOOKALIKES).map(([from, to]) => [from.charCodeAt(0), to]),
);

const ZWNJ = 0x200c;
const ZWJ = 0x200d;

/** Printable ASCII except backtick, plus `\n`: already GSM-7 and nothing to replace or sanitise. */
const NOTHING_TO_MAP = /^[\n\x20-\x5F\x61-\x7E]*$/;

const isControl = (code: number): boolean => code < 0x20 || (code >= 0x7f && code <= 0x9f);

/**
 * Would this neighbour of a joiner still be outside GSM after mapping? When sanitising, lone
 * surrogates and control characters are repaired too, so they do not keep a joiner either
 * (which keeps normalisation idempotent).
 */
const staysNonGsm = (code: number, sanitise: boolean): boolean =>
  !Number.isNaN(code) &&
  septetsOf(code) === 0 &&
  !LOOKALIKES.has(code) &&
  !(sanitise && (isControl(code) || isHighSurrogate(code) || isLowSurrogate(code)));

const codePointBefore = (text: string, index: number): number => {
  const code = text.charCodeAt(index - 1);
  return isLowSurrogate(code) && isHighSurrogate(text.charCodeAt(index - 2))
    ? (text.codePointAt(index - 2) ?? code)
    : code;
};

/** Sanitising: line breaks become `\n`, tabs a space, other control characters go. */
const LAYOUT: ReadonlyMap<number, string> = new Map([
  [0x09, ' '],
  [0x0b, '\n'],
  [0x0c, '\n'],
  [0x0d, '\n'],
  [0x85, '\n'],
]);

/** What a lone surrogate becomes: `?` keeps the message GSM-7, where U+FFFD would not. */
export const LONE_SURROGATE_REPLACEMENT = '?';

/** Sanitising repair for the code unit at `index`, or `undefined` when it needs none. */
const repairAt = (text: string, index: number, code: number): string | undefined => {
  if (isHighSurrogate(code) || isLowSurrogate(code)) return LONE_SURROGATE_REPLACEMENT;
  if (!isControl(code)) return undefined;
  // CR LF: the LF that follows is the line break.
  if (code === 0x0d && text.charCodeAt(index + 1) === 0x0a) return '';
  return LAYOUT.get(code) ?? '';
};

/** Look-alike for the code unit at `index`, or `undefined` when it is kept. */
const lookalikeAt = (text: string, index: number, code: number, sanitise: boolean): string | undefined => {
  const lookalike = LOOKALIKES.get(code);
  if (
    (code === ZWJ || code === ZWNJ) &&
    (staysNonGsm(codePointBefore(text, index), sanitise) ||
      staysNonGsm(text.codePointAt(index + 1) ?? Number.NaN, sanitise))
  ) {
    return undefined;
  }
  return lookalike;
};

export interface CharacterMapping {
  readonly text: string;
  /** Input characters replaced or removed: look-alikes, lone surrogates and control characters. */
  readonly replacedCharacters: number;
}

/**
 * One pass over `text` applying the look-alike table and, with `sanitise`, the repairs
 * {@link normaliseMessage} needs: lone surrogates → `?`, CR LF / CR / VT / FF / NEL → `\n`,
 * tab → space, other C0/C1 controls and DEL removed. Line-break and tab rewrites are layout
 * and are not counted as replacements.
 */
export const mapCharacters = (text: string, sanitise: boolean): CharacterMapping => {
  if (NOTHING_TO_MAP.test(text)) return { text, replacedCharacters: 0 };
  // Unchanged runs are copied as slices: most characters are kept, and per-character
  // concatenation would dominate the cost of fitting a message.
  let out = '';
  let runStart = 0;
  let replaced = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code >= 0x20 && code < 0x7f && code !== 0x60) || code === 0x0a) continue;
    if (isHighSurrogate(code) && isLowSurrogate(text.charCodeAt(i + 1))) {
      i++;
      continue;
    }
    const replacement = sanitise
      ? (repairAt(text, i, code) ?? lookalikeAt(text, i, code, true))
      : lookalikeAt(text, i, code, false);
    if (replacement === undefined) continue;
    out += text.slice(runStart, i) + replacement;
    runStart = i + 1;
    if (!LAYOUT.has(code)) replaced++;
  }
  return { text: runStart === 0 ? text : out + text.slice(runStart), replacedCharacters: replaced };
};

/**
 * Replaces characters outside GSM 03.38 that have a GSM look-alike (table at
 * {@link GSM_LOOKALIKES}), so that one curly quote or no-break space does not switch the whole
 * message to UCS-2 and cut its room from 160 to 70. Other characters, including lone
 * surrogates and control characters, are left as they are: emoji, Arabic or CJK text stays UCS-2.
 *
 * @example
 * ```typescript
 * import { toGsmLookalikes } from './index';
 *
 * toGsmLookalikes('“Deploy” – done…'); // '"Deploy" - done...'
 * toGsmLookalikes('Olá, você'); // 'Ola, voce'
 * toGsmLookalikes('Deployed 🚀 – ok'); // 'Deployed 🚀 - ok' (UCS-2 anyway: the emoji)
 * ```
 */
export const toGsmLookalikes = (text: string): string => mapCharacters(text, false).text;
