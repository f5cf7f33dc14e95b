import { z } from 'zod';
import { parsePhone } from '../recipients/msisdn';
import { parseDurationSeconds } from './duration';

/**
 * The `alarms:` block (read by `cdk synth` only; the local runtime ignores it, as it does `deploy:`):
 * who is reached by each kind of alarm, and the delivery-latency promise of critical routes.
 *
 * ```yaml
 * alarms:
 *   page:   ["oncall@example.com", "+255712345678", "https://hc.example.com/ping/…"]
 *   ticket: ["ops@example.com"]
 *   deliveryLatencyP99: 60s
 * ```
 */

/** How SNS delivers to an alarm entry: its own protocols, never the relay's SMS service. */
export const AlarmEndpointKind = {
  Email: 'email',
  /** AWS SNS's own SMS, so a page does not depend on the SMS service the relay itself sends through. */
  Sms: 'sms',
  Https: 'https',
} as const;
export type AlarmEndpointKind = (typeof AlarmEndpointKind)[keyof typeof AlarmEndpointKind];

/** One entry of `alarms.page` or `alarms.ticket`, read: its kind and what SNS subscribes (a number in E.164). */
export interface AlarmEndpoint {
  readonly kind: AlarmEndpointKind;
  readonly endpoint: string;
}

/** The alarm kinds: a page wakes someone now, a ticket is read in working hours. */
export const AlarmSeverity = {
  Page: 'page',
  Ticket: 'ticket',
} as const;
export type AlarmSeverity = (typeof AlarmSeverity)[keyof typeof AlarmSeverity];

const EMAIL = z.email();
// The entry is never echoed: an HTTPS endpoint's path is often its only secret (a ping URL's id).
const NONE_OF = 'is none of an e-mail address, a phone number in international form (+255712345678) or an https:// URL';

/**
 * Reads one alarm entry: an e-mail address, a phone number (any country, read as Tanzanian without
 * a country code; subscribed in E.164) or an `https://` URL. `undefined` when it is none of these.
 *
 * @example
 * ```ts
 * readAlarmEndpoint('+255 712 345 678'); // { kind: 'sms', endpoint: '+255712345678' }
 * readAlarmEndpoint('ops@example.com'); // { kind: 'email', endpoint: 'ops@example.com' }
 * ```
 */
export function readAlarmEndpoint(entry: string): AlarmEndpoint | undefined {
  const text = entry.trim();
  if (EMAIL.safeParse(text).success) return { kind: AlarmEndpointKind.Email, endpoint: text };
  if (/^https:\/\//i.test(text)) {
    return URL.canParse(text) ? { kind: AlarmEndpointKind.Https, endpoint: text } : undefined;
  }
  const phone = parsePhone(text);
  return phone?.isValid() === true ? { kind: AlarmEndpointKind.Sms, endpoint: phone.number } : undefined;
}

const endpoint = z.union([z.string(), z.number()]).transform((value, context): AlarmEndpoint => {
  const read = readAlarmEndpoint(String(value));
  if (read === undefined) {
    context.addIssue({
      code: 'custom',
      message: /^http:\/\//i.test(String(value).trim()) ? 'an alarm URL must be https://' : NONE_OF,
    });
    return z.NEVER;
  }
  return read;
});

const latency = z.union([z.number(), z.string()]).transform((value, context) => {
  const seconds = parseDurationSeconds(value);
  if (seconds === undefined || seconds <= 0) {
    context.addIssue({ code: 'custom', message: `"${value}" is not a duration above 0; use e.g. 60s, 2m` });
    return z.NEVER;
  }
  return seconds;
});

export const AlarmsSchema = z.strictObject({
  /** Reached by the paging alarms (the relay cannot page, or a critical message is not going out). */
  page: z.array(endpoint).default([]),
  /** Reached by every other alarm. */
  ticket: z.array(endpoint).default([]),
  /**
   * The p99 of accept-to-SENT on each `priority: critical` route above which `DeliveryLatency-<route>`
   * fires, in seconds. Absent: {@link DEFAULT_DELIVERY_LATENCY_P99_SECONDS}.
   */
  deliveryLatencyP99: latency.optional(),
});

/** `alarms.deliveryLatencyP99` when absent: a critical SMS out within a minute of its webhook. */
export const DEFAULT_DELIVERY_LATENCY_P99_SECONDS = 60;

export type AlarmsConfig = z.output<typeof AlarmsSchema>;
