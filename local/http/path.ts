/**
 * The path of a request target, without query string or fragment, as sent (not decoded).
 * Deliberately not `new URL(...)`: it would read `//host/x` as a host and resolve `..`.
 *
 * @example
 * ```ts
 * requestPath('/v1/account/balance?x=1'); // '/v1/account/balance'
 * ```
 */
export function requestPath(target: string | undefined): string {
  const raw = target ?? '/';
  const end = raw.search(/[?#]/);
  return end === -1 ? raw : raw.slice(0, end);
}

/**
 * The raw query string of a request target (without `?` and fragment), `''` when there is none.
 *
 * @example
 * ```ts
 * requestQuery('/_relay/records?state=PARKED&limit=5'); // 'state=PARKED&limit=5'
 * new URLSearchParams(requestQuery(request.url)).get('state'); // 'PARKED'
 * ```
 */
export function requestQuery(target: string | undefined): string {
  const raw = target ?? '/';
  const fragment = raw.indexOf('#');
  const end = fragment === -1 ? raw.length : fragment;
  const start = raw.indexOf('?');
  return start === -1 || start > end ? '' : raw.slice(start + 1, end);
}

/** Whether `path` is `prefix` or lies below it (`/console`, `/console/…`, not `/consoles`). */
export function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** The `:name` segments of a path pattern, as an object type: `PathParams<'/records/:id'>` is `{ id: string }`. */
export type PathParams<Pattern extends string> = Pattern extends `${string}:${infer Name}/${infer Rest}`
  ? { readonly [Key in Name]: string } & PathParams<`/${Rest}`>
  : Pattern extends `${string}:${infer Name}`
    ? { readonly [Key in Name]: string }
    : Record<never, never>;

/**
 * Matches `path` against a pattern whose `:name` segments each take one non-empty segment, and
 * returns them decoded, or `undefined` when it does not match (a malformed `%` escape does not
 * match either).
 *
 * @example
 * ```ts
 * matchPath('/records/:id/redrive', '/records/01J0ABC/redrive'); // { id: '01J0ABC' }
 * matchPath('/records/:id', '/records/a/b'); // undefined
 * ```
 */
export function matchPath<Pattern extends string>(pattern: Pattern, path: string): PathParams<Pattern> | undefined {
  const wanted = pattern.split('/');
  const given = path.split('/');
  if (wanted.length !== given.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, segment] of wanted.entries()) {
    const value = given[index]!;
    if (!segment.startsWith(':')) {
      if (segment !== value) return undefined;
      continue;
    }
    if (value === '') return undefined;
    try {
      params[segment.slice(1)] = decodeURIComponent(value);
    } catch {
      return undefined;
    }
  }
  return params as PathParams<Pattern>;
}
