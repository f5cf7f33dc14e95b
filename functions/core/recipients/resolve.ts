import { onCallAt, type OnCallOverride } from '../oncall/resolve';
import { TemplateError } from '../templates/errors';
import type { TemplateScope } from '../templates/types';
import { isAllowed, notAllowedReason } from './allow';
import { maskNumbersInText } from './mask-text';
import { noProviderReason, normalizeWith } from './numbering';
import { splitNumbers } from './split';
import { RecipientEntryKind } from './types';
import type { CompiledRecipients, DroppedRecipient, ResolvedRecipients } from './types';

/** Reasons `resolveRecipients` adds to those of `normalizeMsisdn`. */
export const RECIPIENT_DROP_REASONS = {
  renderedEmpty: 'rendered empty',
} as const;

/** When the message is rendered and the overrides in force then: what `oncall:` entries resolve with. */
export interface OnCallMoment {
  /** @default new Date() */
  readonly at?: Date;
  /** The overrides of the schedules the recipients name (the store's `activeOverrides`). @default [] */
  readonly overrides?: readonly OnCallOverride[];
}

/**
 * The numbers one webhook goes to.
 *
 * Templated entries are rendered against `scope`; a rendering may hold several numbers separated
 * by commas, semicolons or line breaks (`{{ on_call | join: ',' }}`). Each is normalised; invalid
 * ones, and entries rendering empty, are listed in `dropped` with the template source as `entry`
 * (never the rendered number). Duplicates are removed, keeping the first occurrence's position.
 * With `compiled.numbering`, a number no provider texts is dropped `no provider for +2438****678`.
 * An empty `numbers` is for the caller to record ("no recipients"). An `oncall:<schedule>` entry is
 * the number of whoever is on call at `onCall.at` (an override in force, else the rotation). With
 * `allowRecipients` (`compiled.allow`), a rendered number off the list is dropped, masked, with
 * {@link notAllowedReason}.
 *
 * @example
 * ```ts
 * const recipients = compileRecipients(['0712345678', '{{ customer.phone }}'], engine);
 * resolveRecipients(recipients, buildScope({ body: { customer: { phone: '0754 321 000' } } }));
 * // { numbers: ['255712345678', '255754321000'], dropped: [] }
 * ```
 */
export const resolveRecipients = (
  compiled: CompiledRecipients,
  scope: TemplateScope,
  { at = new Date(), overrides = [] }: OnCallMoment = {},
): ResolvedRecipients => {
  const numbers = new Set<string>();
  const dropped: DroppedRecipient[] = [];

  for (const entry of compiled.entries) {
    if (entry.kind === RecipientEntryKind.Literal) {
      for (const number of entry.numbers) numbers.add(number);
      continue;
    }
    if (entry.kind === RecipientEntryKind.OnCall) {
      const schedule = compiled.directory.schedules.get(entry.schedule);
      // Compiled against the same directory: a schedule it names is there.
      if (schedule !== undefined)
        numbers.add(onCallAt(schedule, overrides, compiled.directory.people, at).person.number);
      continue;
    }
    let text: string;
    try {
      text = compiled.engine.render(entry.template, scope, { trackMissing: false }).text;
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      // Render messages can quote data: mask before it reaches a log line.
      dropped.push({ entry: entry.display, reason: `render failed: ${maskNumbersInText(error.message)}` });
      continue;
    }
    const pieces = splitNumbers(text);
    if (pieces.length === 0) {
      dropped.push({ entry: entry.display, reason: RECIPIENT_DROP_REASONS.renderedEmpty });
      continue;
    }
    for (const piece of pieces) {
      const result = normalizeWith(compiled.numbering, piece);
      const uncovered =
        result.ok && compiled.numbering !== undefined ? noProviderReason(compiled.numbering, result.number) : undefined;
      if (!result.ok) dropped.push({ entry: entry.display, reason: result.reason });
      else if (uncovered !== undefined) dropped.push({ entry: entry.display, reason: uncovered });
      else if (compiled.allow !== undefined && !isAllowed(compiled.allow, result.number))
        dropped.push({ entry: entry.display, reason: notAllowedReason(result.number) });
      else numbers.add(result.number);
    }
  }

  return { numbers: [...numbers], dropped };
};
