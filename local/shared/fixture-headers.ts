import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { SOURCES } from '../../functions/core/sources/registry';
import type { SourcePack } from '../../functions/core/sources/types';

/** The packs to look a source up in: the registry, or another in tests of a new pack. */
type Packs = Readonly<Record<string, SourcePack>>;

/** A source's pack, or `undefined` for a name no route can have. */
const packOf = (packs: Packs, sourceName: string): SourcePack | undefined =>
  Object.hasOwn(packs, sourceName) ? packs[sourceName] : undefined;

/**
 * The headers an example payload file needs beyond its signature, inferred from its name as the
 * sender would have set them (the pack's `examples.eventHeaders`): the one place both the
 * console's template playground and `send-test` take them from. Only a file in the pack's examples
 * directory (`examples/<directory>/<event>-….json`) is read this way; any other file gets none
 * (give `--header` instead). Sources that name the event in the body (Stripe, PagerDuty, GitLab's
 * `object_kind`) need none.
 *
 * @example
 * ```ts
 * fixtureHeaders('github', 'examples/github/ping.json'); // { 'x-github-event': 'ping' }
 * fixtureHeaders('github', 'my-payload.json');                // {}
 * ```
 */
export function fixtureHeaders(sourceName: string, path: string, packs: Packs = SOURCES): Record<string, string> {
  const examples = packOf(packs, sourceName)?.examples;
  const rule = examples?.eventHeaders;
  if (rule === undefined || basename(dirname(path)) !== examples!.directory) return {};
  const name = basename(path);
  const stem = name.slice(0, name.length - (/\.(json|txt)$/.exec(name)?.[0].length ?? 0));
  return stem === '' ? {} : rule(stem);
}

/** What an example payload file may be called: no path, nothing a shell or a URL would read twice. */
const EXAMPLE_NAME = /^[\w.-]+\.json$/;

/**
 * The example JSON payloads of a source (`<fixturesDir>/<its pack's examples directory>/*.json`),
 * sorted by name; none when the directory is missing (an installed package without the examples).
 *
 * @example
 * ```ts
 * examplePayloads('examples', 'alertmanager'); // ['firing-grouped.json', 'firing-single.json', 'resolved.json']
 * ```
 */
export function examplePayloads(fixturesDir: string, sourceName: string, packs: Packs = SOURCES): string[] {
  const directory = examplesDirectory(fixturesDir, sourceName, packs);
  if (directory === undefined) return [];
  try {
    return readdirSync(directory)
      .filter((name) => EXAMPLE_NAME.test(name))
      .sort();
  } catch {
    return [];
  }
}

/**
 * Where a source's example payloads are: `<fixturesDir>/<its pack's examples directory>`, or
 * `undefined` for a name that is not a source.
 */
export function examplesDirectory(fixturesDir: string, sourceName: string, packs: Packs = SOURCES): string | undefined {
  const pack = packOf(packs, sourceName);
  return pack === undefined ? undefined : join(fixturesDir, pack.examples.directory);
}
