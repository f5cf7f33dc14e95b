/**
 * Raised when a webhook body cannot be parsed into the shape its source sends.
 * The message is safe to return to the sender in a 400 answer.
 *
 * @example
 * ```ts
 * throw new BadPayloadError('body is not valid JSON', { cause: error });
 * ```
 */
export class BadPayloadError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BadPayloadError';
  }
}

/**
 * A body that is well-formed but that the relay will never turn into an SMS (JSON nested beyond
 * `MAX_JSON_DEPTH`). No retry can change that, so it is answered `200 dropped` and recorded, not
 * refused: a refusal would make the sender retry it for days.
 */
export class UndeliverablePayloadError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UndeliverablePayloadError';
  }
}
