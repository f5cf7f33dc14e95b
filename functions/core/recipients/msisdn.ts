// The "max" metadata: every country, with number types (landline, toll-free…) for the rejections.
import { PHONE_NUMBER_PATTERN } from '../defaults';
import {
  type CountryCode,
  parsePhoneNumberFromString,
  validatePhoneNumberLength,
  type PhoneNumber,
} from 'libphonenumber-js/max';

/** The outcome of `normalizeMsisdn`: the `reason` never contains the number, so it is safe to log. */
export type MsisdnResult =
  | { readonly ok: true; readonly number: string }
  | { readonly ok: false; readonly reason: string };

/** How the reason for another country's number starts: `not a Tanzanian number (+254…)`. */
export const NOT_TANZANIAN = 'not a Tanzanian number';

/** Reasons `normalizeMsisdn` gives, besides `not a Tanzanian number (+254…)`. */
export const MSISDN_REJECTIONS = {
  empty: 'empty',
  notANumber: 'not a phone number',
  unknownCountry: 'unknown country code',
  tooShort: 'too short',
  tooLong: 'too long',
  invalid: 'not a valid Tanzanian number',
} as const;

// What people type between digits; anything else (letters, `#`, `*`) isn't a number for us,
// although libphonenumber would read letters as a vanity number.
const ALLOWED_CHARACTERS = /^[+\d\s().\-/]+$/;
const SEPARATORS = /[\s().\-/]/g;
const TANZANIAN_NATIONAL_LENGTH = 9;

const TYPE_NAMES: Readonly<Record<string, string>> = {
  FIXED_LINE: 'landline',
  TOLL_FREE: 'toll-free',
  PREMIUM_RATE: 'premium-rate',
  SHARED_COST: 'shared-cost',
  VOIP: 'VoIP',
  PERSONAL_NUMBER: 'personal number',
  PAGER: 'pager',
  UAN: 'UAN',
  VOICEMAIL: 'voicemail',
};

/**
 * Parses what a person typed as a phone number, reading it as a number of `country` (Tanzanian
 * unless told) unless it says otherwise. Returns `undefined` when the text isn't a number at all.
 *
 * @internal shared with the `phone` and `mask_phone` template filters and `toE164`.
 */
export const parsePhone = (raw: string, country: CountryCode = 'TZ'): PhoneNumber | undefined => {
  const trimmed = raw.trim();
  if (!ALLOWED_CHARACTERS.test(trimmed)) return undefined;
  let compact = trimmed.replace(SEPARATORS, '');
  if (compact.lastIndexOf('+') > 0) return undefined;
  // `00` is the usual international prefix; Tanzania's metadata only knows `000`/`005`/`006`,
  // and no Tanzanian national number starts with `00`, so reading it as `+` is safe.
  if (compact.startsWith('00')) compact = `+${compact.slice(2)}`;
  return parsePhoneNumberFromString(compact, country);
};

const lengthReason = (raw: string): string => {
  switch (validatePhoneNumberLength(raw.replace(SEPARATORS, ''), 'TZ')) {
    case 'TOO_SHORT':
      return MSISDN_REJECTIONS.tooShort;
    case 'TOO_LONG':
      return MSISDN_REJECTIONS.tooLong;
    case 'INVALID_COUNTRY':
      return MSISDN_REJECTIONS.unknownCountry;
    default:
      return MSISDN_REJECTIONS.notANumber;
  }
};

/**
 * How many distinct input texts `normalizeMsisdn` remembers, least recently used evicted first.
 * Bounded, so that a stream of distinct numbers (one customer per order) costs a few KiB, not a leak.
 */
const MEMO_CAPACITY = 256;
/** Longer texts aren't numbers anyone types: parsed every time rather than kept. */
const MEMO_MAX_LENGTH = 40;
const memo = new Map<string, MsisdnResult>();

