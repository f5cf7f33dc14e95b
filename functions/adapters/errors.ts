/**
 * Errors of the adapters both runtimes use: secrets that cannot be read. None of them ever
 * carries a secret value, in its message or in its `cause`.
 */

/**
 * The secret (Secrets Manager or the local secrets file) could not be read or is not a JSON
 * object of strings. `cause` is kept only when it cannot hold the secret's text (an AWS SDK error
 * can; a JSON parse error quotes the input, so it is dropped).
 *
 * @example
 * ```ts
 * catch (error) { if (error instanceof SecretUnavailableError) logger.error('no secret', { error }); }
 * ```
 */
export class SecretUnavailableError extends Error {
  public constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SecretUnavailableError';
  }
}

/**
 * A value the relay needs is absent from the secret: `providerApiKey`, or a route's secret name.
 * Only the value's name is in the message.
 *
 * @example
 * ```ts
 * throw new MissingSecretValueError('providerApiKey');
 * ```
 */
export class MissingSecretValueError extends Error {
  public readonly valueName: string;

  public constructor(valueName: string) {
    super(`the secret has no value named "${valueName}"`);
    this.name = 'MissingSecretValueError';
    this.valueName = valueName;
  }
}
