import { randomBytes } from 'node:crypto';

/** Crockford's base32: no I, L, O or U, so an id read aloud or retyped survives. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
/** 10 base32 characters hold 50 bits; ms timestamps stay below 2^48 until the year 10889. */
const MAX_TIME = 2 ** 48 - 1;

/**
 * A new message id: 10 characters of millisecond time then 16 random characters (80 bits), all
 * Crockford base32: the ULID layout. Ids sort by creation time to the millisecond, so a listing
 * by id is a listing by age; two ids from the same millisecond are ordered at random.
 *
 * @example
 * ```typescript
 * import { newId } from './ids';
 *
 * newId(new Date('2025-01-01T00:00:00.000Z')); // '01JGFJJZ00' followed by 16 random characters
 * ```
 */
export const newId = (at: Date = new Date()): string => {
  let time = at.getTime();
  if (!Number.isInteger(time) || time < 0 || time > MAX_TIME) throw new RangeError(`time out of range: ${time}`);
  let head = '';
  for (let i = 0; i < TIME_CHARS; i += 1) {
    head = ALPHABET.charAt(time % 32) + head;
    time = Math.floor(time / 32);
  }
  // 256 is a multiple of 32, so masking a byte gives every character with equal probability.
  const bytes = randomBytes(RANDOM_CHARS);
  let tail = '';
  for (const byte of bytes) tail += ALPHABET.charAt(byte & 31);
  return head + tail;
};

/**
 * The time an id was made at (its first ten characters).
 *
 * @example
 * ```typescript
 * idTime(newId(new Date('2025-01-01T00:00:00.000Z'))).toISOString(); // '2025-01-01T00:00:00.000Z'
 * ```
 */
export const idTime = (id: string): Date => {
  let time = 0;
  for (const char of id.slice(0, TIME_CHARS)) time = time * 32 + ALPHABET.indexOf(char);
  return new Date(time);
};

export { ID_PATTERN } from './id-pattern';
