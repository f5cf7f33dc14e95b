import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BundleResult, bundleHandlers } from '../../infra/bundle';

/** The real handlers: the tests bundle, synthesise and load exactly what the stack deploys. */
export const HANDLERS_DIR = 'functions/handlers';

let shared: BundleResult | undefined;

/**
 * The handlers bundled once for every test file a worker runs (`isolate: false` in
 * vitest.config.ts keeps this module's state between them), in a temporary directory removed when
 * the worker ends. Each bundling is an esbuild run of a few seconds that blocks the worker; the
 * stack, alarm, nag, data-safety and deployable tests and the bundled handlers' integration test
 * took one each. They only read it: a synth stages a copy of it (`stageFunctionAsset`), the
 * integration test too. `test/infra/bundle.test.ts`, which tests the bundling itself, bundles its
 * own.
 *
 * @example
 * ```ts
 * const prod = synthStack('prod', configText('prod'), sharedHandlerBundles().outDir);
 * ```
 */
export function sharedHandlerBundles(): BundleResult {
  if (shared === undefined) {
    const outDir = mkdtempSync(join(tmpdir(), 'sms-relay-bundle-'));
    process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
    shared = bundleHandlers({ outDir, entryDir: HANDLERS_DIR });
  }
  return shared;
}
