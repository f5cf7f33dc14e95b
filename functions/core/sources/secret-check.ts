import type { SourcePack } from './types';

/**
 * Why a secret value could never authenticate its route, or `undefined` when it can. Never quotes
 * the value.
 *
 * A pack whose secret is only ever an HMAC key (`secretKind` `key` or `whsec`) takes any value: it
 * never travels, its UTF-8 bytes key the signature, so inner or outer spaces and non-ASCII letters
 * are matched exactly as they are. A `credential` may arrive in a header or a `?token=`, where not
 * every value can arrive as it was set: HTTP strips spaces around a header value (a secret that starts
 * or ends with one could never match); control characters cannot be sent in a header at all; and
 * non-ASCII characters arrive decoded differently by different front ends (Node reads header bytes
 * as Latin-1, a sender writes UTF-8), so they are refused rather than left silently unmatchable.
 * Inner spaces are matched exactly (`checkCredential` takes the credential as sent).
 *
 * @example
 * ```ts
 * secretProblem(alertmanager, ' token'); // 'starts or ends with a space, ...'
 * secretProblem(github, ' token');       // undefined: an HMAC key is used as it is
 * ```
 */
export function secretProblem(pack: Pick<SourcePack, 'name' | 'secretKind'>, value: string): string | undefined {
  if (value === '') return 'is empty: anyone could present or sign with an empty secret';
  if (pack.secretKind !== 'credential') return undefined;
  const sent = `a ${pack.name} secret is sent as an Authorization credential`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (/[\x00-\x1f\x7f]/.test(value))
    return `has control characters (tab, new line, ...): ${sent}, and a header cannot carry them; use printable ASCII`;
  if (/[^\x20-\x7e]/.test(value))
    return `has non-ASCII characters: ${sent}, and headers do not carry them reliably (no request could match); use printable ASCII`;
  if (value.trim() !== value)
    return `starts or ends with a space: ${sent}, and HTTP strips spaces around header values (no request could match); remove them`;
  return undefined;
}

/** A route as the checks need it (a compiled route is one): its id, source and secret name. */
export interface SecretOfRoute {
  readonly id: string;
  readonly pack: Pick<SourcePack, 'name' | 'secretKind'>;
  readonly config: { readonly secret: string };
}

/**
 * One line per route whose secret is missing from `values` or could never authenticate it, naming
 * the secret by its name (never its value) and the route.
 *
 * @example
 * ```ts
 * routeSecretProblems(loaded.routes.values(), values);
 * // ['secret "alerts-token" (route alerts): has non-ASCII characters: ...']
 * ```
 */
export function routeSecretProblems(
  routes: Iterable<SecretOfRoute>,
  values: Readonly<Record<string, string>>,
): string[] {
  const problems: string[] = [];
  for (const route of routes) {
    const name = route.config.secret;
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    const problem = value === undefined ? 'is missing: add a value with this name' : secretProblem(route.pack, value);
    if (problem !== undefined) problems.push(`secret "${name}" (route ${route.id}): ${problem}`);
  }
  return problems;
}
