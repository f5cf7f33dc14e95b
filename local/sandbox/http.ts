import type { ServerResponse } from 'node:http';
import { HttpError, parseJson, sendError as sendHttpError } from '../http';

/** Far above any valid send (160 characters to thousands of numbers), low enough to stop a runaway client. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Parses a JSON request body; sends carry `Content-Type: application/json` (docs/sms-service.md, Send), so any
 * other type is a 400 rather than a guess.
 *
 * @example
 * const body = parseJsonBody(request.headers['content-type'], await readBody(request, { limitBytes: MAX_BODY_BYTES }));
 */
export function parseJsonBody(contentType: string | undefined, body: Buffer): unknown {
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new HttpError(400, 'Content-Type must be application/json');
  }
  return parseJson(body);
}

/**
 * Writes the service's error body `{ success: false, error }` (docs/sms-service.md, Errors) for any thrown value; anything that is
 * not an `HttpError` is a bug and becomes a 500 without its details.
 *
 * @example
 * sendError(response, new HttpError(400, 'message is required'));
 */
export function sendError(response: ServerResponse, error: unknown): void {
  sendHttpError(response, error, {
    bodyOf: (message) => ({ success: false, error: message }),
    internal: 'Internal server error',
  });
}
