import { type CountryCode, isSupportedCountry } from 'libphonenumber-js/max';
import { MSISDN_REJECTIONS, type MsisdnResult, parsePhone } from './msisdn';

/** `defaultCountry` when the config sets none: the relay's numbers were Tanzanian first. */
export const DEFAULT_COUNTRY = 'TZ';

/** The outcome of `toE164`, as `normalizeMsisdn`'s: the `reason` never contains the number. */
export type E164Result = MsisdnResult;

/**
 * Whether `code` is an ISO 3166-1 alpha-2 country libphonenumber knows (a valid `defaultCountry`).
 *
 * @example
 * ```ts
 * isKnownCountry('KE'); // true
 * isKnownCountry('XX'); // false
 * ```
 */
export function isKnownCountry(code: string): code is CountryCode {
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
  if (raw.trim() === '') return { ok: false, reason: MSISDN_REJECTIONS.empty };
  if (!isKnownCountry(defaultCountry)) return { ok: false, reason: `unknown defaultCountry ${defaultCountry}` };
  const parsed = parsePhone(raw, defaultCountry);
  if (parsed === undefined) return { ok: false, reason: MSISDN_REJECTIONS.notANumber };
  if (!parsed.isValid()) return { ok: false, reason: 'not a valid phone number' };
  return { ok: true, number: parsed.number };
}
