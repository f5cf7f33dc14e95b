import { isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** `defaultCountry` when the config sets none: the relay's numbers were Tanzanian first. */
export const DEFAULT_COUNTRY = 'TZ';

/** The outcome of `toE164`: the `reason` never contains the number, so it is safe to log. */
export type E164Result =
  | { readonly ok: true; readonly number: string }
  | { readonly ok: false; readonly reason: string };

const ALLOWED_CHARACTERS = /^[+\d\s().\-/]+$/;
const SEPARATORS = /[\s().\-/]/g;

/**
 * Whether `code` is an ISO 3166-1 alpha-2 country libphonenumber knows (a valid `defaultCountry`).
 *
 * @example
 * ```ts
 * isKnownCountry('KE'); // true
 * isKnownCountry('XX'); // false
 * ```
 */
export function isKnownCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}

/**
 * Normalises a phone number to E.164 (`+` and digits): a number written with its country code
 * (`+254…`, `00254…`) keeps it, one without is read as a number of `defaultCountry`. Only numbers
 * libphonenumber finds valid for their country pass.
 *
 * @example
 * ```ts
 * toE164('0712 345 678'); // { ok: true, number: '+255712345678' }
 * toE164('0712 345 678', 'KE'); // { ok: true, number: '+254712345678' }
 * toE164('+256 772 123456', 'KE'); // { ok: true, number: '+256772123456' }
 * ```
 */
export function toE164(raw: string, defaultCountry: string = DEFAULT_COUNTRY): E164Result {
  const trimmed = raw.trim();
  if (trimmed === '') return { ok: false, reason: 'empty' };
  if (!ALLOWED_CHARACTERS.test(trimmed)) return { ok: false, reason: 'not a phone number' };
  let compact = trimmed.replace(SEPARATORS, '');
  if (compact.lastIndexOf('+') > 0) return { ok: false, reason: 'not a phone number' };
  if (compact.startsWith('00')) compact = `+${compact.slice(2)}`;
  const country = isKnownCountry(defaultCountry) ? defaultCountry : undefined;
  if (country === undefined) return { ok: false, reason: `unknown defaultCountry ${defaultCountry}` };
  const parsed = parsePhoneNumberFromString(compact, country as Parameters<typeof parsePhoneNumberFromString>[1]);
  if (parsed === undefined || !parsed.isValid()) return { ok: false, reason: 'not a valid phone number' };
  return { ok: true, number: parsed.number };
}
