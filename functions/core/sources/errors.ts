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
