/**
 * The config's enumerated policies, as plain `as const` objects: what the compiled config and the
 * relay operations use at run time, without the schema (and zod) that validates them at synth.
 */

/** How a message longer than 160 characters is handled: the fitting's own policy. */
export { LengthPolicy } from '../fitting/constants';

/** What the sender may do after an ambiguous failure (the SMS may or may not have gone out). */
export const DeliveryPolicy = { AtMostOnce: 'at-most-once', AtLeastOnce: 'at-least-once' } as const;
export type DeliveryPolicy = (typeof DeliveryPolicy)[keyof typeof DeliveryPolicy];

/**
 * Who may spend the credit below `balance.reserve`: `critical` routes (and the relay's own
 * low-balance SMS) still send there; `normal` routes park until a top-up.
 */
export const RoutePriority = { Normal: 'normal', Critical: 'critical' } as const;
export type RoutePriority = (typeof RoutePriority)[keyof typeof RoutePriority];
