/**
 * Errors of the sandbox SMS service.
 *
 * A refused request is an `HttpError` (local/http/error.ts): it becomes the service's error body
 * `{ success: false, error }` with its `status`; its `message` is written for the API client, so it
 * must never contain the API key. The classes here are thrown to the code that starts or drives the sandbox.
 */

import { HttpError } from '../http';

/** 404: no such path. */
export const notFound = (method: string, path: string): HttpError => new HttpError(404, `Not found: ${method} ${path}`);

/** 405: the path exists with other methods; the `Allow` header lists them. */
export function methodNotAllowed(method: string, path: string, allowed: readonly string[]): HttpError {
  return new HttpError(405, `Method ${method} not allowed on ${path}; use ${allowed.join(', ')}`, {
    headers: { allow: allowed.join(', ') },
  });
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
