import { MAX_BODY_BYTES } from '../core/defaults';
import type { IngestAnswer, IngestRequest } from './ingest';
import type { ApiAnswer, ApiCall } from './opsgenie-api';
import { type AckPageConfig, type AckPageStore, answerAck, type PageResponse } from './ack-page';

export { isAckPath, type PageResponse } from './ack-page';

/** The URL path webhooks are posted to, `/hooks/{route}`, and the paths below it (a source's API: `/hooks/{route}/v2/…`). */
const HOOK_PATH = /^\/hooks\/([^/]+)(?:\/(.*))?$/;

/** An HTTP request as either platform hands it over, before any webhook-specific reading. */
export interface EdgeRequest {
  readonly method: string;
  /** The URL path without the query string. */
  readonly path: string;
  /** Header pairs in arrival order; names in any case, a repeated name once per value. */
  readonly headers: Iterable<readonly [string, string]>;
  /** The raw query string, without `?`. */
  readonly query: string;
  /**
   * Reads the body bytes, or `undefined` when reading stopped at the cap (see
   * `EdgeOptions.maxBodyBytes`); called only once the path and method are right.
   */
  readonly body: () => Promise<Uint8Array | undefined>;
  readonly receivedAt: Date;
}

/** The answer to send: status, extra headers (besides the JSON content type) and the JSON body. */
export interface EdgeResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  /** The route named in the path, once the path named one. */
  readonly route?: string;
  /** The ingest answer, when ingest answered (absent for 404, 405, a 413 while reading and a 503). */
  readonly answer?: IngestAnswer;
}

export interface EdgeOptions {
  /** The body cap named in the 413 when an adapter that reads a stream stopped at it (`body: undefined`). */
  readonly maxBodyBytes?: number;
  /** Told of a throw from ingest, which the sender sees only as a 503 (the details stay in the log). */
  readonly onError?: (route: string, error: unknown) => void;
  /**
   * Answers a path below a route's URL (`answerOpsgenieApi` for an `opsgenie` route), or
   * `undefined` for a route that has no API there. Absent: every such path is 404.
   */
  readonly api?: (
    call: ApiCall,
    ingest: (webhook: IngestRequest) => Promise<IngestAnswer>,
  ) => Promise<ApiAnswer | undefined>;
}

/** The answer to a failed record: the sender retries, and the dedupe guard records the retry once. */
export const NOT_RECORDED = { error: 'the relay could not record this webhook; please retry' } as const;

/**
 * The webhook endpoint, free of any platform: `POST /hooks/{route}` to `ingest`, and a path below
 * it to the route's API (`options.api`; 404 where there is none), with the same method and path
 * checks, body cap, header and query normalisation and 503 on a throw for the Lambda handler and
 * the local runtime, which only translate their request and response to and from these shapes.
 * `route` is `undefined` when the path is not a webhook path at all.
 *
 * @example
 * ```ts
 * const response = await answerWebhook({ method: 'POST', path: '/hooks/alerts', headers, query: '', body, receivedAt }, ingest, { maxBodyBytes });
 * ```
 */
export async function answerWebhook(
  request: EdgeRequest,
  ingest: (webhook: IngestRequest) => Promise<IngestAnswer>,
  { maxBodyBytes = MAX_BODY_BYTES, onError, api }: EdgeOptions = {},
): Promise<EdgeResponse> {
  const hook = HOOK_PATH.exec(request.path);
  const notFound = noRouteAt(request.path);
  if (hook === null) return notFound;
  const route = decodeRoute(hook[1]!);
  if (hook[2] !== undefined)
    return api === undefined
      ? notFound
      : await answerApi(request, route, hook[2], ingest, { maxBodyBytes, onError, api });
  if (request.method.toUpperCase() !== 'POST')
    return { ...json(405, { error: 'method not allowed; use POST' }, { allow: 'POST' }), route };
  const body = await request.body();
  // A body read whole goes on to ingest, which refuses an oversized one per route (and counts it).
  if (body === undefined) return { ...json(413, { error: `body exceeds the limit of ${maxBodyBytes} bytes` }), route };
  try {
    const answer = await ingest(webhookOf(request, route, body));
    return { status: answer.status, headers: {}, body: answer.body, route, answer };
  } catch (error) {
    onError?.(route, error);
    return { ...json(503, { ...NOT_RECORDED }), route };
  }
}

