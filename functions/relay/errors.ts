/**
 * Errors of the relay's operations.
 */

/**
 * No SMS client could be had: the API key could not be read (the secret unreachable, or without
 * `providerApiKey`). Nothing was sent, so the sender retries it like any other `not-sent` failure.
 * `cause` is the secret source's error; its message names the failure, never a secret value.
 *
 * @example
 * ```ts
 * catch (error) { if (error instanceof SmsClientUnavailableError) await retryLater(); }
 * ```
 */
export class SmsClientUnavailableError extends Error {
  /** Always `not-sent`: the request was never made. */
  public readonly delivery = 'not-sent' as const;

  public constructor(options: { readonly cause: unknown }) {
    const reason = options.cause instanceof Error ? options.cause.name : typeof options.cause;
    super(`no SMS client: the API key could not be read (${reason}); SMS not sent`, { cause: options.cause });
    this.name = 'SmsClientUnavailableError';
  }
}
