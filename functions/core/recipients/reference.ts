/** A recipient written by name rather than number: `person:<name>` or `oncall:<schedule>`. */
export const RecipientReferenceKind = {
  /** `person:asha`: the number of `people.asha`. */
  Person: 'person',
  /** `oncall:ops`: whoever schedule `ops` puts on call when the message is rendered. */
  OnCall: 'oncall',
} as const;
export type RecipientReferenceKind = (typeof RecipientReferenceKind)[keyof typeof RecipientReferenceKind];

export interface RecipientReference {
  readonly kind: RecipientReferenceKind;
  readonly name: string;
}

const REFERENCE = /^\s*(person|oncall):\s*(\S.*?)\s*$/;

/**
 * The reference an entry is, or `undefined` for a number or a template.
 *
 * @example
 * ```ts
 * parseRecipientReference('oncall:ops'); // { kind: 'oncall', name: 'ops' }
 * parseRecipientReference('0712345678'); // undefined
 * ```
 */
export function parseRecipientReference(entry: string): RecipientReference | undefined {
  if (typeof entry !== 'string') return undefined;
  const match = REFERENCE.exec(entry);
  return match === null ? undefined : { kind: match[1] as RecipientReferenceKind, name: match[2]! };
}
