/**
 * The console's calls to `/console/api/*`, typed by the route map: `api('GET /records/:id', { params: { id } })`
 * answers a `RecordDetail`. Every call carries the tab's page token; POSTs send JSON.
 */
import type {
  AnswerOf,
  ClientRequest,
  CONSOLE_REQUEST_HEADER,
  Endpoint,
  PAGE_TOKEN_FRAGMENT,
  PAGE_TOKEN_KEY,
} from '../contract';
import { routeTarget } from '../../http/route-map';

// Type-only imports keep the server's modules out of the bundle; the annotations make the type
// check fail if the server's names change.
const REQUEST_HEADER: typeof CONSOLE_REQUEST_HEADER = 'x-sms-relay-console';
const TOKEN_FRAGMENT: typeof PAGE_TOKEN_FRAGMENT = 'session=';
const TOKEN_KEY: typeof PAGE_TOKEN_KEY = 'sms-relay-console-page-token';

/**
 * Takes the page token the sign-in page moved on with (`/console#session=<token>`) into this tab's
 * `sessionStorage`, and takes it out of the address bar. Called once, before the first request.
 * The session cookie alone does not reach the API: every port of 127.0.0.1 receives it.
 */
export function adoptPageToken(): void {
  const { hash, pathname, search } = window.location;
  if (!hash.startsWith(`#${TOKEN_FRAGMENT}`)) return;
  window.sessionStorage.setItem(TOKEN_KEY, hash.slice(TOKEN_FRAGMENT.length + 1));
  window.history.replaceState(null, '', `${pathname}${search}`);
}

/** A failed call, with a message fit to show. `aborted` when the caller cancelled it. */
export class ApiError extends Error {
  readonly aborted: boolean;

  constructor(
    message: string,
    readonly status: number | null,
    { aborted = false, cause }: { readonly aborted?: boolean; readonly cause?: unknown } = {},
  ) {
    super(message, { cause });
    this.name = 'ApiError';
    this.aborted = aborted;
  }
}

async function call<T>(url: string, init: RequestInit): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, credentials: 'same-origin', cache: 'no-store' });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError')
      throw new ApiError('cancelled', null, { aborted: true, cause: error });
    throw new ApiError(
      `The relay did not answer (${error instanceof Error ? error.message : String(error)}). Is it still running?`,
      null,
      { cause: error },
    );
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError')
      throw new ApiError('cancelled', null, { aborted: true, cause: error });
    throw new ApiError(`The answer of ${url} was cut off.`, response.status, { cause: error });
  }
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const message =
      body && typeof body === 'object' && 'error' in body && typeof (body as { error: unknown }).error === 'string'
        ? (body as { error: string }).error
        : text.slice(0, 200) || response.statusText;
    throw new ApiError(`${response.status}: ${message}`, response.status);
  }
  if (body === undefined) throw new ApiError(`${url} answered ${response.status} without JSON.`, response.status);
  return body as T;
}

/** A request to `endpoint` and how to cancel it. */
export type Request<E extends Endpoint> = ClientRequest<E> & { readonly signal?: AbortSignal };
type Arguments<E extends Endpoint> =
  Record<never, never> extends ClientRequest<E> ? [request?: Request<E>] : [request: Request<E>];

/** Calls `endpoint` (`METHOD /path` of the route map) with its path parameters, query and body. */
export function api<E extends Endpoint>(endpoint: E, ...[request]: Arguments<E>): Promise<AnswerOf<E>> {
  const { params, query, body, signal } = (request ?? {}) as {
    params?: Record<string, string>;
    query?: Record<string, string | number | undefined>;
    body?: unknown;
    signal?: AbortSignal;
  };
  const { method, target } = routeTarget(endpoint, { params, query });
  const url = `/console/api${target}`;
  const headers: Record<string, string> = { accept: 'application/json' };
  const pageToken = window.sessionStorage.getItem(TOKEN_KEY);
  if (pageToken !== null) headers[REQUEST_HEADER] = pageToken;
  if (method === 'POST') headers['content-type'] = 'application/json';
  return call<AnswerOf<E>>(url, {
    method,
    headers,
    signal: signal ?? null,
    ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
  });
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
