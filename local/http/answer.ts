import type { ServerResponse } from 'node:http';
import { HttpError } from './error';

/** Options of {@link sendText} and {@link sendJson}. */
export interface AnswerOptions {
  /** Extra headers; they may replace `cache-control`, never the type or the length. */
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
}

/**
 * Writes a whole answer: `text` with its `content-type` and `content-length`, and
 * `cache-control: no-store` unless `headers` says otherwise (every local answer is live state).
 *
 * @example
 * ```ts
 * sendText(response, 200, '<!doctype html>…', { type: 'text/html; charset=utf-8' });
 * ```
 */
export function sendText(
  response: ServerResponse,
  status: number,
  text: string,
  { type = 'text/plain; charset=utf-8', headers = {} }: AnswerOptions & { readonly type?: string } = {},
): void {
  response.writeHead(status, {
    'cache-control': 'no-store',
    ...headers,
    'content-type': type,
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

/**
 * Writes `body` as a JSON answer (`application/json; charset=utf-8`).
 *
 * @example
 * ```ts
 * sendJson(response, 405, { error: 'method not allowed; use GET' }, { headers: { allow: 'GET' } });
 * ```
 */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  { headers = {} }: AnswerOptions = {},
): void {
  sendText(response, status, JSON.stringify(body), { type: 'application/json; charset=utf-8', headers });
}

/** Options of {@link sendError}. */
export interface ErrorAnswerOptions {
  /** The JSON body for a message; each server keeps its own error shape. */
  readonly bodyOf?: (message: string) => unknown;
  /** The message of the 500 that anything but an `HttpError` becomes (its details are not the client's). */
  readonly internal?: string;
}

/**
 * Answers a thrown value: an `HttpError` with its status, headers and message; anything else, a
 * bug, as a 500 without its details.
 *
 * @example
 * ```ts
 * sendError(response, new HttpError(404, 'Not found: GET /x'), { bodyOf: (error) => ({ success: false, error }) });
 * ```
 */
export function sendError(
  response: ServerResponse,
  error: unknown,
  { bodyOf = (message) => ({ error: message }), internal = 'internal error' }: ErrorAnswerOptions = {},
): void {
  const refusal = error instanceof HttpError ? error : new HttpError(500, internal);
  sendJson(response, refusal.status, bodyOf(refusal.message), { headers: refusal.headers });
}
