import { SmsDelivery, SmsOperation, type SmsTimeoutPhase } from './types';

/*
 * Every error here is built from safe values only (status, codes, the service's redacted error
 * text): never from request options or headers, so the API key cannot reach a message, a field,
 * a stack or a `cause`.
 */

interface BaseDetails {
  readonly operation: SmsOperation;
  readonly cause?: unknown;
}

interface DeliveryDetails extends BaseDetails {
  readonly delivery: SmsDelivery;
}

interface HttpDetails extends BaseDetails {
  readonly status: number;
  /** The `error` text of the service's error body, when the body was one. */
  readonly serviceError?: string | undefined;
}

interface TransportDetails extends DeliveryDetails {
  /** Node's error code, e.g. `ECONNRESET`. */
  readonly code?: string | undefined;
  /** The HTTP status, when the status line had arrived before the failure. */
  readonly status?: number | undefined;
}

function outcome(operation: SmsOperation, delivery: SmsDelivery): string {
  if (operation !== SmsOperation.SEND) return '';
  return delivery === SmsDelivery.NOT_SENT ? ' (SMS not sent)' : ' (SMS may have been sent)';
}

function withServiceError(text: string, serviceError: string | undefined): string {
  return serviceError === undefined ? text : `${text}: ${serviceError}`;
}

/**
 * Base of every failure of the SMS client. `delivery` says whether the SMS may have gone out;
 * `getBalance` failures are always `not-sent` because a balance lookup never sends anything.
 *
 * @example
 * ```ts
 * try {
 *   await client.send({ phoneNumbers: '255712345678', message: 'Hi' });
 * } catch (error) {
 *   if (error instanceof SmsProviderError && error.delivery === SmsDelivery.MAYBE_SENT) flagForReview(error);
 *   throw error;
 * }
 * ```
 */
export class SmsProviderError extends Error {
  public readonly delivery: SmsDelivery;
  public readonly operation: SmsOperation;

  public constructor(message: string, { operation, delivery, cause }: DeliveryDetails) {
    super(`${message}${outcome(operation, delivery)}`, cause === undefined ? undefined : { cause });
    this.name = 'SmsProviderError';
    this.operation = operation;
    this.delivery = delivery;
  }
}

/**
 * The request broke a rule checked before any round trip (recipient format, message length…).
 * Nothing was sent. `issues` name the field, never its value (phone numbers are personal data).
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsValidationError) logger.warn('bad SMS request', { issues: e.issues }); }
 * ```
 */
export class SmsValidationError extends SmsProviderError {
  public readonly issues: readonly string[];

  public constructor(issues: readonly string[], operation: SmsOperation = SmsOperation.SEND) {
    super(`Invalid SMS ${operation} request: ${issues.join('; ')}`, { operation, delivery: SmsDelivery.NOT_SENT });
    this.name = 'SmsValidationError';
    this.issues = issues;
  }
}

/**
 * The client was used after `close()`. Nothing was sent.
 *
 * @example
 * ```ts
 * client.close(); await client.getBalance(); // throws SmsClientClosedError
 * ```
 */
export class SmsClientClosedError extends SmsProviderError {
  public constructor(operation: SmsOperation) {
    super('SMS client is closed', { operation, delivery: SmsDelivery.NOT_SENT });
    this.name = 'SmsClientClosedError';
  }
}

/**
 * The service answered with an HTTP response that is not a usable success. `status` is its HTTP
 * status; `serviceError` the `error` text of its error body (redacted of the API key), if any.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsHttpError) logger.error('SMS service said no', { status: e.status, serviceError: e.serviceError }); }
 * ```
 */
export class SmsHttpError extends SmsProviderError {
  public readonly status: number;
  public readonly serviceError: string | undefined;

  public constructor(message: string, { status, serviceError, ...details }: HttpDetails & DeliveryDetails) {
    super(withServiceError(message, serviceError), details);
    this.name = 'SmsHttpError';
    this.status = status;
    this.serviceError = serviceError;
  }
}

/**
 * HTTP 400: invalid parameters, e.g. an unapproved sender ID. Not sent.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsBadRequestError) console.error(e.serviceError); }
 * ```
 */
export class SmsBadRequestError extends SmsHttpError {
  public constructor(details: HttpDetails) {
    super(`SMS service rejected the ${details.operation} request (HTTP ${details.status})`, {
      ...details,
      delivery: SmsDelivery.NOT_SENT,
    });
    this.name = 'SmsBadRequestError';
  }
}

/**
 * HTTP 401: the API key is invalid. Not sent.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsUnauthorizedError) alertOps('rotate the SMS API key'); }
 * ```
 */
export class SmsUnauthorizedError extends SmsHttpError {
  public constructor(details: HttpDetails) {
    super(`SMS service refused the API key (HTTP ${details.status})`, { ...details, delivery: SmsDelivery.NOT_SENT });
    this.name = 'SmsUnauthorizedError';
  }
}

/**
 * HTTP 402: the prepaid balance does not cover the send. Not sent.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsInsufficientBalanceError) alertOps('top up the SMS balance'); }
 * ```
 */
export class SmsInsufficientBalanceError extends SmsHttpError {
  public constructor(details: HttpDetails) {
    super(`SMS balance is insufficient (HTTP ${details.status})`, { ...details, delivery: SmsDelivery.NOT_SENT });
    this.name = 'SmsInsufficientBalanceError';
  }
}

/**
 * HTTP 5xx. The service may have sent before failing, so a send is `maybe-sent`.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsServerError) logger.error('SMS service failed', { status: e.status }); }
 * ```
 */
