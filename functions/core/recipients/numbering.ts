import { compileProviderRouting, type ProviderRouting, type RoutingSettings } from '../config/routing';
import { ProviderType } from '../provider/outcome';
import { maskMsisdn } from './mask';
import { DEFAULT_COUNTRY, isKnownCountry } from './e164';
import { MSISDN_REJECTIONS, type MsisdnResult, normalizeMsisdn, NOT_TANZANIAN, parsePhone } from './msisdn';

/**
 * How a config reads its recipients' numbers: the country of a number written without a country
 * code, and the providers that text which numbers. Plain data, so that it crosses to the preview
 * worker as it is.
 */
export interface Numbering {
  /** `defaultCountry` (ISO 3166-1 alpha-2). @default 'TZ' */
  readonly defaultCountry: string;
  /** The config's providers and routing; absent: only what `sms-service` texts (`+255`), as before providers. */
  readonly routing?: RoutingSettings;
}

/** A config of one `sms-service` provider, before `defaultCountry`: Tanzanian numbers only. */
export const TANZANIAN_NUMBERING: Numbering = Object.freeze({ defaultCountry: DEFAULT_COUNTRY });

/** Types of number that cannot receive an SMS: sending to them only spends credit. */
const NOT_MOBILE_TYPES: Readonly<Record<string, string>> = {
  FIXED_LINE: 'landline',
  TOLL_FREE: 'toll-free',
  PREMIUM_RATE: 'premium-rate',
  SHARED_COST: 'shared-cost',
  VOIP: 'VoIP',
  PAGER: 'pager',
  UAN: 'UAN',
  VOICEMAIL: 'voicemail',
};

/**
 * Normalises a recipient to its E.164 digits without the `+` (`255712345678`, `254712345678`):
 * the form records, the store and the allow lists keep. A number written without a country code
 * is read as a number of `defaultCountry`. Tanzanian numbers follow `normalizeMsisdn`'s rules
 * exactly (mobile numbers only, the same reasons); another country's number passes when
 * libphonenumber finds it valid and not of a type that cannot take an SMS (landline, toll-free…).
 * The `reason` never contains the number.
 *
 * @example
 * ```ts
 * normalizeRecipient('0712 345 678');        // { ok: true, number: '255712345678' }
 * normalizeRecipient('+254 712 345 678');    // { ok: true, number: '254712345678' }
 * normalizeRecipient('0712 345 678', 'KE');  // { ok: true, number: '254712345678' }
 * ```
 */
export function normalizeRecipient(raw: string, defaultCountry: string = DEFAULT_COUNTRY): MsisdnResult {
  // YAML reads an unquoted 255712345678 as a number.
  const text = typeof raw === 'string' ? raw : raw === null || raw === undefined ? '' : String(raw);
  if (defaultCountry === DEFAULT_COUNTRY) {
    // Memoised, and the reasons every Tanzanian number has always had.
    const tanzanian = normalizeMsisdn(text);
    if (tanzanian.ok || !tanzanian.reason.startsWith(NOT_TANZANIAN)) return tanzanian;
  }
  if (text.trim() === '') return { ok: false, reason: MSISDN_REJECTIONS.empty };
  if (!isKnownCountry(defaultCountry)) return { ok: false, reason: `unknown defaultCountry ${defaultCountry}` };
  const phone = parsePhone(text, defaultCountry);
  if (phone === undefined) return { ok: false, reason: MSISDN_REJECTIONS.notANumber };
  if (phone.countryCallingCode === '255') return normalizeMsisdn(phone.number);
  if (!phone.isValid()) return { ok: false, reason: `not a valid number for +${phone.countryCallingCode}` };
  const type = phone.getType();
  const notMobile = type === undefined ? undefined : NOT_MOBILE_TYPES[type];
  if (notMobile !== undefined) return { ok: false, reason: `not a mobile number (${notMobile})` };
  return { ok: true, number: phone.number.slice(1) };
}

const compiledRouting = new WeakMap<Numbering, ProviderRouting>();

/** The routing of `numbering`, compiled once per numbering. */
const routingOf = (numbering: Numbering): ProviderRouting => {
  let routing = compiledRouting.get(numbering);
  if (routing === undefined) {
    routing = compileProviderRouting(numbering.routing ?? { providers: { main: { type: ProviderType.SmsService } } });
    compiledRouting.set(numbering, routing);
  }
  return routing;
};

/**
 * Why no provider texts a normalised number (`no provider for +2438****678`, masked as every
 * number in a log), or `undefined` when one does.
 */
export function noProviderReason(numbering: Numbering, number: string): string | undefined {
  return routingOf(numbering).providersFor(`+${number}`).length > 0
    ? undefined
    : `${NO_PROVIDER_PREFIX}+${maskMsisdn(number)}`;
}

/** How every {@link noProviderReason} starts. */
export const NO_PROVIDER_PREFIX = 'no provider for ';

/** {@link normalizeRecipient} with `numbering`'s `defaultCountry`; without one, `normalizeMsisdn`. */
export const normalizeWith = (numbering: Numbering | undefined, raw: string): MsisdnResult =>
  numbering === undefined ? normalizeMsisdn(raw) : normalizeRecipient(raw, numbering.defaultCountry);