/** A path below a route's URL: its API's answer, or 404 when the route has none there. */
async function answerApi(
  request: EdgeRequest,
  route: string,
  subPath: string,
  ingest: (webhook: IngestRequest) => Promise<IngestAnswer>,
  { maxBodyBytes, onError, api }: Required<Pick<EdgeOptions, 'maxBodyBytes' | 'api'>> & Pick<EdgeOptions, 'onError'>,
): Promise<EdgeResponse> {
  const body = await request.body();
  if (body === undefined)
    return { ...json(413, { message: `body exceeds the limit of ${maxBodyBytes} bytes` }), route };
  try {
    const answer = await api({ method: request.method, subPath, request: webhookOf(request, route, body) }, ingest);
    if (answer === undefined) return { ...noRouteAt(request.path), route };
    return {
      status: answer.status,
      headers: {},
      body: answer.body,
      route,
      ...(answer.answer === undefined ? {} : { answer: answer.answer }),
    };
  } catch (error) {
    onError?.(route, error);
    return { ...json(503, { ...NOT_RECORDED }), route };
  }
}

/** What `ingest` reads of a request to a route: its body, normalised headers and query, and arrival. */
function webhookOf(request: EdgeRequest, routeId: string, body: Uint8Array): IngestRequest {
  return {
    routeId,
    body,
    headers: headersOf(request.headers),
    query: queryOf(request.query),
    receivedAt: request.receivedAt,
  };
}

const noRouteAt = (path: string): EdgeResponse => json(404, { error: `no route at ${path}; post to /hooks/<route>` });

/** Whether a path is a webhook path (`/hooks` or below it), which `answerWebhook` answers even when it names no route. */
export function isHookPath(path: string): boolean {
  return path === '/hooks' || path.startsWith('/hooks/');
}

/**
 * Lower-cased names, a repeated header's values joined by `, ` as HTTP (RFC 9110 §5.3) and API
 * Gateway do. No verifier reads a repeated header as valid: a doubled signature fails either way.
 */
function headersOf(pairs: Iterable<readonly [string, string]>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    headers[key] = Object.hasOwn(headers, key) ? `${headers[key]}, ${value}` : value;
  }
  return headers;
}

/** The first value of each parameter (a joined list could not be split back when a value holds a comma). */
function queryOf(raw: string): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(raw)) if (!Object.hasOwn(query, name)) query[name] = value;
  return query;
}

function decodeRoute(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): EdgeResponse {
  return { status, headers, body };
}

/**
 * The acknowledge link, `GET` and `POST /a/{token}` (paging): the same page for the Lambda handler
 * and the local runtime, which send its HTML as it is. Public like `/hooks`: the token is the only
 * credential, and a GET never acts; a POST from another site is refused. The body of a POST is not
 * read (the form sends none). With `config`, the page names people and says who is paged next.
 *
 * @example
 * ```ts
 * if (isAckPath(request.path)) return await answerAckLink(request, store, loaded);
 * ```
 */
export async function answerAckLink(
  request: Pick<EdgeRequest, 'method' | 'path' | 'receivedAt'> & Partial<Pick<EdgeRequest, 'headers'>>,
  store: AckPageStore,
  config?: AckPageConfig,
): Promise<PageResponse> {
  return await answerAck(store, {
    method: request.method,
    path: request.path,
    now: request.receivedAt,
    headers: headersOf(request.headers ?? []),
    ...(config === undefined ? {} : { config }),
  });
}
