import { z } from 'zod';
import { PAGING } from '../defaults';
import { parseDurationSeconds } from './duration';

/**
 * A route's paging keys (paging, second part): `escalate`, `renotify`, `ack` and `incident`. Kept
 * apart from `schema.ts` as `oncall-schema.ts` is. Whether the route's source knows when an alert
 * resolves (or the route says how, `incident:`) is checked when the route is compiled
 * (`compilePaging`), where the pack is known.
 */

/** A duration of at least {@link PAGING.minStepSeconds}: the sweeper acts once a minute. */
const step = (what: string) =>
  z.union([z.number(), z.string()], { error: `${what} is a duration, e.g. 10m` }).transform((value, context) => {
    const seconds = parseDurationSeconds(value);
    if (seconds === undefined) {
      context.addIssue({ code: 'custom', message: `"${value}" is not a duration; use e.g. 10m, 1h` });
      return z.NEVER;
    }
    if (seconds < PAGING.minStepSeconds) {
      context.addIssue({
        code: 'custom',
        message: `${what} is at least 1m (the sweeper acts once a minute), got "${value}"`,
      });
      return z.NEVER;
    }
    return seconds;
  });

export const EscalateSchema = z
  .array(
    z.strictObject({
      /** Seconds since the incident's first SMS. */
      after: step('after'),
      /** Numbers, `person:<name>`, `oncall:<schedule>`: no templates (the sweeper sends it without a payload). */
      to: z.array(z.string().min(1)).min(1, { message: 'to names at least one recipient' }),
    }),
  )
  .min(1, { message: 'escalate lists at least one step, e.g. [{ after: 10m, to: ["person:baraka"] }]' })
  // Each step is a line of the incident's timeline, which keeps at most PAGING.maxTimelineEntries.
  .max(PAGING.maxSteps, { message: `escalate lists at most ${PAGING.maxSteps} steps` })
  .superRefine((steps, context) => {
    for (let index = 1; index < steps.length; index += 1) {
      if (steps[index]!.after <= steps[index - 1]!.after) {
        context.addIssue({
          code: 'custom',
          path: [index, 'after'],
          message: `after must increase: step ${index + 1} comes at or before step ${index}`,
        });
      }
    }
  });

export const RenotifySchema = z.strictObject({
  every: step('every'),
  max: z.number({ error: 'max is how many repeats, e.g. 3' }).int().min(1).max(PAGING.maxRenotify),
});

export const AckSchema = z.strictObject({
  /** The acknowledge link's origin; absent: the API's own URL on AWS, the runtime's URL locally. */
  baseUrl: z
    .url({ protocol: /^https?$/, message: 'baseUrl is an http(s) origin like https://sms.example.co.tz' })
    .refine((url) => new URL(url).pathname === '/' && !url.includes('?') && !url.includes('#'), {
      message: 'baseUrl is an origin only, without a path, query or fragment',
    })
    .transform((url) => url.replace(/\/+$/, ''))
    .optional(),
});

export const IncidentSchema = z.strictObject({
  /** A template whose text names one incident (`{{ groupKey }}`). */
  key: z.string().min(1, { message: 'key is a template naming the incident, e.g. "{{ groupKey }}"' }),
  /** A condition true for a webhook that resolves it (`status == 'resolved'`). */
  resolved: z.string().min(1, { message: 'resolved is a condition, e.g. "status == \'resolved\'"' }),
});

export type EscalateConfig = z.output<typeof EscalateSchema>;
export type RenotifyConfig = z.output<typeof RenotifySchema>;
export type AckConfig = z.output<typeof AckSchema>;
export type IncidentConfig = z.output<typeof IncidentSchema>;
