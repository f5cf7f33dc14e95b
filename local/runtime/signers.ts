import { SOURCES } from '../../functions/core/sources/registry';
import type { SignInput, SourcePack } from '../../functions/core/sources/types';
import { RuntimeError } from '../shared/errors';

export type { SignInput } from '../../functions/core/sources/types';

/**
 * The full header set for posting `body` as `source` would: a content type guessed from the body
 * (JSON, or form-encoded such as GitHub's `payload=`), the source's signature headers (its pack's
 * `sign`), then the caller's own headers, which win. `packs` is the registry to find `source` in
 * (another only in tests of a new pack).
 *
 * @throws {RuntimeError} no pack for `source`
 *
 * @example
 * ```ts
 * const headers = signWebhook('github', { body, secret, headers: { 'X-GitHub-Event': 'issues' } });
 * await fetch(`${url}/hooks/github`, { method: 'POST', headers, body });
 * ```
 */
export function signWebhook(
  source: string,
  input: SignInput,
  packs: Readonly<Record<string, SourcePack>> = SOURCES,
): Record<string, string> {
  if (!Object.hasOwn(packs, source))
    throw new RuntimeError(`no signer for source "${source}"; known sources: ${Object.keys(packs).join(', ')}`);
  const generated: Record<string, string> = {
    'Content-Type': contentTypeOf(input.body),
    ...packs[source]!.sign(input),
  };
  const own = input.headers ?? {};
  const ownNames = new Set(Object.keys(own).map((name) => name.toLowerCase()));
  return {
    ...Object.fromEntries(Object.entries(generated).filter(([name]) => !ownNames.has(name.toLowerCase()))),
    ...own,
  };
}

function contentTypeOf(body: Uint8Array): string {
  const start = Buffer.from(body.subarray(0, 64)).toString('utf8').trimStart();
  if (start.startsWith('{') || start.startsWith('[')) return 'application/json';
  if (/^[\w.%+-]+=/.test(start)) return 'application/x-www-form-urlencoded';
  return 'text/plain';
}
