/**
 * Starts the `sms-relay` CLI (`bin/sms-relay.mjs`). Plain JavaScript, so that choosing costs
 * nothing to compile.
 *
 * The CLI runs from its build in `dist/cli` (made by `npm run build`, which `npm ci` runs as
 * the package's `prepare` script), when that build is of the sources as they are now: the build's
 * manifest lists every file it was made from with one hash of their contents, and the hash is
 * taken again here, a few milliseconds. Otherwise (no build, or a file changed since) the
 * TypeScript sources run through tsx, as slow as ever but never out of date; on a terminal a line
 * on stderr says so. A build is never run against sources it was not made from.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Where the build goes, relative to the repository root; git-ignored with the rest of dist/. */
export const BUILD_DIR = 'dist/cli';
export const ENTRY_FILE = 'main.mjs';
export const MANIFEST_FILE = 'manifest.json';
/** The sources, run through tsx when there is no usable build. */
export const SOURCE_ENTRY = 'local/cli/main.ts';

/**
 * One hash of `inputs` (paths relative to `root`, in order) and their contents. `root` is part of
 * it because the build holds absolute paths of the sources (`import.meta.url`): a moved checkout
 * needs a new build.
 *
 * @param {string} root
 * @param {readonly string[]} inputs
 * @param {(input: string) => Uint8Array | string} [read]
 * @returns {string}
 */
export function stampOf(root, inputs, read = (input) => readFileSync(join(root, input))) {
  const hash = createHash('sha256').update(resolve(root)).update('\0');
  for (const input of inputs) hash.update(input).update('\0').update(read(input)).update('\0');
  return hash.digest('hex');
}

/**
 * The build to run, or why there is none.
 *
 * @param {string} root the repository root
 * @returns {{ entry: string, listings: import('./main').CommandListing[] } | { reason: 'missing' | 'changed' }}
 */
export function findBuild(root) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(root, BUILD_DIR, MANIFEST_FILE), 'utf8'));
  } catch {
    return { reason: 'missing' };
  }
  const { stamp, entry, inputs, commands } = manifest ?? {};
  if (typeof stamp !== 'string' || typeof entry !== 'string' || !Array.isArray(inputs) || !Array.isArray(commands))
    return { reason: 'missing' };
  const file = join(root, BUILD_DIR, entry);
  if (!existsSync(file)) return { reason: 'missing' };
  try {
    if (stampOf(root, inputs) !== stamp) return { reason: 'changed' };
  } catch {
    // A file the build was made from is gone.
    return { reason: 'changed' };
  }
  return { entry: file, listings: commands };
}

const WHY = {
  missing: `no build of the CLI in ${BUILD_DIR}`,
  changed: 'the sources changed since the CLI was built',
};

/**
 * Runs the CLI for `argv` (`process.argv`) from the build when it is current, else from the sources.
 *
 * @param {readonly string[]} argv
 * @param {string} root the repository root
 * @returns {Promise<void>}
 */
export async function launch(argv, root) {
  const build = findBuild(root);
  if ('entry' in build) {
    const { main } = await import(pathToFileURL(build.entry).href);
    await main(argv, { listings: build.listings });
    return;
  }
  if (process.stderr.isTTY)
    process.stderr.write(
      `sms-relay: ${WHY[build.reason]}; running the sources through tsx (slow). "npm run build" makes it quick again.\n`,
    );
  await runSources(argv, root);
}

/**
 * Runs the CLI for `argv` from the TypeScript sources through tsx, whatever is built.
 *
 * @param {readonly string[]} argv
 * @param {string} root the repository root
 * @returns {Promise<void>}
 */
export async function runSources(argv, root) {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import(pathToFileURL(join(root, SOURCE_ENTRY)).href);
  await main(argv);
}

/**
 * `node <args>` that runs `sms-relay <cliArgs>` from the sources of `root`, for tests and the bench
 * to compare with the build.
 *
 * @param {string} root
 * @param {readonly string[]} cliArgs
 * @returns {string[]}
 */
export function sourcesCommand(root, cliArgs) {
  const script = `import { runSources } from ${JSON.stringify(import.meta.url)}; await runSources(process.argv, ${JSON.stringify(root)});`;
  // Under -e, process.argv has no script path: "sms-relay" takes its place.
  return ['--input-type=module', '-e', script, 'sms-relay', ...cliArgs];
}
