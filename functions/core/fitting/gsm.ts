import { Encoding } from './constants';

/**
 * GSM 03.38 basic character set in table order (3GPP TS 23.038 §6.2.1), without ESC (0x1B):
 * ESC only introduces the extension table and is never a character on its own.
 */
const BASIC_SET =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** Extension table: each is sent as ESC + code, so it costs 2 septets. */
const EXTENSION_SET = '\f^{}\\[~]|€';

/**
 * Septets per UTF-16 code unit, 0 for "not in GSM 03.38". Every GSM character is in the BMP
 * below U+20AD, so a small typed array indexed by code unit beats a Map on the hot path;
 * indexes past its end read `undefined`.
 */
const SEPTETS: Uint8Array = (() => {
  let size = 0;
  for (const char of BASIC_SET + EXTENSION_SET) size = Math.max(size, char.charCodeAt(0) + 1);
  const table = new Uint8Array(size);
  for (const char of BASIC_SET) table[char.charCodeAt(0)] = 1;
  for (const char of EXTENSION_SET) table[char.charCodeAt(0)] = 2;
  return table;
})();

/** Septets a UTF-16 code unit costs in GSM-7: 1, 2 (extension table) or 0 (not GSM). */
export const septetsOf = (code: number): number => SEPTETS[code] ?? 0;

/**
 * Whether a single character is in the GSM 03.38 basic set or extension table.
 *
 * @example
 * ```typescript
 * import { isGsmCharacter } from './index';
 *
 * isGsmCharacter('€'); // true (extension table)
 * isGsmCharacter('á'); // false
 * ```
 */
export const isGsmCharacter = (char: string): boolean => char.length === 1 && septetsOf(char.charCodeAt(0)) > 0;

/**
 * The encoding the SMS service will use for `text`: GSM-7 when every character is in the
 * GSM 03.38 basic set or extension table, otherwise UCS-2. The empty string is GSM-7.
 *
 * Apply {@link toGsmLookalikes} first: one curly quote is enough to make a message UCS-2.
 *
 * @example
 * ```typescript
 * import { encodingOf } from './index';
 *
 * encodingOf('Order #42 shipped [EU]'); // 'GSM-7'
 * encodingOf('Order shipped 📦'); // 'UCS-2'
 * ```
 */
export const encodingOf = (text: string): Encoding => {
  for (let i = 0; i < text.length; i++) {
    if (septetsOf(text.charCodeAt(i)) === 0) return Encoding.UCS_2;
  }
  return Encoding.GSM_7;
};
