import type { OnCallDirectory } from '../oncall/schedule';
import { getCountryCallingCode, validatePhoneNumberLength } from 'libphonenumber-js/max';
import { isKnownCountry } from './e164';
import { maskMsisdn } from './msisdn';
import { type Numbering, noProviderReason, normalizeWith } from './numbering';
import { parseRecipientReference, RecipientReferenceKind } from './reference';

/**
 * The numbers a route may send to when they come from the request (its templated recipients:
 * `{{ query.to }}`, `{{ event.user.phone }}`), compiled from `allowRecipients`.
 */
export interface AllowList {
  /** Every number of `people` (`person:*`), named people and the literal numbers listed. */
  readonly numbers: ReadonlySet<string>;
  /** Normalised prefixes (`2557`), from entries written `2557*`, `+2557*` or `07*`. */
  readonly prefixes: readonly string[];
}

/** Why a number from the request is not sent to (masked: safe in records and logs). */
export const notAllowedReason = (number: string): string => `${maskMsisdn(number)}${NOT_ALLOWED_SUFFIX}`;

/** How every {@link notAllowedReason} ends. */
export const NOT_ALLOWED_SUFFIX = ' is not in allowRecipients';

const PREFIX = /^\+?\d+\*$/;

/** `07*` → `2557`, `+2557*` → `2557`; `undefined` unless it starts with `0` or `255`. */
function normalisePrefix(entry: string): string | undefined {
  const digits = entry.replace(/[+*]/g, '');
  const prefix = digits.startsWith('0') ? `255${digits.slice(1)}` : digits;
  return /^255\d{0,9}$/.test(prefix) ? prefix : undefined;
}

/**
 * With `numbering`: `07*` → `defaultCountry`'s code and `7`, `+2547*`, `002547*` or `2547*` →
 * `2547`. Throws the reason a prefix can match no number a provider texts.
 */
function normaliseE164Prefix(entry: string, numbering: Numbering): string {
  let digits = entry.replace(/[+*]/g, '');
  if (digits.startsWith('00')) digits = digits.slice(2);
  else if (digits.startsWith('0') && isKnownCountry(numbering.defaultCountry))
    digits = `${getCountryCallingCode(numbering.defaultCountry)}${digits.slice(1)}`;
  const length = /^[1-9]\d*$/.test(digits) ? validatePhoneNumberLength(`+${digits}`) : 'NOT_A_NUMBER';
  if (length === 'TOO_LONG') throw new Error('a prefix longer than a whole number');
  if (length === 'INVALID_COUNTRY' || length === 'NOT_A_NUMBER')
    throw new Error('a prefix is a country code and digits or a national 0, like +2557*, 2547* or 07*');
  // A prefix is shown whole unless it is most of a number.
  const noProvider = noProviderReason(numbering, digits);
  if (noProvider !== undefined) throw new Error(digits.length >= 8 ? noProvider : `no provider for +${digits}…`);
  return digits;
}

/**
 * Compiles `allowRecipients`: `person:*` (everyone in `people`), `person:<name>`, a number, or a
 * prefix ending in `*` (`2557*`, `+25571*`, `07*`: with `numbering`, any country code, and `0` is
 * `defaultCountry`'s). Throws an `Error` whose message is
 * `[index] reason` for an entry that can't work, like `compileRecipients`.
 *
 * @example
 * ```ts
 * const allow = compileAllowList(['person:*', '25568*'], directory);
 * isAllowed(allow, '255687000111'); // true
 * ```
 */
export function compileAllowList(
  entries: readonly string[],
  directory: OnCallDirectory,
  numbering?: Numbering,
): AllowList {
  const numbers = new Set<string>();
  const prefixes: string[] = [];
  entries.forEach((entry, index) => {
    const text = entry.replace(/\s+/g, '');
    if (text === 'person:*') {
      for (const person of directory.people.values()) numbers.add(person.number);
      return;
    }
    const reference = parseRecipientReference(entry);
    if (reference !== undefined) {
      if (reference.kind === RecipientReferenceKind.OnCall)
        throw new Error(
          `[${index}] oncall: is not taken here; name people (person:<name> or person:*), numbers or a prefix like 2557*`,
        );
      const person = directory.people.get(reference.name);
      if (person === undefined) throw new Error(`[${index}] unknown person "${reference.name}"`);
      numbers.add(person.number);
      return;
    }
    if (PREFIX.test(text)) {
      if (numbering !== undefined) {
        try {
          prefixes.push(normaliseE164Prefix(text, numbering));
        } catch (error) {
          throw new Error(`[${index}] ${(error as Error).message}`);
        }
        return;
      }
      const prefix = normalisePrefix(text);
      if (prefix === undefined) throw new Error(`[${index}] a prefix starts with 255 or 0, like 2557* or 07*`);
      prefixes.push(prefix);
      return;
    }
    const normalised = normalizeWith(numbering, entry);
    if (!normalised.ok) throw new Error(`[${index}] ${normalised.reason}`);
    const noProvider = numbering === undefined ? undefined : noProviderReason(numbering, normalised.number);
    if (noProvider !== undefined) throw new Error(`[${index}] ${noProvider}`);
    numbers.add(normalised.number);
  });
  return Object.freeze({ numbers, prefixes: Object.freeze(prefixes) });
}

/** Whether a normalised number (E.164 digits without `+`) is on the list. */
export function isAllowed(allow: AllowList, number: string): boolean {
  return allow.numbers.has(number) || allow.prefixes.some((prefix) => number.startsWith(prefix));
}
