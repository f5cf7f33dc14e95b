/** The console's calls to `/console/api/*`: GETs with fetch, POSTs with JSON and the anti-forgery header. */
import type { CONSOLE_REQUEST_HEADER } from '../contract';

// Type-only imports keep the server's module out of the bundle; the annotation makes the type
// check fail if the contract's name changes.
const REQUEST_HEADER: typeof CONSOLE_REQUEST_HEADER = 'x-sms-relay-console';

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

export type Query = Readonly<Record<string, string | number | null | undefined>>;

export function apiPath(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const qs = params.toString();
  return `/console/api/${path}${qs ? `?${qs}` : ''}`;
}

async function call<T>(url: string, init: RequestInit): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, credentials: 'same-origin', cache: 'no-store' });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw new ApiError('cancelled', null, { aborted: true, cause: error });
    throw new ApiError(`The relay did not answer (${error instanceof Error ? error.message : String(error)}). Is it still running?`, null, { cause: error });
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw new ApiError('cancelled', null, { aborted: true, cause: error });
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

export function get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
  return call<T>(apiPath(path, query), { method: 'GET', headers: { accept: 'application/json' }, signal: signal ?? null });
}

export function post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  return call<T>(apiPath(path), {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', [REQUEST_HEADER]: 'fetch' },
    body: JSON.stringify(body),
    signal: signal ?? null,
  });
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
