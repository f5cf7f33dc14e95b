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
