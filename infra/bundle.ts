import { existsSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';

/** The Lambda handlers, one bundle each: `functions/handlers/<name>.ts` → `<outDir>/<name>/index.mjs`. */
export const HANDLER_NAMES = ['ingest', 'sender', 'sweeper', 'balance-watch'] as const;
export type HandlerName = (typeof HANDLER_NAMES)[number];

/** The file name inside each handler's directory; the function's handler is `index.handler`. */
export const BUNDLE_FILE = 'index.mjs';

/**
 * Beside each `index.mjs`: the YAML config loader (`functions/core/config/load.ts`: yaml, zod, LiquidJS, libphonenumber),
 * bundled on its own. A handler imports it only when `RELAY_CONFIG` is not a staged JSON config,
 * which on Lambda it always is: the deployed functions never load it.
 */
export const CONFIG_LOADER_FILE = 'config-loader.mjs';

/** The files of a handler's package that come from the bundler: what `stageFunctionAsset` copies. */
export const BUNDLE_FILES = [BUNDLE_FILE, CONFIG_LOADER_FILE] as const;

/**
 * What the sources read to find the files above in a bundle, replaced at build time by `define`
 * with their paths relative to the bundle; undefined when the sources run through tsx.
 */
const BUNDLE_GLOBALS = {
  SMS_RELAY_CONFIG_LOADER: `./${CONFIG_LOADER_FILE}`,
} as const;

/** esbuild's record of what went into every bundle, written next to them for size reports. */
export const METAFILE = 'meta.json';

export interface BundleOptions {
  /**
   * Where the bundles go, one directory per handler.
   * @default 'dist/handlers'
   */
  readonly outDir?: string;
  /**
   * Where the handler sources are, as `<name>.ts`.
   * @default 'functions/handlers'
   */
  readonly entryDir?: string;
  /**
   * Minify whitespace, syntax and identifiers. Function and class names are kept either way, so
   * stack traces in the logs stay readable without source maps.
   * @default true
   */
  readonly minify?: boolean;
  /**
   * Which handlers to bundle.
   * @default HANDLER_NAMES
   */
  readonly handlers?: readonly HandlerName[];
}

export interface HandlerBundle {
  readonly name: HandlerName;
  /** The source it was built from. */
  readonly entry: string;
  /** The directory holding `index.mjs` and the files beside it ({@link BUNDLE_FILES}): what the function's code asset is made from. */
  readonly dir: string;
  /** `index.mjs`, the module Lambda loads. */
  readonly file: string;
  /** Size of `index.mjs`. */
  readonly bytes: number;
  /** Size of `config-loader.mjs`, loaded only for a config that is not staged JSON. */
  readonly configLoaderBytes: number;
}

export interface BundleResult {
  /** The absolute output directory: pass it as `SmsRelay`'s `bundleDir`. */
  readonly outDir: string;
  readonly bundles: readonly HandlerBundle[];
  /** Path of the esbuild metafile covering every bundle (feed it to `esbuild --analyze` tooling). */
  readonly metafile: string;
}

/** The module bundled as `config-loader.mjs`, whatever `entryDir` holds. */
const CONFIG_LOADER_SOURCE = fileURLToPath(new URL('../functions/core/config/load.ts', import.meta.url));

// esbuild turns a CommonJS dependency's `require('x')` into a call that needs a real `require` at
// run time, which an ES module does not have; some of the dependencies are CommonJS.
const REQUIRE_SHIM =
  "import { createRequire as __smsRelayCreateRequire } from 'node:module'; const require = __smsRelayCreateRequire(import.meta.url);";

/** What the project's bundles for Node share: the handlers here, and the CLI (`local/cli/build.ts`). */
export const NODE_ESM_BUNDLE: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  // Prefer the ES module builds: they tree-shake, and the SDK's are much smaller that way.
  mainFields: ['module', 'main'],
  banner: { js: REQUIRE_SHIM },
};

/**
 * Bundles each handler into one ES module for nodejs22.x on arm64, `index.mjs`, with the YAML
 * config loader beside it ({@link BUNDLE_FILES}). The deployed functions and the integration tests
 * run these same files.
 *
 * Everything is bundled, the AWS SDK v3 clients included: the runtime's own SDK is whatever version
 * Lambda ships that week, so bundling pins what the tests ran against, at the price of a larger
 * package.
 *
 * @example
 * ```ts
 * const { bundles } = bundleHandlers({ outDir: 'dist/handlers' });
 * bundles.map((b) => `${b.name}: ${b.bytes} bytes`);
 * ```
 */
export function bundleHandlers(options: BundleOptions = {}): BundleResult {
  const outDir = resolve(options.outDir ?? 'dist/handlers');
  const entryDir = options.entryDir ?? 'functions/handlers';
  const handlers = options.handlers ?? HANDLER_NAMES;

  const entries = handlers.map((name) => ({ name, entry: join(entryDir, `${name}.ts`) }));
  const missing = entries.filter(({ entry }) => !existsSync(entry)).map(({ entry }) => entry);
  if (missing.length > 0) throw new Error(`cannot bundle the handlers: ${missing.join(', ')} missing`);

  const result = buildSync({
    entryPoints: Object.fromEntries(
      entries.flatMap(({ name, entry }) => [
        [`${name}/index`, entry],
        [`${name}/${CONFIG_LOADER_FILE.replace(/\.mjs$/, '')}`, CONFIG_LOADER_SOURCE],
      ]),
    ),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    ...NODE_ESM_BUNDLE,
    target: 'node22',
    // The handlers load the YAML config loader (with yaml and zod) from the file beside them, when
    // needed, instead of bundling it into index.mjs.
    define: Object.fromEntries(Object.entries(BUNDLE_GLOBALS).map(([name, path]) => [name, JSON.stringify(path)])),
    minify: options.minify ?? true,
    keepNames: true,
    // Source maps would double the package and make Node's stack rendering slow on every error;
    // kept names give readable traces instead.
    sourcemap: false,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
  });

  const metafile = join(outDir, METAFILE);
  writeFileSync(metafile, JSON.stringify(result.metafile));

  const bundles = entries.map(({ name, entry }) => {
    const dir = join(outDir, name);
    const file = join(dir, BUNDLE_FILE);
    return {
      name,
      entry,
      dir,
      file,
      bytes: outputBytes(result.metafile, file),
      configLoaderBytes: outputBytes(result.metafile, join(dir, CONFIG_LOADER_FILE)),
    };
  });
  return { outDir, bundles, metafile };
}

function outputBytes(metafile: Metafile, file: string): number {
  // Metafile keys are relative to the working directory.
  const output = metafile.outputs[relative(process.cwd(), file).split('\\').join('/')];
  if (output === undefined) throw new Error(`esbuild reported no output for ${file}`);
  return output.bytes;
}

// `npx tsx infra/bundle.ts [outDir]` bundles and prints the sizes.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { bundles, metafile } = bundleHandlers({ outDir: process.argv[2] });
  for (const bundle of bundles) {
    console.log(
      `${bundle.name.padEnd(14)} ${(bundle.bytes / 1024).toFixed(1).padStart(8)} KiB  ${bundle.file}  (+ ${CONFIG_LOADER_FILE} ${(bundle.configLoaderBytes / 1024).toFixed(1)} KiB, YAML configs only)`,
    );
  }
  console.log(`metafile: ${metafile}`);
}
