/** What the relay decided about one webhook. */
export const Verdict = {
  /** At least one SMS is to be sent. */
  Send: 'send',
  /** The route's `when` was false for every item: no SMS, by design. */
  Filtered: 'filtered',
  /** A ping/test event from the sender: acknowledged, no SMS. */
  Ping: 'ping',
  /** Nothing can be sent: no valid recipient, a message rejected as too long, an empty fan-out. */
  Dropped: 'dropped',
  /** The signature or credential did not check out. */
  Unauthorized: 'unauthorized',
  /** The body could not be read as the source's format. */
  BadRequest: 'bad-request',
} as const;
export type Verdict = (typeof Verdict)[keyof typeof Verdict];
