import { SendCertainty, SmsOperation } from './types';

/*
 * Every error here is built from safe values only (status, codes, the service's redacted error
 * text): never from request options or headers, so the API key cannot reach a message, a field,
 * a stack or a `cause`.
 */

/**
 * What went wrong with a call to the SMS service. `delivery`, not the code, says whether the SMS
 * may have gone out; the code says what to tell a person or whether to try again.
 *
 * @example
 * ```ts
 * if (error instanceof SmsServiceError && error.code === SmsErrorCode.INSUFFICIENT_BALANCE) alertOps('top up');
 * ```
 */
export const SmsErrorCode = {
  /** The request broke a rule checked before any round trip (recipient format, message length…). */
  VALIDATION: 'validation',
  /** The client was used after `close()`. */
  CLIENT_CLOSED: 'client-closed',
  /** No client could be had: the API key could not be read. */
  CLIENT_UNAVAILABLE: 'client-unavailable',
  /** HTTP 400: invalid parameters, e.g. an unapproved sender ID. */
  BAD_REQUEST: 'bad-request',
  /** HTTP 401: the API key is invalid. */
  UNAUTHORIZED: 'unauthorized',
  /** HTTP 402: the prepaid balance does not cover the send. */
  INSUFFICIENT_BALANCE: 'insufficient-balance',
  /** HTTP 5xx. */
  SERVER_ERROR: 'server-error',
  /** HTTP 429: too many requests; nothing was sent, try again after `retryAfterMs`. */
  RATE_LIMITED: 'rate-limited',
  /** A status the service does not document (a redirect, 404…), or a 200 whose body is not the documented success. */
  UNEXPECTED_ANSWER: 'unexpected-answer',
  /** The call's deadline passed; the message says in which phase. */
  TIMEOUT: 'timeout',
  /** The connection was reset or closed before a complete answer. */
  RESET: 'reset',
  /** Nothing listens at the service's address. */
  REFUSED: 'refused',
  /** The service's host name did not resolve. */
  DNS: 'dns',
  /** Any other network failure (unreachable host, TLS certificate rejected…). */
  NETWORK: 'network',
} as const;

export type SmsErrorCode = (typeof SmsErrorCode)[keyof typeof SmsErrorCode];

export interface SmsServiceErrorOptions {
  readonly operation: SmsOperation;
  readonly code: SmsErrorCode;
  readonly delivery: SendCertainty;
  /** The HTTP status, when a status line arrived. */
  readonly status?: number | undefined;
  /** The `error` text of the service's error body (redacted of the API key), when the body was one. */
  readonly serviceError?: string | undefined;
  /** Node's error code (`ECONNRESET`, `ENOTFOUND`…; `ETIMEDOUT` for a deadline) when the network failed. */
  readonly systemCode?: string | undefined;
  /** For `validation`: the rules broken, naming fields, never their values (phone numbers are personal data). */
  readonly issues?: readonly string[] | undefined;
  /** For `rate-limited`: how long to wait before trying again (the answer's `Retry-After`, else the default). */
  readonly retryAfterMs?: number | undefined;
  readonly cause?: unknown;
}

function outcome(operation: SmsOperation, delivery: SendCertainty): string {
  if (operation !== SmsOperation.SEND) return '';
  return delivery === SendCertainty.NOT_SENT ? ' (SMS not sent)' : ' (SMS may have been sent)';
}

/**
 * Every failure of the SMS client. `delivery` says whether the SMS may have gone out: `getBalance`
 * failures are always `not-sent`, because a balance lookup never sends anything.
 *
 * @example
 * ```ts
 * try {
 *   await client.send({ phoneNumbers: '255712345678', message: 'Hi' });
 * } catch (error) {
 *   if (error instanceof SmsServiceError && error.delivery === SendCertainty.MAYBE_SENT) flagForReview(error);
 *   throw error;
 * }
 * ```
 */
export class SmsServiceError extends Error {
  public readonly operation: SmsOperation;
  public readonly code: SmsErrorCode;
  public readonly delivery: SendCertainty;
  public readonly status: number | undefined;
  public readonly serviceError: string | undefined;
  public readonly systemCode: string | undefined;
  public readonly issues: readonly string[] | undefined;
  public readonly retryAfterMs: number | undefined;

  public constructor(
    message: string,
    {
      operation,
      code,
      delivery,
      status,
      serviceError,
      systemCode,
      issues,
      retryAfterMs,
      cause,
    }: SmsServiceErrorOptions,
  ) {
    const text = serviceError === undefined ? message : `${message}: ${serviceError}`;
    // A provider's outcome turned back into an error (failover) already ends with what it says.
    const said = outcome(operation, delivery);
    super(text.endsWith(said) ? text : `${text}${said}`, cause === undefined ? undefined : { cause });
    this.name = 'SmsServiceError';
    this.operation = operation;
    this.code = code;
    this.delivery = delivery;
    this.status = status;
    this.serviceError = serviceError;
    this.systemCode = systemCode;
    this.issues = issues;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * The request broke a rule checked before any round trip. Nothing was sent.
 *
 * @example
 * ```ts
 * throw validationError(['message must not be empty or blank']);
 * ```
 */
export function validationError(
  issues: readonly string[],
  operation: SmsOperation = SmsOperation.SEND,
): SmsServiceError {
  return new SmsServiceError(`Invalid SMS ${operation} request: ${issues.join('; ')}`, {
    operation,
    code: SmsErrorCode.VALIDATION,
    delivery: SendCertainty.NOT_SENT,
    issues,
  });
}

/**
 * The client options are unusable (bad base URL, empty API key…). Thrown by `createSmsClient`,
 * never by a call. Its message never contains the API key or the base URL's credentials.
 *
 * @example
 * ```ts
 * try { createSmsClient({ baseUrl: 'ftp://x', apiKey }); } catch (e) { if (e instanceof SmsClientConfigError) console.error(e.problems); }
 * ```
 */
export class SmsClientConfigError extends Error {
  public readonly problems: readonly string[];

  public constructor(problems: readonly string[]) {
    super(`Invalid SMS client options: ${problems.join('; ')}`);
    this.name = 'SmsClientConfigError';
    this.problems = problems;
  }
}

/** Log-safe facts about a failure: no request data, no key. */
export interface SmsErrorDescription {
  readonly name: string;
  /** `maybe-sent` for errors that are not this client's: nothing proves otherwise. */
  readonly delivery: SendCertainty;
  readonly code?: SmsErrorCode;
  readonly operation?: SmsOperation;
  readonly status?: number;
  readonly serviceError?: string;
  readonly systemCode?: string;
}

/**
 * Picks the fields of an SMS client failure that are safe and useful in a structured log line.
 *
 * @example
 * ```ts
 * catch (error) { logger.error('SMS send failed', { sms: describeSmsError(error) }); }
 * // { name: 'SmsServiceError', delivery: 'maybe-sent', code: 'server-error', operation: 'send', status: 503, serviceError: 'Try later' }
 * ```
 */
export function describeSmsError(error: unknown): SmsErrorDescription {
  if (error instanceof SmsClientConfigError) return { name: error.name, delivery: SendCertainty.NOT_SENT };
  if (!(error instanceof SmsServiceError)) {
    return { name: error instanceof Error ? error.name : typeof error, delivery: SendCertainty.MAYBE_SENT };
  }
  const { name, delivery, code, operation, status, serviceError, systemCode } = error;
  return {
    name,
    delivery,
    code,
    operation,
    ...(status === undefined ? {} : { status }),
    ...(serviceError === undefined ? {} : { serviceError }),
    ...(systemCode === undefined ? {} : { systemCode }),
  };
}
