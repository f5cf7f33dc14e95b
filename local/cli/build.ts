/**
 * `npm run build`, which `npm ci` and `npm install` run as the package's `prepare` script: bundles
 * the CLI (`local/cli/main.ts`, with its dependencies) into `dist/cli/<stamp>/`, so that
 * `sms-relay` starts without compiling TypeScript, and writes `dist/cli/manifest.json`: the files
 * the build was made from with one hash of their contents (`stampOf`), which
 * `local/cli/launch.mjs` checks before it runs the build, and how `sms-relay --help` lists each
 * command, so that the help imports no command module.
 *
 * The dependencies are bundled in: Node loads a few files much faster than the hundreds of
 * modules of zod, LiquidJS or the AWS SDK. `main.mjs` holds only commander and the list of
 * commands; each command's modules are a chunk loaded when it runs. dynalite (loaded with
 * `require` at run time, and native underneath) and esbuild (native; the console bundles its
 * client with it) stay outside.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { extname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Loader, type Plugin } from 'esbuild';
import { NODE_ESM_BUNDLE } from '../../infra/bundle';
import { BUILD_DIR, ENTRY_FILE, MANIFEST_FILE, SOURCE_ENTRY, stampOf } from './launch.mjs';
import type { CommandListing } from './main';

const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/**
 * Files that shape the build besides the modules it bundles: the locked versions of the bundled
 * dependencies, the compiler settings, and the build and its check themselves.
 */
const BUILD_INPUTS = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'local/cli/build.ts',
  'local/cli/launch.mjs',
] as const;

const LOADERS: Readonly<Record<string, Loader>> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.json': 'json',
};

/** `dist/cli/manifest.json`. */
export interface CliManifest {
  /** `stampOf(root, inputs)` when the build was made. */
  readonly stamp: string;
  /** The module to run, relative to the manifest. */
  readonly entry: string;
  /** Paths relative to the repository root, sorted. */
  readonly inputs: readonly string[];
  /** In the order `--help` lists them. */
  readonly commands: readonly CommandListing[];
}

export interface CliBuildOptions {
  /**
   * The repository to build, its `dist/cli` the output.
   * @default this repository
   */
  readonly root?: string;
}

export interface CliBuild {
  readonly entry: string;
  readonly bytes: number;
  readonly manifest: CliManifest;
}

/**
 * Builds the CLI of `root` into `<root>/dist/cli`. The manifest is removed first and written last,
 * each file by a rename, so a CLI starting meanwhile finds either a complete build of the current
 * sources or none (and runs the sources).
 */
export async function buildCli({ root = REPO_ROOT }: CliBuildOptions = {}): Promise<CliBuild> {
  const absRoot = resolve(root);
  const outDir = join(absRoot, BUILD_DIR);
  const manifestFile = join(outDir, MANIFEST_FILE);
  mkdirSync(outDir, { recursive: true });
  // A new directory each time: the listing below imports the build, and a process caches modules by path.
  const staging = mkdtempSync(join(outDir, '.staging-'));

  try {
    const sources = new Map<string, Buffer>();
    const result = await build({
      absWorkingDir: absRoot,
      entryPoints: { main: SOURCE_ENTRY },
      ...NODE_ESM_BUNDLE,
      target: 'node20',
      // Each command's modules (`import()` in main.ts) in chunks of their own, loaded when it runs.
      splitting: true,
      external: ['dynalite', 'esbuild'],
      plugins: [recordSources(absRoot, sources)],
      outdir: staging,
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunk-[hash]',
      write: false,
      legalComments: 'none',
      logLevel: 'warning',
    });
    for (const file of result.outputFiles) writeFileSync(file.path, file.contents);
    const bytes = result.outputFiles.reduce((sum, file) => sum + file.contents.byteLength, 0);

    const inputs = [...sources.keys(), ...BUILD_INPUTS].sort();
    const stamp = stampOf(absRoot, inputs, (input) => sources.get(input) ?? readFileSync(join(absRoot, input)));

    // The build itself says how the help lists each command.
    const built = (await import(pathToFileURL(join(staging, ENTRY_FILE)).href)) as typeof import('./main');
    const commands = await built.commandListings();

    // Each build in a directory of its own, named by its stamp, so that a CLI running one never
    // imports chunks of another; older builds go (a running CLI has imported its command by then).
    const dir = stamp.slice(0, 16);
    rmSync(manifestFile, { force: true });
    // A directory of that name holds a build of the same files (one made meanwhile, maybe): keep it.
    if (!existsSync(join(outDir, dir))) renameStaged(staging, join(outDir, dir));
    const manifest: CliManifest = { stamp, entry: `${dir}/${ENTRY_FILE}`, inputs, commands };
    const stagedManifest = `${manifestFile}.${process.pid}.tmp`;
    writeFileSync(stagedManifest, `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(stagedManifest, manifestFile);
    for (const old of readdirSync(outDir))
      if (old !== dir && old !== MANIFEST_FILE && !old.startsWith('.'))
        rmSync(join(outDir, old), { recursive: true, force: true });
    return { entry: join(outDir, manifest.entry), bytes, manifest };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Renames `from` to `to`, unless another build put a directory there first. */
function renameStaged(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
  }
}

/**
 * Loads the repository's own modules (not its dependencies), keeping what was read for the stamp,
 * so the stamp is of exactly what was bundled even if a file changes during the build; and gives
 * each its own `import.meta.url`, which a bundle would otherwise answer with its own (the console
 * finds its client's sources by it).
 */
function recordSources(root: string, sources: Map<string, Buffer>): Plugin {
  return {
    name: 'sms-relay-sources',
    setup(builder) {
      builder.onLoad({ filter: /.*/, namespace: 'file' }, ({ path }) => {
        const loader = LOADERS[extname(path)];
        if (path.split(/[\\/]/).includes('node_modules') || loader === undefined) return undefined;
        const contents = readFileSync(path);
        sources.set(relative(root, path).split('\\').join('/'), contents);
        return {
          contents: contents.toString('utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href)),
          loader,
        };
      });
    },
  };
}

// `npm run build` (`tsx local/cli/build.ts`).
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const { entry, bytes, manifest } = await buildCli();
  console.log(
    `built ${relative(process.cwd(), entry)} (${(bytes / 1024).toFixed(0)} KiB with its chunks) from ${manifest.inputs.length} files, ${manifest.commands.length} commands, in ${Math.round(performance.now() - started)} ms`,
  );
  // Loading every command for its listing may have left handles open (clients, timers); the build is done.
  process.exit(0);
}
