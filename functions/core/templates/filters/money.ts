import type { SmsFilter } from './types';

// GSM-7 has no non-breaking spaces; one of them would switch the whole SMS to UCS-2 (70
// characters a part instead of 160). Intl puts U+00A0 between the code and the amount.
const NON_GSM_SPACES = /[\u00A0\u2007\u2009\u202F]/g;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const INTEGER = /^[+-]?\d+$/;

interface CurrencyFormatter {
  readonly intl: Intl.NumberFormat;
  /** ISO 4217 minor-unit digits, as Intl knows them. */
  readonly digits: number;
}

const formatters = new Map<string, CurrencyFormatter | undefined>();

/** One formatter per locale and currency, built on first use; `undefined` for unknown codes. */
const currencyFormatter = (locale: string, currency: string): CurrencyFormatter | undefined => {
  const key = `${locale}|${currency}`;
  if (formatters.has(key)) return formatters.get(key);
  let formatter: CurrencyFormatter | undefined;
  try {
    // `code` so that USD reads `USD 29.99`, not `$29.99`, next to TZS amounts.
    const format = new Intl.NumberFormat(locale, { style: 'currency', currency, currencyDisplay: 'code' });
    formatter = { intl: format, digits: format.resolvedOptions().maximumFractionDigits ?? 2 };
  } catch {
    formatter = undefined;
  }
  formatters.set(key, formatter);
  return formatter;
};

/**
 * Strings are handed to Intl as strings: Intl formats decimal strings exactly, so amounts that
 * arrived as big-integer strings (or `"0.1"`) never pass through a lossy double.
 */
type Amount = number | bigint | Intl.StringNumericLiteral;

const toAmount = (value: unknown): Amount | undefined => {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'bigint') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return DECIMAL.test(text) ? (text as Intl.StringNumericLiteral) : undefined;
};

/** Moves the decimal point `digits` places left, on the digits themselves: exact at any size. */
const shiftDecimal = (integer: string, digits: number): Intl.StringNumericLiteral => {
  const negative = integer.startsWith('-');
  const unsigned = integer.replace(/^[+-]/, '');
  if (digits === 0) return integer as Intl.StringNumericLiteral;
  const padded = unsigned.padStart(digits + 1, '0');
  const shifted = `${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
  return `${negative ? '-' : ''}${shifted}` as Intl.StringNumericLiteral;
};

const toMinorAmount = (value: unknown, digits: number): Amount | undefined => {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? shiftDecimal(String(value), digits) : undefined;
  if (typeof value === 'bigint') return shiftDecimal(String(value), digits);
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return INTEGER.test(text) ? shiftDecimal(text, digits) : undefined;
};

const currencyOf = (argument: unknown, fallback: string): string =>
  typeof argument === 'string' && argument.trim() !== '' ? argument.trim().toUpperCase() : fallback;

/**
 * `money` and `money_minor`, bound to the engine's locale and default currency.
 *
 * - `money` formats an amount in major units: `1234567.5` or `"1500.00"` (Shopify, WooCommerce).
 * - `money_minor` formats integer minor units (Stripe): it divides by 10^d where d is the
 *   currency's ISO 4217 fraction digits as Intl knows them (USD 2, TZS 2, JPY 0, KWD 3).
 *
 * Input that isn't a number or a number-like string, and unknown currency codes, come back
 * unchanged rather than failing the message.
 */
export const createMoneyFilters = ({
  locale,
  currency: defaultCurrency,
}: {
  readonly locale: string;
  readonly currency: string;
}): { readonly money: SmsFilter; readonly money_minor: SmsFilter } => ({
  money: (value, currency) => {
    const formatter = currencyFormatter(locale, currencyOf(currency, defaultCurrency));
    const amount = toAmount(value);
    if (!formatter || amount === undefined) return value;
    return formatter.intl.format(amount).replace(NON_GSM_SPACES, ' ');
  },
  money_minor: (value, currency) => {
    const formatter = currencyFormatter(locale, currencyOf(currency, defaultCurrency));
    if (!formatter) return value;
    const amount = toMinorAmount(value, formatter.digits);
    if (amount === undefined) return value;
    return formatter.intl.format(amount).replace(NON_GSM_SPACES, ' ');
  },
});
