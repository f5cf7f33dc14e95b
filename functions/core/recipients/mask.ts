/**
 * Masks a phone number for logs: the first four digits, four stars, the last three.
 * Fewer than eight digits would reveal everything, so they become `****`.
 *
 * @example
 * ```ts
 * maskMsisdn('255712345678'); // '2557****678'
 * maskMsisdn('12345');        // '****'
 * ```
 */
export const maskMsisdn = (number: string): string => {
  const digits = number.replace(/\D/g, '');
  if (digits.length < 8) return '****';
  return `${digits.slice(0, 4)}****${digits.slice(-3)}`;
};

// `255` + nine digits (optionally `+`, optionally grouped 3-3-3 as the `phone` filter prints it)
// and national `06…`/`07…` mobiles. The digit look-arounds keep long ids (Shopify's 18-digit
// order ids) from being half-masked.
const PHONE_NUMBER_IN_TEXT =
  /(?<!\d)(?:\+?255[ -]?\d{3}[ -]?\d{3}[ -]?\d{3}|0[67]\d{2}[ -]?\d{3}[ -]?\d{3})(?!\d)/g;

const maskMatch = (match: string): string => {
  const digits = match.replace(/\D/g, '');
  // Mask the national form as its `255` form, so one person looks the same in every log line.
  return maskMsisdn(digits.startsWith('0') ? `255${digits.slice(1)}` : digits);
};

/**
 * Masks Tanzanian mobile numbers in free text (log lines, rendered SMS, error messages):
 * `255712345678`, `+255712345678`, `+255 712 345 678` and `0712345678` all become `2557****678`.
 *
 * @example
 * ```ts
 * maskPhoneNumbersIn('sent to 0712345678 and +255 754 321 000');
 * // 'sent to 2557****678 and 2557****000'
 * ```
 */
export const maskPhoneNumbersIn = (text: string): string => text.replace(PHONE_NUMBER_IN_TEXT, maskMatch);
