import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../functions/core/config/load';
import { stageConfig } from '../functions/core/config/staged';
import { BUNDLE_FILE, BUNDLE_FILES } from './bundle';

/** The config's file name inside every function package, and the value of `RELAY_CONFIG`. */
export const RELAY_CONFIG_FILE = 'relay-config.json';

export interface StageFunctionAssetOptions {
  /** The handler's bundle directory (`index.mjs`, `config-loader.mjs`). */
  readonly bundleDir: string;
  /** The environment's config text (`config/<env>.yaml`); staged validated and compiled, as JSON. */
  readonly configText: string;
  /**
   * Names the config in the problems reported when it is invalid.
   * @default 'config'
   */
  readonly configSource?: string;
  /**
   * Where staged packages are kept.
   * @default `<os tmpdir>/sms-relay-assets`
   */
  readonly stagingRoot?: string;
}

const stagedTexts = new Map<string, string>();

/**
 * The JSON a function is deployed with (`relay-config.json`): the config parsed, validated and
 * compiled now, at synth, then written with every default applied plus what the handlers would
 * otherwise compute at each cold start (literal recipients and `balance.notify` normalised). The
 * handlers read it without yaml or zod; only ingest compiles its templates from it.
 *
 * @throws {ConfigError} the config is invalid (every problem listed), templates included
 *
 * @example
 * ```ts
 * writeFileSync('relay-config.json', stagedConfigText(readFileSync('config/prod.yaml', 'utf8'), 'config/prod.yaml'));
 * ```
 */
export function stagedConfigText(configText: string, configSource = 'config'): string {
  const key = `${configSource}\0${configText}`;
  let text = stagedTexts.get(key);
  if (text === undefined) {
    text = `${JSON.stringify(stageConfig(loadConfig(configText, configSource)), null, 2)}\n`;
    stagedTexts.set(key, text);
  }
  return text;
}

/**
 * Puts a handler's bundle and the environment's config into one directory, the function's code
 * asset: `index.mjs`, `config-loader.mjs` (only ever loaded for a YAML config, never on Lambda)
 * and `relay-config.json` (see {@link stagedConfigText}). The handler reads the config from its
 * package, so a deploy ships code and config together and a cold start reads no parameter store.
 *
 * The directory is named after a hash of its contents: synths of the same inputs share it, two
 * synths at once cannot interfere, and nothing inside `cdk.out` is touched.
 *
 * @throws {ConfigError} the config is invalid
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
  const files = BUNDLE_FILES.filter((file) => existsSync(join(options.bundleDir, file)));
  const configJson = stagedConfigText(options.configText, options.configSource);
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(file);
    hash.update('\0');
    hash.update(readFileSync(join(options.bundleDir, file)));
    hash.update('\0');
  }
  hash.update(configJson);
  const root = options.stagingRoot ?? join(tmpdir(), 'sms-relay-assets');
  const dir = join(root, hash.digest('hex').slice(0, 32));
  if (existsSync(join(dir, RELAY_CONFIG_FILE))) return dir;

  // Build beside it and rename into place: a reader never sees a half-written package.
  mkdirSync(root, { recursive: true });
  const scratch = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}`;
  mkdirSync(scratch);
  for (const file of files) copyFileSync(join(options.bundleDir, file), join(scratch, file));
  writeFileSync(join(scratch, RELAY_CONFIG_FILE), configJson);
  try {
    renameSync(scratch, dir);
  } catch (error) {
    // Another synth staged the same contents first.
    rmSync(scratch, { recursive: true, force: true });
    if (!existsSync(join(dir, RELAY_CONFIG_FILE))) throw error;
  }
  return dir;
}
