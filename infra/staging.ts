import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_FILE } from './bundle';

/** The config's file name inside every function package, and the value of `RELAY_CONFIG`. */
export const RELAY_CONFIG_FILE = 'relay-config.yaml';

export interface StageFunctionAssetOptions {
  /** The handler's bundle directory (holding `index.mjs`). */
  readonly bundleDir: string;
  /** The environment's config text, deployed verbatim. */
  readonly configText: string;
  /**
   * Where staged packages are kept.
   * @default `<os tmpdir>/sms-relay-assets`
   */
  readonly stagingRoot?: string;
}

/**
 * Puts a handler's bundle and the environment's config into one directory, the function's code
 * asset: `index.mjs` and `relay-config.yaml`. The handler reads the config from its package, so a
 * deploy ships code and config together and a cold start reads no parameter store.
 *
 * The directory is named after a hash of its contents: synths of the same inputs share it, two
 * synths at once cannot interfere, and nothing inside `cdk.out` is touched.
 *
 * @example
 * ```ts
 * const dir = stageFunctionAsset({ bundleDir: 'dist/handlers/ingest', configText });
 * lambda.Code.fromAsset(dir);
 * ```
 */
export function stageFunctionAsset(options: StageFunctionAssetOptions): string {
  const bundleFile = join(options.bundleDir, BUNDLE_FILE);
  if (!existsSync(bundleFile)) throw new Error(`no bundle at ${bundleFile}; run bundleHandlers first`);
  const hash = createHash('sha256');
  hash.update(readFileSync(bundleFile));
  hash.update('\0');
  hash.update(options.configText);
  const root = options.stagingRoot ?? join(tmpdir(), 'sms-relay-assets');
  const dir = join(root, hash.digest('hex').slice(0, 32));
  if (existsSync(join(dir, RELAY_CONFIG_FILE))) return dir;

  // Build beside it and rename into place: a reader never sees a half-written package.
  mkdirSync(root, { recursive: true });
  const scratch = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}`;
  mkdirSync(scratch);
  copyFileSync(bundleFile, join(scratch, BUNDLE_FILE));
  writeFileSync(join(scratch, RELAY_CONFIG_FILE), options.configText);
  try {
    renameSync(scratch, dir);
  } catch (error) {
    // Another synth staged the same contents first.
    rmSync(scratch, { recursive: true, force: true });
    if (!existsSync(join(dir, RELAY_CONFIG_FILE))) throw error;
  }
  return dir;
}
