import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES } from '../../functions/core/defaults';
import type { ConsoleApi } from './api';
import { LOGIN_PARAMETER, sessionCookie, type ConsoleAccess } from './access';
import { buildConsoleAssets, CHUNK_NAME, type ConsoleAssets, renderConsolePage } from './assets';
import { escapeHtml } from '../../functions/core/html';
import {
  consoleRefusal,
  createRouter,
  HttpError,
  isUnder,
  parseJson,
  readBody,
  requestQuery,
  routeTable,
  sendJson,
  sendText,
} from '../http';
import { CONSOLE_REQUEST_HEADER, PAGE_TOKEN_FRAGMENT } from './contract';

/** Everything of the console lives under this path, on the runtime and on `sms-relay console`. */
export const CONSOLE_PATH = '/console';
const API_PREFIX = `${CONSOLE_PATH}/api`;
/** A preview request: a pasted payload as large as a webhook may be, plus room for its template, headers and the rest. */
const MAX_API_BODY_BYTES = MAX_BODY_BYTES + 44 * 1024;

/** Headers of every console answer: nothing framed, sniffed, cached or loaded from elsewhere. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

/** A chunk's caching: its name changes with its contents, and it is this signed-in user's. */
const CHUNK_CACHING = 'private, max-age=31536000, immutable';

/** Whether a request path belongs to the console. */
export function isConsolePath(path: string): boolean {
  return isUnder(path, CONSOLE_PATH);
}

export interface ConsoleHandlerOptions {
  /** Who may come in: sessions of one-time links, and the forwarding secret (see `createConsoleAccess`). */
  readonly access: ConsoleAccess;
  readonly api: ConsoleApi;
  /** Told when a one-time link was used, so the terminal can show a fresh one for the next browser. */
  readonly onSignIn?: () => void;
  /** Called with unexpected errors (answered 500 without details). */
  readonly onError?: (error: unknown) => void;
}

/**
 * Serves the console: the one-time link, the page, its bundled script and stylesheet, and
 * `/console/api/*`. Every request must pass `consoleRefusal` (loopback Host, same Origin), else 403;
 * then it needs a session cookie (or, from `sms-relay console`, the forwarding secret), else 401
 * with a page saying how to get in. A browser's API request also needs its page token as
 * {@link CONSOLE_REQUEST_HEADER} (see `ConsoleSession`: the cookie reaches every port of 127.0.0.1),
 * else 401; every POST needs `content-type: application/json`.
 *
 * @example
 * ```ts
 * const handleConsole = createConsoleHandler({ access, api: createStoreApi(source) });
 * if (isConsolePath(path)) return await handleConsole(request, response, path);
 * ```
 */
