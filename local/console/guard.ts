import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isLocalRequest } from '../runtime/http-guard';
import { CONSOLE_TOKEN_HEADER } from './contract';

/**
 * Why a console request is refused, or `undefined` when it may go on. Every request: the `Host`
 * names this loopback address and port and no proxy forwarded it (`isLocalRequest`: this defeats
 * DNS rebinding), and a browser's `Origin` and `Sec-Fetch-Site`, when sent, say this same origin.
 * A state-changing request also carries the page's token in {@link CONSOLE_TOKEN_HEADER}: another
 * site can make a browser send a request here, but it cannot read the page to learn the token,
 * and the custom header alone forces a CORS preflight this server never approves.
 *
 * @example
 * ```ts
 * const refusal = consoleRefusal(request, token);
 * if (refusal !== undefined) return sendJson(response, 403, { error: refusal });
 * ```
 */
export function consoleRefusal(request: IncomingMessage, token: string): string | undefined {
  if (!isLocalRequest(request)) return 'local requests only';
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `http://${request.headers.host}`) return `foreign origin ${JSON.stringify(origin)}`;
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `cross-site request (${site})`;
  const method = request.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return undefined;
  if (!sameToken(request.headers[CONSOLE_TOKEN_HEADER], token)) return `missing or wrong ${CONSOLE_TOKEN_HEADER} header`;
  if (!(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) return 'send application/json';
  return undefined;
}

function sameToken(sent: string | string[] | undefined, token: string): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
