import { matchPath, type PathParams } from './path';

/** The pattern of a route key: `'GET /records/:id'` → `'/records/:id'`. */
export type PatternOf<Key extends string> = Key extends `${string} ${infer Pattern}` ? Pattern : never;

/**
 * A server's route table: one line per route, `'METHOD /path'` (`:name` a path parameter) → its
 * handler, given the server's `Call` and the route's path parameters, typed from the key.
 */
export type RouteTable<Keys extends string, Call, Answer = void> = {
  readonly [Key in Keys]: (call: Call, params: PathParams<PatternOf<Key>>) => Promise<Answer> | Answer;
};

/** What a request's method and path find in a table: a handler and its parameters, the methods the path takes (405), or nothing (404). */
export type RouteMatch<Handler> =
  | { readonly handler: Handler; readonly params: Readonly<Record<string, string>>; readonly key: string }
  | { readonly handler?: undefined; readonly allowed: readonly string[] }
  | undefined;

export interface RouterOptions {
  /**
   * Whether a `HEAD` takes a path's `GET` route (the answer's body is the server's to drop).
   * @default false: a `HEAD` needs its own line
   */
  readonly headAsGet?: boolean;
}

/**
 * Builds the table of `routes` with its parameters typed from each key; `Call` is what every
 * handler of the server gets (its request, response, dependencies).
 *
 * @example
 * ```ts
 * const ROUTES = routeTable<ApiCall>()({
 *   'GET /records/:id': async (call, { id }) => await read(call, id),
 * });
 * ```
 */
export function routeTable<Call, Answer = void>() {
  return <const Keys extends string>(routes: RouteTable<Keys, Call, Answer>): RouteTable<Keys, Call, Answer> => routes;
}

/**
 * The lookup of a route table, its keys parsed once: the route of a method and path, or the
 * methods its path takes, or `undefined`. Routes are tried in table order.
 *
 * @example
 * ```ts
 * const route = createRouter(ROUTES);
 * const found = route('GET', '/records/01J0ABC'); // { handler, params: { id: '01J0ABC' }, key: 'GET /records/:id' }
 * route('PUT', '/records/01J0ABC'); // { allowed: ['GET'] }
 * ```
 */
export function createRouter<Handler>(
  routes: Readonly<Record<string, Handler>>,
  { headAsGet = false }: RouterOptions = {},
): (method: string, path: string) => RouteMatch<Handler> {
  const parsed = Object.entries(routes).map(([key, handler]) => {
    const space = key.indexOf(' ');
    return { key, handler, method: key.slice(0, space), pattern: key.slice(space + 1) };
  });
  return (method, path) => {
    const allowed: string[] = [];
    for (const route of parsed) {
      const params = matchPath(route.pattern, path);
      if (params === undefined) continue;
      if (route.method === method || (headAsGet && method === 'HEAD' && route.method === 'GET'))
        return { handler: route.handler, params, key: route.key };
      if (!allowed.includes(route.method)) allowed.push(route.method);
    }
    return allowed.length === 0 ? undefined : { allowed };
  };
}
