/**
 * A JSON API described once, as a route map: each endpoint (`'METHOD /path'`, `:name` a path
 * parameter) with the zod schemas of its request and the type of its answer. The server reads
 * requests with the schemas; a client imports the map's type alone (`import type`), so it loads no
 * zod and still cannot ask for or expect something the server does not know. The runtime's
 * `/_relay` API (`RELAY_API`, `local/records/relay-api.ts`) is one; the console's `CONSOLE_API`
 * has the same shape.
 *
 * Only types and one helper here: a client imports it.
 */
import type { z } from 'zod';

/** One endpoint: the zod schemas of its request (path parameters, query, JSON body) and its answer's type. */
export interface RouteSpec {
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** Never set: carries the answer's type. */
  readonly answer?: unknown;
}

/** A route map: `'GET /records'` → its {@link RouteSpec}. */
export type RouteMap = Readonly<Record<`${'GET' | 'POST'} /${string}`, RouteSpec>>;

/**
 * The `answer` of a {@link RouteSpec}: a value that is never there, typed as the answer.
 *
 * @example
 * ```ts
 * const API = { 'GET /mutes': { answer: answers<{ mutes: Mute[] }>() } } as const satisfies RouteMap;
 * ```
 */
export const answers = <Answer>(): Answer | undefined => undefined;

type Schema<Spec, Part extends 'params' | 'query' | 'body'> = Spec extends {
  readonly [K in Part]: infer S extends z.ZodType;
}
  ? S
  : undefined;
type Output<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What `Spec`'s endpoint answers. */
export type AnswerOfRoute<Spec extends RouteSpec> = NonNullable<Spec['answer']>;

/** What a server's handler of `Spec`'s endpoint is given: its request as the schemas read it. */
export interface RouteRequest<Spec extends RouteSpec> {
  readonly params: Output<Schema<Spec, 'params'>>;
  readonly query: Output<Schema<Spec, 'query'>>;
  readonly body: Output<Schema<Spec, 'body'>>;
}

/** What a client sends to `Spec`'s endpoint: path parameters, query parameters (as text) and body, where it has them. */
export type RouteCall<Spec extends RouteSpec> = (Schema<Spec, 'params'> extends z.ZodType
  ? { readonly params: z.input<Schema<Spec, 'params'>> }
  : { readonly params?: never }) &
  (Schema<Spec, 'query'> extends z.ZodType
    ? { readonly query?: { readonly [K in keyof z.input<Schema<Spec, 'query'>>]?: string | number | undefined } }
    : { readonly query?: never }) &
  (Schema<Spec, 'body'> extends z.ZodType
    ? { readonly body: z.input<Schema<Spec, 'body'>> }
    : { readonly body?: never });

/**
 * The path, with its parameters filled in, and the query string of a call to `endpoint`
 * (`'GET /records/:id'`); empty query values are left out.
 *
 * @example
 * ```ts
 * routeTarget('GET /records', { query: { state: 'PARKED', route: undefined } }); // { method: 'GET', target: '/records?state=PARKED' }
 * ```
 */
export function routeTarget(
  endpoint: string,
  {
    params,
    query,
  }: {
    readonly params?: Readonly<Record<string, string>> | undefined;
    readonly query?: Readonly<Record<string, string | number | undefined>> | undefined;
  } = {},
): { readonly method: string; readonly target: string } {
  const space = endpoint.indexOf(' ');
  const path = endpoint
    .slice(space + 1)
    .replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params?.[name] ?? ''));
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {}))
    if (value !== undefined && value !== '') search.set(key, String(value));
  const qs = search.toString();
  return { method: endpoint.slice(0, space), target: `${path}${qs === '' ? '' : `?${qs}`}` };
}
