import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { CONSOLE_REQUEST_HEADER } from './contract';

/** The query parameter of the one-time link: `/console/?token=<one-time>`. */
export const LOGIN_PARAMETER = 'token';

/** A fresh random secret, URL- and cookie-safe. */
export function newConsoleSecret(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * Who may use one console server: browsers signed in by a one-time link, and (on the runtime) the
 * standalone `sms-relay console`, which forwards with a secret of its own.
 */
export interface ConsoleAccess {
  /**
   * A new one-time link under `base` (`http://127.0.0.1:<port>`), for the terminal: it works once,
   * until this process ends.
   */
  newLink(base: string): string;
  /** Redeems a one-time token: the new session, or `undefined` (unknown or used). */
  redeem(token: string): ConsoleSession | undefined;
  /** Whether a request's `Cookie` header holds a session of this server (cookie named for `port`): enough for the page, which holds no data. */
  hasSession(cookieHeader: string | undefined, port: string): boolean;
  /**
   * Whether a request may use the API: its cookie holds a session of this server and its
   * {@link CONSOLE_REQUEST_HEADER} is that session's page token.
   */
  hasPageSession(cookieHeader: string | undefined, port: string, pageToken: string | undefined): boolean;
  /** Whether an `Authorization` header is `Bearer <forwarding secret>`. */
  isForwarder(authorization: string | undefined): boolean;
}

/**
 * A browser's session. The cookie alone does not let in: a browser sends 127.0.0.1's cookies to
 * every port of it (cookies are scoped by host, not port), so any local server the browser visits
 * gets it. The API also needs the page token, which the sign-in page hands to the console's page
 * once (in the fragment of the URL it moves on to, never sent to a server) and the page keeps in
 * its tab's `sessionStorage`, which is the console's origin's (port included) alone.
 */
export interface ConsoleSession {
  /** The session cookie's value. */
  readonly cookie: string;
  /** What the page sends as {@link CONSOLE_REQUEST_HEADER} with every API request. */
  readonly pageToken: string;
}

export interface ConsoleAccessOptions {
  /** The secret `sms-relay console` presents to the runtime (runtime.json, mode 0600); none: no forwarding. */
  readonly forwardSecret?: string;
}

/**
 * Like Jupyter's token link, but used once: the terminal shows a link with a one-time token, opening
 * it sets an HttpOnly, SameSite=Strict session cookie, and the token is spent. The page itself
 * carries no secret, so a local process that can reach the port but cannot read the terminal or the
 * user's files gets nothing but the page explaining how to get in.
 *
 * @example
 * ```ts
 * const access = createConsoleAccess({ forwardSecret: newConsoleSecret() });
 * terminal.print(access.newLink('http://127.0.0.1:3000'));
 * ```
 */
export function createConsoleAccess({ forwardSecret }: ConsoleAccessOptions = {}): ConsoleAccess {
  const unused = new Set<string>();
  /** Each session's cookie value → its page token. */
  const sessions = new Map<string, string>();
  return {
    newLink: (base) => {
      const token = newConsoleSecret();
      unused.add(token);
      return `${base}/console/?${LOGIN_PARAMETER}=${token}`;
    },
    redeem: (token) => {
      if (!unused.delete(token)) return undefined;
      const session = { cookie: newConsoleSecret(), pageToken: newConsoleSecret() };
      sessions.set(session.cookie, session.pageToken);
      return session;
    },
    hasSession: (cookieHeader, port) => {
      const value = cookieValue(cookieHeader, sessionCookieName(port));
      return value !== undefined && sessions.has(value);
    },
    hasPageSession: (cookieHeader, port, pageToken) => {
      const value = cookieValue(cookieHeader, sessionCookieName(port));
      const expected = value === undefined ? undefined : sessions.get(value);
      return expected !== undefined && pageToken !== undefined && same(pageToken, expected);
    },
    isForwarder: (authorization) =>
      forwardSecret !== undefined && authorization !== undefined && same(authorization, `Bearer ${forwardSecret}`),
  };
}

/**
 * The session cookie's name. Browsers send a host's cookies to all its ports, so the name carries
 * the port: the runtime's console and `sms-relay console` on 127.0.0.1 keep their own sessions.
 */
export function sessionCookieName(port: string): string {
  return `sms-relay-console-${port}`;
}

/** The `Set-Cookie` value of a new session: HttpOnly, SameSite=Strict, for `/console` only, gone when the browser closes. */
export function sessionCookie(port: string, session: ConsoleSession): string {
  return `${sessionCookieName(port)}=${session.cookie}; Path=/console; HttpOnly; SameSite=Strict`;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

function same(sent: string, expected: string): boolean {
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
