import { NO_ONE, type OnCallDirectory } from '../oncall/schedule';
import type { AllowList } from './allow';
import { TemplateError } from '../templates/errors';
import type { TemplateEngine } from '../templates/types';
import { maskNumbersInText } from './mask-text';
import { maskMsisdn } from './msisdn';
import { type Numbering, normalizeWith } from './numbering';
import { parseRecipientReference, RecipientReferenceKind } from './reference';
import { splitNumbers } from './split';
import { RecipientEntryKind } from './types';
import type { CompiledRecipientEntry, CompiledRecipients } from './types';

const LIQUID_MARKUP = /\{\{|\{%/;

/**
 * A recipients entry that can't work for any webhook. The message is `[index] reason` so that the
 * config loader can prefix the path (`routes.orders.recipients: [2] not a Tanzanian number (+254…)`);
 * the reason never contains the number. A plain `Error`: the loader reads every compile failure alike.
 */
const entryError = (index: number, reason: string, options?: ErrorOptions): Error =>
  new Error(`[${index}] ${reason}`, options);

const compileLiteral = (
  entry: string,
  index: number,
  known: readonly string[] | null | undefined,
  numbering: Numbering | undefined,
): CompiledRecipientEntry => {
  const pieces = splitNumbers(entry);
  if (pieces.length === 0) throw entryError(index, 'empty');
  // Normalised before (at synth, into the staged config): one number per piece, as below.
  const numbers =
    known != null && known.length === pieces.length
      ? [...known]
      : pieces.map((piece) => {
          const result = normalizeWith(numbering, piece);
          if (!result.ok) throw entryError(index, result.reason);
          return result.number;
        });
  return Object.freeze({
    kind: RecipientEntryKind.Literal,
    display: numbers.map(maskMsisdn).join(', '),
    numbers: Object.freeze(numbers),
  });
};

const compileTemplated = (entry: string, index: number, engine: TemplateEngine): CompiledRecipientEntry => {
  try {
    return Object.freeze({
      kind: RecipientEntryKind.Template,
      display: maskNumbersInText(entry),
      template: engine.compileTemplate(entry),
    });
  } catch (error) {
    if (error instanceof TemplateError) {
      throw entryError(index, maskNumbersInText(error.message), { cause: error });
    }
    throw error;
  }
};

/** `person:<name>` is the person's number, a literal; `oncall:<schedule>` is resolved per message. */
const compileReference = (
  entry: string,
  index: number,
  directory: OnCallDirectory,
): CompiledRecipientEntry | undefined => {
  const reference = parseRecipientReference(entry);
  if (reference === undefined) return undefined;
  if (reference.kind === RecipientReferenceKind.Person) {
    const person = directory.people.get(reference.name);
    if (person === undefined) throw entryError(index, `unknown person "${reference.name}"`);
    return Object.freeze({
      kind: RecipientEntryKind.Literal,
      display: `person:${person.name}`,
      numbers: Object.freeze([person.number]),
    });
  }
  if (!directory.schedules.has(reference.name)) throw entryError(index, `unknown schedule "${reference.name}"`);
  return Object.freeze({
    kind: RecipientEntryKind.OnCall,
    display: `oncall:${reference.name}`,
    schedule: reference.name,
  });
};

/**
 * Compiles a route's recipients once, at config load.
 *
 * - An entry containing `{{` or `{%` is a Liquid template, rendered per webhook.
 * - `person:<name>` is that person's number (`people`), a literal; `oncall:<schedule>` is whoever
 *   the schedule puts on call when a message is rendered (see `resolveRecipients`).
 * - Any other entry is a literal: one number, or several separated by commas, semicolons or
 *   line breaks, each normalised now to `255` + nine digits.
 *
 * Throws an `Error` whose message is `[index] reason` for an invalid literal or a template that
 * doesn't compile: config problems surface at load, not when a webhook arrives.
 *
 * `allow` (`allowRecipients`, see `compileAllowList`) limits the numbers templated entries render.
 *
 * `numbering` (the config's `defaultCountry` and providers) makes every number E.164 digits
 * (`254712345678`) and drops a rendered number no provider texts; absent, numbers are Tanzanian
 * only (`normalizeMsisdn`).
 *
 * `known` gives, per entry, the numbers of a literal entry normalised already (the staged config
 * carries them from synth); such an entry is taken as it is, without libphonenumber.
 *
 * @example
 * ```ts
 * const recipients = compileRecipients(['0712 345 678', '{{ billing_address.phone }}'], engine);
 * const { numbers, dropped } = resolveRecipients(recipients, scope);
 * ```
 */
export const compileRecipients = (
  entries: readonly string[],
  engine: TemplateEngine,
  known?: ReadonlyArray<readonly string[] | null>,
  directory: OnCallDirectory = NO_ONE,
  allow?: AllowList,
  numbering?: Numbering,
): CompiledRecipients =>
  Object.freeze({
    entries: Object.freeze(
      entries.map((entry, index) =>
        LIQUID_MARKUP.test(entry)
          ? compileTemplated(entry, index, engine)
          : (compileReference(entry, index, directory) ?? compileLiteral(entry, index, known?.[index], numbering)),
      ),
    ),
    engine,
    directory,
    ...(allow === undefined ? {} : { allow }),
    ...(numbering === undefined ? {} : { numbering }),
  });
