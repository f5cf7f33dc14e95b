import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../http-error';

/** Far above any valid send (160 characters to thousands of numbers), low enough to stop a runaway client. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The request path without query string or fragment. Deliberately not `new URL(...)`: a path like
 * `//host/x` would be read as a host.
 *
 * @example
 * requestPath('/v1/account/balance?x=1'); // '/v1/account/balance'
 */
export function requestPath(url: string | undefined): string {
  const raw = url ?? '/';
  const end = raw.search(/[?#]/);
  return end === -1 ? raw : raw.slice(0, end);
}

/**
 * Reads the whole body, or throws a 413 `HttpError` past `limitBytes`.
 *
 * @example
 * const body = await readBody(request);
 */
export function readBody(request: IncomingMessage, { limitBytes = MAX_BODY_BYTES } = {}): Promise<Buffer> {
  // Event listeners rather than `for await`: leaving that loop early destroys the socket, and the 413 with it.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > limitBytes) {
        tooLarge = true;
        chunks.length = 0;
        // The rest of the body may still be streaming in; closing avoids reading it just to keep the socket.
        reject(new HttpError(413, `Request body exceeds ${limitBytes} bytes`, { headers: { connection: 'close' } }));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
    request.on('close', () => reject(new Error('Client closed the connection before the body was complete')));
  });
}

/**
 * Parses a JSON request body; the seed says sends carry `Content-Type: application/json`, so any
 * other type is a 400 rather than a guess.
 *
 * @example
 * const body = parseJsonBody(request.headers['content-type'], await readBody(request));
 */
export function parseJsonBody(contentType: string | undefined, body: Buffer): unknown {
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new HttpError(400, 'Content-Type must be application/json');
  }
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw new HttpError(400, 'Request body is not valid JSON', { cause: error });
  }
}

/**
 * Writes a JSON answer.
 *
 * @example
 * sendJson(response, 200, { success: true });
 */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  { headers = {} }: { headers?: Readonly<Record<string, string>> } = {},
): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
  });
  response.end(payload);
}

/**
 * Writes the seed's error body `{ success: false, error }` for any thrown value; anything that is
 * not an `HttpError` is a bug and becomes a 500 without its details.
 *
 * @example
 * sendError(response, new HttpError(400, 'message is required'));
 */
export function sendError(response: ServerResponse, error: unknown): void {
  const httpError = error instanceof HttpError ? error : new HttpError(500, 'Internal server error');
  sendJson(response, httpError.status, { success: false, error: httpError.message }, { headers: httpError.headers });
}

/** Control endpoints are for the local machine only, even when the sandbox listens wider. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}
