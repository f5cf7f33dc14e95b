/**
 * A recipients entry that can't work for any webhook: a literal number that isn't a valid
 * Tanzanian mobile, or a templated entry that doesn't compile. Thrown at config load.
 *
 * The message is `[index] reason` so that callers can prefix the config path:
 * `routes.orders.recipients: [2] not a Tanzanian number (+254…)`. The reason never contains
 * the number. For a template, the `TemplateError` is the `cause`.
 *
 * @example
 * ```ts
 * try {
 *   compileRecipients(['0712345678', '+254712345678'], engine);
 * } catch (error) {
 *   if (error instanceof RecipientConfigError) console.error(error.index, error.reason); // 1 'not a Tanzanian number (+254…)'
 * }
 * ```
 */
export class RecipientConfigError extends Error {
  /** 0-based position of the entry in the recipients list. */
  public readonly index: number;
  public readonly reason: string;

  public constructor(index: number, reason: string, options?: ErrorOptions) {
    super(`[${index}] ${reason}`, options);
    this.name = 'RecipientConfigError';
    this.index = index;
    this.reason = reason;
  }
}
