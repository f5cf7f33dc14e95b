import { isGsmCharacter, toGsmLookalikes } from '../../fitting';

const RUN_OF_SPACES = / {2,}/g;

/**
 * `sms_safe`: keeps a value inside the GSM-7 alphabet. Look-alikes are replaced as the sender
 * does for every message (curly quotes, dashes, accents GSM lacks); what has no equivalent
 * (emoji, other scripts) is dropped, then runs of spaces collapse and the ends are trimmed.
 *
 * The sender leaves emoji in, because they carry meaning; one emoji makes the whole SMS UCS-2,
 * 70 characters a part instead of 160. This filter is for values where that's not worth it,
 * like Grafana alert titles decorated with 🔥.
 *
 * @example
 * ```liquid
 * {{ '🔥 “Disk” full — 95%' | sms_safe }}  → "Disk" full - 95%
 * ```
 */
export const sms_safe = (value: unknown): unknown => {
  if (value === null || value === undefined) return value;
  let text = '';
  for (const character of toGsmLookalikes(String(value).replace(/\t/g, ' '))) {
    if (isGsmCharacter(character)) text += character;
  }
  return text.replace(RUN_OF_SPACES, ' ').trim();
};