export function createConsoleHandler({
  access,
  api,
  onSignIn,
  onError,
}: ConsoleHandlerOptions): (request: IncomingMessage, response: ServerResponse, path: string) => Promise<void> {
  return async (request, response, path) => {
    const refusal = consoleRefusal(request);
    if (refusal !== undefined) {
      request.resume();
      return send(response, 403, 'application/json; charset=utf-8', JSON.stringify({ error: refusal }));
    }
    const port = String(request.socket.localPort);
    const page = path === CONSOLE_PATH || path === `${CONSOLE_PATH}/`;
    const oneTime = new URLSearchParams(requestQuery(request.url)).get(LOGIN_PARAMETER);
    if (page && oneTime !== null) {
      request.resume();
      const session = access.redeem(oneTime);
      if (session === undefined)
        return send(
          response,
          403,
          'text/html; charset=utf-8',
          signInPage('This sign-in link was already used, or belongs to an earlier run.'),
        );
      onSignIn?.();
      // A page that moves on by itself rather than a 30x: after a 30x that a link on another site
      // started, a browser would not send the SameSite=Strict cookie it was just given.
      return send(response, 200, 'text/html; charset=utf-8', signedInPage(session.pageToken), {
        'set-cookie': sessionCookie(port, session),
      });
    }
    const forwarder = access.isForwarder(request.headers.authorization);
    if (!forwarder && !access.hasSession(request.headers.cookie, port)) {
      request.resume();
      if (page)
        return send(
          response,
          401,
          'text/html; charset=utf-8',
          signInPage('This browser is not signed in to the console.'),
        );
      return json(response, 401, { error: 'not signed in: open the one-time console link printed in the terminal' });
    }
    const apiRequest = isUnder(path, API_PREFIX);
    if (
      apiRequest &&
      !forwarder &&
      !access.hasPageSession(request.headers.cookie, port, headerValue(request.headers[CONSOLE_REQUEST_HEADER]))
    ) {
      request.resume();
      return json(response, 401, {
        error:
          'this page is not signed in: open a one-time console link printed in the terminal (each browser tab signs in with its own)',
      });
    }
    if ((request.method ?? 'GET') === 'POST') {
      if (!(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
        request.resume();
        return json(response, 403, { error: 'send application/json' });
      }
    }
    const method = request.method ?? 'GET';
    if (apiRequest) {
      try {
        let body: unknown;
        if (method === 'POST') {
          const bytes = await readBody(request, {
            limitBytes: MAX_API_BODY_BYTES,
            tooLarge: `body over ${MAX_API_BODY_BYTES} bytes`,
          });
          body = bytes.length === 0 ? {} : parseJson(bytes, { invalid: 'the body is not valid JSON' });
        } else {
          request.resume();
        }
        const answer = await api({
          method,
          path: path.slice(API_PREFIX.length) || '/',
          query: new URLSearchParams(requestQuery(request.url)),
          body,
        });
        return json(response, answer.status, answer.body);
      } catch (error) {
        if (error instanceof HttpError) return json(response, error.status, { error: error.message });
        // A client that hung up mid-body is the server's to drop, not an error of the console.
        if (!request.complete) throw error;
        onError?.(error);
        return json(response, 500, { error: 'internal error; see the terminal' });
      }
    }
    request.resume();
    const found = pageRoute(method, path);
    if (found?.handler !== undefined) return await found.handler({ response, onError }, found.params);
    const file = chunkOf(method, path);
    if (file !== undefined) return await chunk({ response, onError }, file);
    if (method !== 'GET' && method !== 'HEAD') return json(response, 405, { error: 'method not allowed; use GET' });
    return json(response, 404, { error: `not found: ${path}` });
  };
}

/** What each page route gets. */
interface PageCall {
  readonly response: ServerResponse;
  readonly onError: ((error: unknown) => void) | undefined;
}

/** The page and its bundled script and stylesheet (the chunks: `chunkOf`); the API is `CONSOLE_API` (`api.ts`). */
const PAGE_ROUTES = routeTable<PageCall>()({
  'GET /console': consolePage,
  'GET /console/': consolePage,
  'GET /console/app.js': async (call) => await asset(call, 'js'),
  'GET /console/app.css': async (call) => await asset(call, 'css'),
});
const pageRoute = createRouter(PAGE_ROUTES, { headAsGet: true });

async function consolePage({ response }: PageCall): Promise<void> {
  // A build that failed is told by the script's answer (500, and onError); the page is served anyway.
  const assets = await buildConsoleAssets().catch(() => undefined);
  send(response, 200, 'text/html; charset=utf-8', renderConsolePage(assets?.entryImports));
}

async function asset({ response, onError }: PageCall, kind: 'js' | 'css'): Promise<void> {
  try {
    const assets = await buildConsoleAssets();
    if (kind === 'js') send(response, 200, 'text/javascript; charset=utf-8', assets.js);
    else send(response, 200, 'text/css; charset=utf-8', assets.css);
  } catch (error) {
    onError?.(error);
    json(response, 500, { error: 'the console could not be built; see the terminal' });
  }
}

/** The chunk a `GET /console/chunk-<hash>.js` asks for (beside the table: its name is a pattern, not a parameter). */
function chunkOf(method: string, path: string): string | undefined {
  const file = path.slice(CONSOLE_PATH.length + 1);
  return (method === 'GET' || method === 'HEAD') && isUnder(path, CONSOLE_PATH) && CHUNK_NAME.test(file)
    ? file
    : undefined;
}

/**
 * A chunk of the bundle, by the name the entry imports it by. Its name is its contents' hash, so a
 * browser may keep it (for this user only) instead of asking again: a console of other code imports
 * other names. The entry and the stylesheet are asked again at each visit.
 */
async function chunk({ response, onError }: PageCall, file: string): Promise<void> {
  let assets: ConsoleAssets;
  try {
    assets = await buildConsoleAssets();
  } catch (error) {
    onError?.(error);
    return json(response, 500, { error: 'the console could not be built; see the terminal' });
  }
  const text = assets.chunks.get(file);
  if (text === undefined) return json(response, 404, { error: `not found: ${CONSOLE_PATH}/${file}` });
  send(response, 200, 'text/javascript; charset=utf-8', text, { 'cache-control': CHUNK_CACHING });
}

function json(response: ServerResponse, status: number, body: unknown): void {
  sendJson(response, status, body, { headers: SECURITY_HEADERS });
}

function send(
  response: ServerResponse,
  status: number,
  type: string,
  text: string,
  headers: Record<string, string> = {},
): void {
  sendText(response, status, text, { type, headers: { ...SECURITY_HEADERS, ...headers } });
}

/** The small page for a browser without a session: how to get in. */
function signInPage(problem: string): string {
  return htmlPage('sms-relay console: sign in', [
    `<h1>sms-relay console</h1>`,
    `<p>${escapeHtml(problem)}</p>`,
    '<p>Open the one-time link printed in the terminal where <code>npm start</code> (or <code>npx sms-relay console</code>) runs. ' +
      `It looks like <code>http://127.0.0.1:&lt;port&gt;/console/?${LOGIN_PARAMETER}=…</code>. Each link works once: ` +
      'when one is used, the terminal prints a fresh one for the next browser, and a restart prints a new one.</p>',
  ]);
}

/** Moves on to the console with the page token in the fragment, which no server receives: the page keeps it (client/api.ts). */
function signedInPage(pageToken: string): string {
  const next = `/console#${PAGE_TOKEN_FRAGMENT}${pageToken}`;
  return htmlPage(
    'sms-relay console: signed in',
    [`<p>Signed in. <a href="${next}">Open the console</a>.</p>`],
    [`<meta http-equiv="refresh" content="0; url=${next}">`],
  );
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? undefined : value;
}

function htmlPage(title: string, body: readonly string[], head: readonly string[] = []): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="referrer" content="no-referrer">',
    ...head,
    `<title>${escapeHtml(title)}</title>`,
    '</head>',
    '<body>',
    ...body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