export class SmsServerError extends SmsHttpError {
  public constructor(details: HttpDetails & DeliveryDetails) {
    super(`SMS service failed (HTTP ${details.status})`, details);
    this.name = 'SmsServerError';
  }
}

/**
 * An HTTP status the service does not document (not 200/400/401/402/5xx), e.g. a redirect, 404 or
 * 429 from something in front of it. What happened is unknown, so a send is `maybe-sent`.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsUnexpectedStatusError) logger.error('odd SMS answer', { status: e.status }); }
 * ```
 */
export class SmsUnexpectedStatusError extends SmsHttpError {
  public constructor(details: HttpDetails & DeliveryDetails) {
    super(`SMS service answered with unexpected HTTP ${details.status}`, details);
    this.name = 'SmsUnexpectedStatusError';
  }
}

/**
 * A 200 whose body is not JSON. The service did accept the request, so a send is `maybe-sent`.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsResponseNotJsonError) flagForReview(e); }
 * ```
 */
export class SmsResponseNotJsonError extends SmsHttpError {
  public constructor(details: HttpDetails & DeliveryDetails) {
    super(`SMS service answered HTTP ${details.status} with a body that is not JSON`, details);
    this.name = 'SmsResponseNotJsonError';
  }
}

/**
 * A 200 with a JSON body that is not the documented success (no `success: true`, a field missing
 * or of the wrong type, or too large). A send is `maybe-sent`. `problem` names what was wrong.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsUnexpectedResponseError) logger.error(e.problem); }
 * ```
 */
export class SmsUnexpectedResponseError extends SmsHttpError {
  public readonly problem: string;

  public constructor({ problem, ...details }: HttpDetails & DeliveryDetails & { readonly problem: string }) {
    super(`SMS service answered HTTP ${details.status} with an unexpected body (${problem})`, details);
    this.name = 'SmsUnexpectedResponseError';
    this.problem = problem;
  }
}

/**
 * No complete HTTP answer: the connection failed, was cut, or timed out. `code` is Node's error
 * code; `status` is set if the status line had arrived before the body was cut.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsTransportError) logger.warn('SMS transport', { code: e.code, delivery: e.delivery }); }
 * ```
 */
export class SmsTransportError extends SmsProviderError {
  public readonly code: string | undefined;
  public readonly status: number | undefined;

  public constructor(message: string, { code, status, ...details }: TransportDetails) {
    super(message, details);
    this.name = 'SmsTransportError';
    this.code = code;
    this.status = status;
  }
}

/**
 * The call's deadline passed. `phase` says where: before the request was fully sent it is
 * `not-sent`, after it a send is `maybe-sent`.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsTimeoutError && e.phase === SmsTimeoutPhase.CONNECT) retryNow(); }
 * ```
 */
export class SmsTimeoutError extends SmsTransportError {
  public readonly phase: SmsTimeoutPhase;
  public readonly timeoutMs: number;

  public constructor({ phase, timeoutMs, ...details }: TransportDetails & { readonly phase: SmsTimeoutPhase; readonly timeoutMs: number }) {
    super(`SMS ${details.operation} request timed out after ${timeoutMs} ms in the ${phase} phase`, {
      ...details,
      code: details.code ?? 'ETIMEDOUT',
    });
    this.name = 'SmsTimeoutError';
    this.phase = phase;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The connection was reset or closed before a complete answer. After the whole request was sent a
 * send is `maybe-sent`, even on a reused keep-alive socket (`reusedSocket`): a server that closed
 * an idle socket and one that crashed after sending look the same from here.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsConnectionResetError) logger.warn('reset', { reusedSocket: e.reusedSocket }); }
 * ```
 */
export class SmsConnectionResetError extends SmsTransportError {
  public readonly reusedSocket: boolean;

  public constructor({ reusedSocket, ...details }: TransportDetails & { readonly reusedSocket: boolean }) {
    super(`SMS ${details.operation} connection was reset${reusedSocket ? ' on a reused keep-alive socket' : ''}`, details);
    this.name = 'SmsConnectionResetError';
    this.reusedSocket = reusedSocket;
  }
}

/**
 * Nothing listens at the service's address (ECONNREFUSED). Not sent.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsConnectionRefusedError) retryLater(); }
 * ```
 */
export class SmsConnectionRefusedError extends SmsTransportError {
  public constructor(details: BaseDetails & { readonly code?: string | undefined }) {
    super(`SMS ${details.operation} connection was refused`, { ...details, delivery: SmsDelivery.NOT_SENT });
    this.name = 'SmsConnectionRefusedError';
  }
}

/**
 * The service's host name did not resolve (ENOTFOUND, EAI_AGAIN…). Not sent.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsDnsError) logger.error('DNS', { hostname: e.hostname }); }
 * ```
 */
export class SmsDnsError extends SmsTransportError {
  public readonly hostname: string;

  public constructor({ hostname, ...details }: BaseDetails & { readonly code?: string | undefined; readonly hostname: string }) {
    super(`SMS ${details.operation} could not resolve ${hostname}`, { ...details, delivery: SmsDelivery.NOT_SENT });
    this.name = 'SmsDnsError';
    this.hostname = hostname;
  }
}

/**
 * Any other network failure (unreachable host, TLS certificate rejected…). `delivery` follows
 * how far the request got.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SmsConnectionError) logger.error('SMS network', { code: e.code }); }
 * ```
 */
export class SmsConnectionError extends SmsTransportError {
  public constructor(details: TransportDetails) {
    super(`SMS ${details.operation} connection failed${details.code === undefined ? '' : ` (${details.code})`}`, details);
    this.name = 'SmsConnectionError';
  }
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
