import type { OnCallDirectory } from '../oncall/schedule';

/**
 * How much of a create's `responders` is read. The list is the sender's (untrusted): Opsgenie
 * itself takes at most 50 responders on an alert, and a name longer than an e-mail address can be
 * names nobody in a config.
 */
export const RESPONDERS = {
  /** The first this many entries are read; the rest are ignored. */
  maxRead: 50,
  /** A longer `name` or `username` is ignored (an e-mail address is at most 254 characters). */
  maxNameChars: 254,
} as const;

/** Opsgenie's responder types the relay pages; `escalation` (and anything else) it does not know. */
const ResponderType = { User: 'user', Schedule: 'schedule', Team: 'team' } as const;

/**
 * The recipients an Opsgenie create's `responders` name in the config, as `person:<name>` and
 * `oncall:<schedule>` entries, in the order given, each once:
 * - `{"type":"user","username"|"name":…}` is `person:<name>` for the person of that name, or
 *   whose `email:` it is (without regard to case: Opsgenie's usernames are e-mail addresses);
 * - `{"type":"schedule"|"team","name":…}` is `oncall:<name>` when a schedule of that name exists
 *   (Opsgenie pages a team through its on-call schedule; the relay's schedules stand for both).
 *
 * Anything else (an `id` alone, an `escalation`, a name the config does not know, a value that is
 * not a string, entries past {@link RESPONDERS}`.maxRead`) is ignored. An empty answer means the
 * alert named nobody the config knows: its SMS goes to the route's `recipients`.
 *
 * @example
 * ```ts
 * opsgenieResponderRecipients([{ type: 'user', username: 'Baraka@example.com' }, { type: 'schedule', name: 'ops' }], directory);
 * // ['person:baraka', 'oncall:ops']
 * ```
 */
export function opsgenieResponderRecipients(responders: unknown, directory: OnCallDirectory): string[] {
  if (!Array.isArray(responders) || directory.people.size + directory.schedules.size === 0) return [];
  const found = new Set<string>();
  for (const responder of responders.slice(0, RESPONDERS.maxRead)) {
    if (typeof responder !== 'object' || responder === null) continue;
    const { type, name, username } = responder as Record<string, unknown>;
    if (type === ResponderType.User) {
      const person = [username, name]
        .map((value) => nameOf(value))
        .map((value) => (value === undefined ? undefined : personOf(value, directory)))
        .find((match) => match !== undefined);
      if (person !== undefined) found.add(`person:${person}`);
    } else if (type === ResponderType.Schedule || type === ResponderType.Team) {
      const schedule = nameOf(name);
      if (schedule !== undefined && directory.schedules.has(schedule)) found.add(`oncall:${schedule}`);
    }
  }
  return [...found];
}

/** A responder's name as the sender wrote it, trimmed; `undefined` for what cannot name anyone. */
function nameOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > RESPONDERS.maxNameChars) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** The person a user responder names: by the person's key, else by their `email:`. */
function personOf(value: string, { people, byEmail }: OnCallDirectory): string | undefined {
  // `has` on the map's own keys only: a name like `__proto__` or `constructor` finds no one.
  if (people.has(value)) return value;
  return byEmail.get(value.toLowerCase());
}
