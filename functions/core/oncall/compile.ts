import type { PeopleConfig, SchedulesConfig } from '../config/oncall-schema';
import { type Numbering, normalizeWith } from '../recipients/numbering';
import { NO_ONE, parseLocalDateTime, type CompiledSchedule, type OnCallDirectory, type Person } from './schedule';

/**
 * Compiles the config's `people` (numbers normalised) and `schedules` (start read, every name of a
 * rotation found in `people`), adding a problem per fault, each naming its key
 * (`schedules.ops.rotation.people[1]: unknown person "carol"`). A directory compiled with problems
 * names every person and schedule but is not for use: the config is refused.
 *
 * @example
 * ```ts
 * const problems: string[] = [];
 * const directory = compileOnCall(config.people, config.schedules, problems);
 * directory.schedules.get('ops')?.rotation.people[0]?.number; // '255712345678'
 * ```
 */
export function compileOnCall(
  people: PeopleConfig | undefined,
  schedules: SchedulesConfig | undefined,
  problems: string[],
  numbering?: Numbering,
): OnCallDirectory {
  if (people === undefined && schedules === undefined) return NO_ONE;
  const persons = new Map<string, Person>();
  const emails = new Map<string, string>();
  for (const [name, { phone, email }] of Object.entries(people ?? {})) {
    const normalised = normalizeWith(numbering, phone);
    const address = email?.toLowerCase();
    // Kept with no number when it has none: the config is refused for it, and `person:` entries
    // naming it need no second problem.
    persons.set(
      name,
      Object.freeze({
        name,
        number: normalised.ok ? normalised.number : '',
        ...(address === undefined ? {} : { email: address }),
      }),
    );
    if (!normalised.ok) problems.push(`people.${name}.phone: ${normalised.reason}`);
    // One address, one person: a responder named by it must page someone in particular.
    const holder = address === undefined ? undefined : emails.get(address);
    if (holder !== undefined) problems.push(`people.${name}.email: already the email of people.${holder}`);
    else if (address !== undefined) emails.set(address, name);
  }
  const defined = Object.keys(people ?? {});
  const compiled = new Map<string, CompiledSchedule>();
  for (const [name, schedule] of Object.entries(schedules ?? {})) {
    const members: Person[] = [];
    schedule.rotation.people.forEach((member, index) => {
      const person = persons.get(member);
      if (person !== undefined) members.push(person);
      else
        problems.push(
          `schedules.${name}.rotation.people[${index}]: unknown person "${member}" (people: ${defined.length === 0 ? 'none defined' : defined.join(', ')})`,
        );
    });
    // The schema checked the start; a schedule with an unknown member is kept as well (the config
    // is refused for it), so `oncall:` entries naming it need no second problem.
    const startWall = parseLocalDateTime(schedule.rotation.start) ?? Number.NaN;
    compiled.set(
      name,
      Object.freeze({
        name,
        timeZone: schedule.timezone,
        notifyHandoff: schedule.notifyHandoff,
        rotation: Object.freeze({ people: Object.freeze(members), everyMs: schedule.rotation.every * 1000, startWall }),
      }),
    );
  }
  return Object.freeze({ people: persons, schedules: compiled, byEmail: emails });
}
