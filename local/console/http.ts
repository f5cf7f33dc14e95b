import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConsoleApi } from './api';
import { buildConsoleAssets, renderConsolePage } from './assets';
import { readLimited } from '../runtime/http-guard';
import { consoleRefusal } from './guard';

/** Everything of the console lives under this path, on the runtime and on `sms-relay console`. */
export const CONSOLE_PATH = '/console';
const API_PREFIX = `${CONSOLE_PATH}/api`;
const MAX_API_BODY_BYTES = 300 * 1024;

/** Headers of every console answer: nothing framed, sniffed, cached or loaded from elsewhere. */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

/** Whether a request path belongs to the console. */
export function isConsolePath(path: string): boolean {
  return path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`);
}

export interface ConsoleHandlerOptions {
  /** The anti-forgery token the page is served with; POSTs must echo it. */
  readonly token: string;
  readonly api: ConsoleApi;
  /** Called with unexpected errors (answered 500 without details). */
  readonly onError?: (error: unknown) => void;
}

/**
 * Serves the console: the page, its bundled script and stylesheet, and `/console/api/*`. Every
 * request must pass `consoleRefusal` (loopback Host, same Origin, token on POST), else 403.
 *
 * @example
 * ```ts
 * const handleConsole = createConsoleHandler({ token, api: createStoreApi(source) });
 * if (isConsolePath(path)) return await handleConsole(request, response, path);
 * ```
 */
export function createConsoleHandler({ token, api, onError }: ConsoleHandlerOptions): (request: IncomingMessage, response: ServerResponse, path: string) => Promise<void> {
  return async (request, response, path) => {
    const refusal = consoleRefusal(request, token);
    if (refusal !== undefined) {
      request.resume();
      return send(response, 403, 'application/json; charset=utf-8', JSON.stringify({ error: refusal }));
    }
    const method = request.method ?? 'GET';
    if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) {
      let body: unknown;
      if (method === 'POST') {
        const bytes = await readLimited(request, MAX_API_BODY_BYTES);
        if (bytes === undefined) return sendJson(response, 413, { error: `body over ${MAX_API_BODY_BYTES} bytes` });
        try {
          body = bytes.length === 0 ? {} : JSON.parse(bytes.toString('utf8'));
        } catch {
          return sendJson(response, 400, { error: 'the body is not valid JSON' });
        }
      } else {
        request.resume();
      }
      try {
        const answer = await api({ method, path: path.slice(API_PREFIX.length) || '/', query: new URL(request.url ?? '/', 'http://local').searchParams, body });
        return sendJson(response, answer.status, answer.body);
      } catch (error) {
        onError?.(error);
        return sendJson(response, 500, { error: 'internal error; see the terminal' });
      }
    }
    request.resume();
    if (method !== 'GET' && method !== 'HEAD') return sendJson(response, 405, { error: 'method not allowed; use GET' });
    if (path === CONSOLE_PATH || path === `${CONSOLE_PATH}/`) return send(response, 200, 'text/html; charset=utf-8', renderConsolePage({ token }));
    if (path === `${CONSOLE_PATH}/app.js` || path === `${CONSOLE_PATH}/app.css`) {
      try {
        const assets = await buildConsoleAssets();
        return path.endsWith('.js') ? send(response, 200, 'text/javascript; charset=utf-8', assets.js) : send(response, 200, 'text/css; charset=utf-8', assets.css);
      } catch (error) {
        onError?.(error);
        return sendJson(response, 500, { error: 'the console could not be built; see the terminal' });
      }
    }
    return sendJson(response, 404, { error: `not found: ${path}` });
  };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

function send(response: ServerResponse, status: number, type: string, text: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
