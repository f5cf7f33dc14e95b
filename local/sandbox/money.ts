/**
 * Amounts are kept as integer counts of 1/10 000 of the currency unit, so repeated deductions
 * never drift (0.1 × 3 is 0.3, not 0.30000000000000004) and every amount the API shows has at
 * most four decimals.
 */
export const MONEY_DECIMALS = 4;

const UNITS_PER_WHOLE = 10 ** MONEY_DECIMALS;

/** Integer count of 1/10 000 currency units. */
export type MoneyUnits = number;

/**
 * Converts an amount to units, or `undefined` when it is not finite, negative, has more than four
 * decimals or is too large to count exactly.
 *
 * @example
 * toMoneyUnits(0.35); // 3500
 * toMoneyUnits(0.00001); // undefined
 */
export function toMoneyUnits(amount: number): MoneyUnits | undefined {
  if (!Number.isFinite(amount) || amount < 0) return undefined;
  const scaled = amount * UNITS_PER_WHOLE;
  const units = Math.round(scaled);
  // Binary floating point makes 1000.1234 × 10 000 come out a hair off an integer: allow rounding noise, not a fifth decimal.
  const roundingNoise = Math.max(1e-9, scaled * 8 * Number.EPSILON);
  if (Math.abs(scaled - units) > roundingNoise || !Number.isSafeInteger(units)) return undefined;
  return units;
}

/**
 * Converts units back to the number the API shows.
 *
 * @example
 * fromMoneyUnits(3500); // 0.35
 */
export function fromMoneyUnits(units: MoneyUnits): number {
  // One correctly rounded division gives the double nearest the decimal, which prints as that decimal.
  return units / UNITS_PER_WHOLE;
}
