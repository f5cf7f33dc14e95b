import type { IncomingMessage } from 'node:http';
import { isLocalRequest } from '../runtime/http-guard';

/**
 * Why a browser request from another site is refused, or `undefined`: a browser's `Origin` and
 * `Sec-Fetch-Site`, when sent, must say this same origin. The console and `/_relay/*` both check
 * this: a page of any site can make the browser send a request to 127.0.0.1.
 */
export function crossSiteRefusal(request: IncomingMessage): string | undefined {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `http://${request.headers.host}`) return `foreign origin ${JSON.stringify(origin)}`;
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `cross-site request (${site})`;
  return undefined;
}

/**
 * Why a console request is refused before anyone is identified, or `undefined` when it may go on:
 * the `Host` names this loopback address and port and no proxy forwarded it (`isLocalRequest`:
 * this defeats DNS rebinding), and {@link crossSiteRefusal}. Who the caller is (session cookie or
 * forwarding secret) is checked next, by the handler.
 *
 * @example
 * ```ts
 * const refusal = consoleRefusal(request);
 * if (refusal !== undefined) return sendJson(response, 403, { error: refusal });
 * ```
 */
export function consoleRefusal(request: IncomingMessage): string | undefined {
  if (!isLocalRequest(request)) return 'local requests only';
  return crossSiteRefusal(request);
}