/**
 * Normalises a phone number to the form the SMS service accepts: `255` followed by nine digits.
 *
 * Accepts the ways Tanzanian numbers are written (`+255 712 345 678`, `0712345678`,
 * `255712345678`, `712345678`, `00255712345678`, `(0712) 345-678`, `+255 0712…`). Only numbers that
 * libphonenumber knows as Tanzanian **mobile** numbers pass: landlines (`022…`), toll-free and
 * other service numbers can't receive SMS, so they'd only waste credit. Rejection reasons never
 * contain the number, because they end up in logs.
 *
 * @example
 * ```ts
 * normalizeMsisdn('+255 712 345 678'); // { ok: true, number: '255712345678' }
 * normalizeMsisdn('0222123456');       // { ok: false, reason: 'not a mobile number (landline)' }
 * normalizeMsisdn('+254712345678');    // { ok: false, reason: 'not a Tanzanian number (+254…)' }
 * ```
 *
 * Results are frozen and memoised per input text (a small LRU, `MEMO_CAPACITY` entries): the
 * function is pure, libphonenumber-js takes ~15 µs a number, and a route's templated recipient
 * (the on-call number) is usually the same text webhook after webhook.
 */
export const normalizeMsisdn = (raw: string): MsisdnResult => {
  // YAML reads an unquoted 255712345678 as a number; accept it rather than crash on `.trim`.
  if (typeof raw !== 'string') raw = raw === null || raw === undefined ? '' : String(raw);
  if (raw.length > MEMO_MAX_LENGTH) return Object.freeze(parseMsisdn(raw));
  const known = memo.get(raw);
  if (known !== undefined) {
    // Most recently used last, so that eviction takes the first key.
    memo.delete(raw);
    memo.set(raw, known);
    return known;
  }
  const result = Object.freeze(parseMsisdn(raw));
  if (memo.size >= MEMO_CAPACITY) memo.delete(memo.keys().next().value as string);
  memo.set(raw, result);
  return result;
};

/** `normalizeMsisdn` without the memo: libphonenumber-js every time. */
const parseMsisdn = (raw: string): MsisdnResult => {
  if (raw.trim() === '') return { ok: false, reason: MSISDN_REJECTIONS.empty };
  const phone = parsePhone(raw);
  if (!phone) {
    return {
      ok: false,
      reason: ALLOWED_CHARACTERS.test(raw.trim()) ? lengthReason(raw) : MSISDN_REJECTIONS.notANumber,
    };
  }
  if (phone.countryCallingCode !== '255') {
    return { ok: false, reason: `${NOT_TANZANIAN} (+${phone.countryCallingCode}…)` };
  }
  if (!phone.isValid()) {
    // Every Tanzanian number has nine national digits, whatever its type. libphonenumber keeps
    // the trunk `0` of a number too short to be national (`071234567`), so it isn't counted.
    const length = phone.nationalNumber.replace(/^0/, '').length;
    if (length < TANZANIAN_NATIONAL_LENGTH) return { ok: false, reason: MSISDN_REJECTIONS.tooShort };
    if (length > TANZANIAN_NATIONAL_LENGTH) return { ok: false, reason: MSISDN_REJECTIONS.tooLong };
    return { ok: false, reason: MSISDN_REJECTIONS.invalid };
  }
  const type = phone.getType();
  if (type !== 'MOBILE' && type !== 'FIXED_LINE_OR_MOBILE') {
    const name = type === undefined ? 'unknown type' : (TYPE_NAMES[type] ?? type.toLowerCase());
    return { ok: false, reason: `not a mobile number (${name})` };
  }
  const number = phone.number.slice(1);
  return PHONE_NUMBER_PATTERN.test(number) ? { ok: true, number } : { ok: false, reason: MSISDN_REJECTIONS.invalid };
};

// Lives in `mask.ts`, which does not load libphonenumber: the handlers that only log numbers use it.
export { maskMsisdn } from './mask';
