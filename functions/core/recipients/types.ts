import type { OnCallDirectory } from '../oncall/schedule';
import type { AllowList } from './allow';
import type { Numbering } from './numbering';
import type { CompiledTemplate, TemplateEngine } from '../templates/types';

export const RecipientEntryKind = {
  /** A number (or several) written in the config, normalised at load. */
  Literal: 'literal',
  /** A Liquid template rendered per webhook, e.g. `{{ customer.phone }}`. */
  Template: 'template',
  /** `oncall:<schedule>`: whoever the schedule puts on call when the message is rendered. (`person:<name>` compiles to a literal.) */
  OnCall: 'oncall',
} as const;

export type RecipientEntryKind = (typeof RecipientEntryKind)[keyof typeof RecipientEntryKind];

export type CompiledRecipientEntry =
  | {
      readonly kind: typeof RecipientEntryKind.Literal;
      /** The numbers masked (`2557****678`): what logs and reports show for this entry. */
      readonly display: string;
      /** Normalised: E.164 digits without `+` (`255712345678`). */
      readonly numbers: readonly string[];
    }
  | {
      readonly kind: typeof RecipientEntryKind.Template;
      /** The template source, any phone number in it masked. */
      readonly display: string;
      readonly template: CompiledTemplate;
    }
  | {
      readonly kind: typeof RecipientEntryKind.OnCall;
      /** `oncall:<schedule>`. */
      readonly display: string;
      readonly schedule: string;
    };

/** A route's recipients, compiled once at config load by `compileRecipients`. */
export interface CompiledRecipients {
  readonly entries: readonly CompiledRecipientEntry[];
  /** Renders the templated entries: the engine that compiled them. */
  readonly engine: TemplateEngine;
  /** The people and schedules `person:` and `oncall:` entries name. */
  readonly directory: OnCallDirectory;
  /**
   * `allowRecipients`, compiled: when set, a number a templated entry renders (it came from the
   * request) is sent to only if it is on the list. Literal and `oncall:` entries are the config's own.
   */
  readonly allow?: AllowList;
  /** `defaultCountry` and the providers: numbers as E.164 digits, a rendered one no provider texts dropped. Absent: Tanzanian only. */
  readonly numbering?: Numbering;
}

/** A recipient that was left out, and why. Neither field contains a full phone number. */
export interface DroppedRecipient {
  /** The entry it came from: a template's source, or a masked number. */
  readonly entry: string;
  readonly reason: string;
}

export interface ResolvedRecipients {
  /** Normalised (E.164 digits without `+`), duplicates removed, in first-seen order. May be empty. */
  readonly numbers: readonly string[];
  readonly dropped: readonly DroppedRecipient[];
}
