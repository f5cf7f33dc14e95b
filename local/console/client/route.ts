/**
 * Hash routing over the page table (`pages.tsx`): a page's `path` is its place after `#/`, with
 * `:name` segments for parameters (`records/:id`). This module knows no page, so pages can link to
 * each other through it without importing the table that imports them.
 */
import { useEffect, useState } from 'preact/hooks';

/** The parameters a path names: `records/:id` → `{ id: string }`. */
export type PathParams<Path extends string> = Path extends `${infer Head}/${infer Rest}`
  ? PathParams<Head> & PathParams<Rest>
  : Path extends `:${infer Name}`
    ? { readonly [K in Name]: string }
    : Record<never, never>;

/** The path of the record page, which Activity and other records link to. */
export const RECORD_PATH = 'records/:id';
/** The path of Activity, which the record page and Routes link to (and which an unknown hash shows). */
export const ACTIVITY_PATH = 'activity';

/** The segments of a hash (`#/records/x`, `#records/x` or `records/x`). */
function segmentsOf(hash: string): string[] {
  return hash.replace(/^#\/?/, '').split('/');
}

/**
 * The parameters of `hash` when it is a place of `path`, else `undefined`. A path's literal
 * segments must match; its last parameter takes the rest of the hash (slashes included, decoded;
 * kept as typed when it is not valid percent-encoding) and must not be empty; segments after a
 * path without parameters are ignored (`#/credit/x` is Credit).
 */
export function matchPath<Path extends string>(path: Path, hash: string): PathParams<Path> | undefined {
  const wanted = path.split('/');
  const given = segmentsOf(hash);
  const params: Record<string, string> = {};
  for (const [index, segment] of wanted.entries()) {
    if (!segment.startsWith(':')) {
      if (given[index] !== segment) return undefined;
      continue;
    }
    const last = index === wanted.length - 1;
    const raw = last ? given.slice(index).join('/') : (given[index] ?? '');
    if (raw === '') return undefined;
    params[segment.slice(1)] = decoded(raw);
  }
  return params as PathParams<Path>;
}

function decoded(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The link to a place: `hrefOf(RECORD_PATH, { id })` → `#/records/<id, encoded>`. */
export function hrefOf<Path extends string>(path: Path, params: PathParams<Path>): string {
  const values = params as Readonly<Record<string, string>>;
  return `#/${path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? encodeURIComponent(values[segment.slice(1)] ?? '') : segment))
    .join('/')}`;
}

/** The link to a record's page. */
export function recordHref(id: string): string {
  return hrefOf(RECORD_PATH, { id });
}

/** The link to Activity. */
export const ACTIVITY_HREF = hrefOf(ACTIVITY_PATH, {});

/** The location's hash, kept current. */
export function useHash(): string {
  const [hash, setHash] = useState(() => window.location.hash);
  useEffect(() => {
    const onChange = () => setHash(window.location.hash);
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}
