/**
 * The relay's fixed caps and defaults, in one place: the core, the store, the handlers, `infra/`
 * and `local/` import them from here, and the README quotes them.
 */

/**
 * At most this many SMS (fan-out items × parts) come from one webhook. Whole items are kept until
 * the next would pass the cap; the items beyond it are recorded as one `DROPPED` record that says
 * how many were not sent, and the 202 answer says so too.
 */
export const MAX_MESSAGES_PER_WEBHOOK = 50;

/**
 * Records one accept may write: the SMS of {@link MAX_MESSAGES_PER_WEBHOOK}, plus one `DROPPED`
 * record standing for everything that produced no SMS (items filtered, dropped or beyond the cap).
 */
export const MAX_RECORDS_PER_WEBHOOK = MAX_MESSAGES_PER_WEBHOOK + 1;

/** `routes.<id>.maxRecipients` when a route does not set it. */
export const DEFAULT_MAX_RECIPIENTS = 10;

/**
 * The largest `maxRecipients` a route may set: a record holds its recipients, and DynamoDB items
 * hold 400 KB at most.
 */
export const MAX_RECIPIENTS_CEILING = 10_000;

/**
 * JSON nested deeper than this is never a real webhook (GitHub's deepest payloads are about 8
 * levels); such a body is dropped with a reason before anything recurses over it.
 */
export const MAX_JSON_DEPTH = 64;
