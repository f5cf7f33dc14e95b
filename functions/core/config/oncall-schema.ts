import { z } from 'zod';
import { ONCALL } from '../defaults';
import { parseLocalDateTime } from '../oncall/schedule';
import { parseDurationSeconds } from './duration';
import { TimeZoneSchema } from './zone-schema';

/**
 * The config's `people` and `schedules` (paging, first part): who can be paged by name
 * (`person:<name>`) and who a rotation puts on call (`oncall:<schedule>`). Kept apart from
 * `schema.ts` as `hmac-schema.ts` is. The names they use are checked when the config is compiled
 * (`compileOnCall`), so a config whose other parts are broken still has them checked.
 */

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const name = (what: string) =>
  z.string().regex(NAME, { message: `${what} names are letters, digits, - and _ (at most 64)` });

export const PersonSchema = z.strictObject({
  // YAML reads an unquoted 255712345678 as a number; the number is checked when the config is compiled.
  phone: z
    .union([z.string().min(1, { message: 'phone is required' }), z.number()], {
      error: 'phone is a mobile number, e.g. "0712345678"',
    })
    .transform(String),
  // The address the person has in tools that page by user (Opsgenie's responder `username`), so a
  // responder named by it pages this person; compared without regard to case.
  email: z.email({ error: 'email is an e-mail address, e.g. "baraka@example.com"' }).max(254).optional(),
});

export const ScheduleSchema = z.strictObject({
  timezone: TimeZoneSchema,
  rotation: z.strictObject({
    people: z.array(z.string()).min(1, { message: 'a rotation needs at least one person of people' }),
    every: z
      .union([z.number(), z.string()], { error: 'every is a shift length, e.g. 1w, 1d, 12h' })
      .transform((value, context) => {
        const seconds = parseDurationSeconds(value);
        if (seconds === undefined) {
          context.addIssue({ code: 'custom', message: `"${value}" is not a duration; use e.g. 1w, 1d, 12h, 30m` });
          return z.NEVER;
        }
        if (seconds < ONCALL.minEverySeconds) {
          context.addIssue({ code: 'custom', message: `every is at least 1m, got "${value}"` });
          return z.NEVER;
        }
        return seconds;
      }),
    start: z
      .string({ error: 'start is a local time in the zone, e.g. "2026-11-30T09:00" (quoted)' })
      .refine((text) => parseLocalDateTime(text) !== undefined, {
        message: 'start is a local date and time in the zone, e.g. "2026-11-30T09:00"',
      }),
  }),
  // true: the sweeper texts each shift's person when the shift begins (functions/relay/handoff.ts).
  notifyHandoff: z.boolean({ error: 'notifyHandoff is true or false' }).default(false),
});

export const PeopleSchema = z.record(name('person'), PersonSchema);
export const SchedulesSchema = z.record(name('schedule'), ScheduleSchema);

export type PeopleConfig = z.output<typeof PeopleSchema>;
export type SchedulesConfig = z.output<typeof SchedulesSchema>;
