import { maskMsisdn, normalizeMsisdn, parsePhone } from '../../recipients/msisdn';

const isNil = (value: unknown): value is null | undefined => value === null || value === undefined;

/**
 * `phone`: a number in international display form; anything unparsable comes back unchanged.
 *
 * @example
 * ```liquid
 * {{ '255712345678' | phone }}  → +255 712 345 678
 * {{ '0712345678' | phone }}    → +255 712 345 678
 * {{ 'n/a' | phone }}           → n/a
 * ```
 */
export const phone = (value: unknown): unknown => {
  if (typeof value !== 'string' && typeof value !== 'number') return value;
  const parsed = parsePhone(String(value));
  return parsed?.isValid() ? parsed.formatInternational() : value;
};

/**
 * `mask_phone`: the first four digits, four stars, the last three (`2557****678`). National forms
 * are masked as their `255` form. Text without digits comes back unchanged; fewer than eight
 * digits become `****`, because showing seven of them would show them all.
 *
 * @example
 * ```liquid
 * {{ '+255 712 345 678' | mask_phone }}  → 2557****678
 * ```
 */
export const mask_phone = (value: unknown): unknown => {
  if (isNil(value)) return value;
  const text = String(value);
  const normalized = normalizeMsisdn(text);
  if (normalized.ok) return maskMsisdn(normalized.number);
  return /\d/.test(text) ? maskMsisdn(text) : value;
};
