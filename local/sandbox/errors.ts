/**
 * Errors of the sandbox SMS service.
 *
 * `SandboxHttpError` and its subclasses become the service's error body `{ success: false, error }`
 * with their `status`; their `message` is written for the API client, so it must never contain the
 * API key. The other classes are thrown to the code that starts or drives the sandbox.
 */

/**
 * An answer with an error status and the error body.
 *
 * @example
 * throw new SandboxHttpError(400, 'message must be at most 160 characters');
 */
export class SandboxHttpError extends Error {
  public readonly status: number;
  /** Extra response headers, e.g. `Allow` on a 405. */
  public readonly headers: Readonly<Record<string, string>>;

  public constructor(
    status: number,
    message: string,
    { headers = {}, cause }: { headers?: Readonly<Record<string, string>>; cause?: unknown } = {},
  ) {
    super(message, { cause });
    this.name = 'SandboxHttpError';
    this.status = status;
    this.headers = headers;
  }
}

/** 400: invalid parameters, malformed JSON, wrong content type. */
export class BadRequestError extends SandboxHttpError {
  public constructor(message: string, options: { cause?: unknown } = {}) {
    super(400, message, options);
    this.name = 'BadRequestError';
  }
}

/** 401: missing or wrong `X-API-Key`. The text is fixed so it cannot leak what was presented. */
export class UnauthorizedError extends SandboxHttpError {
  public constructor(message = 'Invalid or missing API key (X-API-Key header)') {
    super(401, message);
    this.name = 'UnauthorizedError';
  }
}

/** 402: the balance does not cover the send. */
export class InsufficientBalanceError extends SandboxHttpError {
  public constructor(message: string) {
    super(402, message);
    this.name = 'InsufficientBalanceError';
  }
}

/** 403: a control endpoint was called from outside loopback. */
export class ForbiddenError extends SandboxHttpError {
  public constructor(message: string) {
    super(403, message);
    this.name = 'ForbiddenError';
  }
}

/** 404: no such path. */
export class NotFoundError extends SandboxHttpError {
  public constructor(method: string, path: string) {
    super(404, `Not found: ${method} ${path}`);
    this.name = 'NotFoundError';
  }
}

/** 405: the path exists with other methods; the `Allow` header lists them. */
export class MethodNotAllowedError extends SandboxHttpError {
  public constructor(method: string, path: string, allowed: readonly string[]) {
    super(405, `Method ${method} not allowed on ${path}; use ${allowed.join(', ')}`, {
      headers: { allow: allowed.join(', ') },
    });
    this.name = 'MethodNotAllowedError';
  }
}

/** 413: the body is over the sandbox's size limit. */
export class PayloadTooLargeError extends SandboxHttpError {
  public constructor(limitBytes: number) {
    super(413, `Request body exceeds ${limitBytes} bytes`);
    this.name = 'PayloadTooLargeError';
  }
}

/**
 * `startSandbox` was given options it cannot honour.
 *
 * @example
 * try { await startSandbox({ apiKey: '' }); } catch (error) { if (error instanceof InvalidSandboxOptionsError) { ... } }
 */
export class InvalidSandboxOptionsError extends Error {
  public constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'InvalidSandboxOptionsError';
  }
}

/** A fault given to `injectFault` (or `POST /_sandbox/faults`) is not a valid `SandboxFault`. */
export class InvalidSandboxFaultError extends Error {
  public constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'InvalidSandboxFaultError';
  }
}

/** The server could not listen (port in use, bad host...). `cause` holds the socket error. */
export class SandboxStartError extends Error {
  public constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'SandboxStartError';
  }
}
