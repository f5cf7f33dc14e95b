import type { IncomingMessage } from 'node:http';

/** Headers a proxy or tunnel adds: a request carrying one came from further away than loopback. */
const FORWARDING_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-real-ip',
  'cf-connecting-ip',
] as const;

/**
 * Whether a request may use a local-only endpoint: its `Host` names the loopback address and the
 * port it reached (`127.0.0.1:<port>`, `localhost:<port>` or `[::1]:<port>`), which a page on
 * another site cannot make a browser send (DNS rebinding), and no proxy or tunnel forwarded it.
 *
 * @example
 * ```ts
 * if (!isLocalRequest(request)) return sendJson(response, 403, { error: 'local requests only' });
 * ```
 */
export function isLocalRequest(request: IncomingMessage): boolean {
  const port = request.socket.localPort;
  const host = request.headers.host;
  if (port === undefined || host === undefined) return false;
  if (FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined)) return false;
  return host === `127.0.0.1:${port}` || host === `localhost:${port}` || host === `[::1]:${port}`;
}

/**
 * Why a browser request from another site is refused, or `undefined`: a browser's `Origin` and
 * `Sec-Fetch-Site`, when sent, must say this same origin. The console and `/_relay/*` both check
 * this: a page of any site can make the browser send a request to 127.0.0.1.
 *
 * @example
 * ```ts
 * const refusal = crossSiteRefusal(request);
 * if (refusal !== undefined) return sendJson(response, 403, { error: refusal });
 * ```
 */
export function crossSiteRefusal(request: IncomingMessage): string | undefined {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `http://${request.headers.host}`)
    return `foreign origin ${JSON.stringify(origin)}`;
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `cross-site request (${site})`;
  return undefined;
}

/**
 * Why a request to an endpoint for this machine's browser and programs (the console, the runtime's
 * `/_relay/*`) is refused before anyone is identified, or `undefined` when it may go on: the
 * `Host` names this loopback address and port and no proxy forwarded it (`isLocalRequest`: this
 * defeats DNS rebinding), and {@link crossSiteRefusal}. Who the caller is (the console's session
 * cookie or forwarding secret) is checked next, by the handler.
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

/**
 * Whether the peer's address is loopback: for endpoints that answer this machine only, even on a
 * server that listens wider (the sandbox's `/_sandbox/*`).
 *
 * @example
 * ```ts
 * isLoopbackAddress(request.socket.remoteAddress); // true for 127.0.0.1, ::1, ::ffff:127.0.0.1
 * ```
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}
