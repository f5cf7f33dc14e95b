/**
 * The console's browser assets: the Preact client of `local/console/client/` bundled in memory with
 * esbuild (once per process), and the HTML shell that loads it. The server serves `/console` (the
 * shell), `/console/app.js` (the entry: the shell, Activity and what every page shares),
 * `/console/app.css`, and the chunks the entry imports when a page needs them
 * (`/console/chunk-<hash>.js`: the other pages, and uPlot with the Credit page).
 */
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Metafile } from 'esbuild';

export interface ConsoleAssets {
  /** The entry module, `/console/app.js`. */
  readonly js: string;
  readonly css: string;
  /**
   * The modules the entry imports by name (`chunk-<hash of its contents>.js`), served at
   * `/console/<name>`: a page's code and what only it uses, loaded when it is first shown.
   */
  readonly chunks: ReadonlyMap<string, string>;
  /** The chunks the entry imports before it runs (every page needs them): the page asks for them beside it. */
  readonly entryImports: readonly string[];
}

const entry = fileURLToPath(new URL('./client/main.tsx', import.meta.url));

/** A chunk's file name: its contents' hash, so one name is always the same code. */
export const CHUNK_NAME = /^chunk-[A-Z0-9]+\.js$/;

let pending: Promise<ConsoleAssets> | undefined;

/**
 * Bundles the client (JS and CSS, uPlot's stylesheet included), minified, nothing written to disk:
 * ES modules, split so that a page's own code (and uPlot, the Credit page's) loads only when the
 * page is shown. The first call builds; later calls share its result. A failed build rejects, and
 * the next call builds again.
 */
export function buildConsoleAssets(): Promise<ConsoleAssets> {
  if (!pending) {
    const build = bundle();
    pending = build;
    build.catch(() => {
      if (pending === build) pending = undefined;
    });
  }
  return pending;
}

async function bundle(): Promise<ConsoleAssets> {
  // esbuild is a dev dependency: loaded only when the console is asked for.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: { app: entry },
    bundle: true,
    write: false,
    outdir: '/console-assets',
    minify: true,
    format: 'esm',
    splitting: true,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    platform: 'browser',
    target: 'es2020',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    charset: 'utf8',
    legalComments: 'eof',
    sourcemap: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
    metafile: true,
  });
  let js: string | undefined;
  let css: string | undefined;
  const chunks = new Map<string, string>();
  for (const file of result.outputFiles) {
    const name = basename(file.path);
    if (name === 'app.js') js = file.text;
    else if (name === 'app.css') css = file.text;
    else if (CHUNK_NAME.test(name)) chunks.set(name, file.text);
    else throw new Error(`console assets: esbuild produced ${name}, which nothing serves`);
  }
  if (js === undefined || css === undefined) throw new Error('console assets: esbuild produced no JS or no CSS');
  return { js, css, chunks, entryImports: staticImports(result.metafile, 'app.js') };
}

/** The chunks `file` imports statically, and theirs in turn, by name. */
function staticImports(metafile: Metafile, file: string): string[] {
  const outputs = new Map(Object.entries(metafile.outputs).map(([path, output]) => [basename(path), output]));
  const found = new Set<string>();
  const visit = (name: string): void => {
    for (const { path, kind } of outputs.get(name)?.imports ?? []) {
      const imported = basename(path);
      if (kind !== 'import-statement' || found.has(imported) || !CHUNK_NAME.test(imported)) continue;
      found.add(imported);
      visit(imported);
    }
  };
  visit(file);
  return [...found];
}

/**
 * The page at `/console`: the stylesheet and the entry module (deferred, as modules are), and the
 * chunks the entry imports (`preload`, the build's `entryImports`), asked for at once rather than
 * once the entry is in; no inline script or style, no token.
 */
export function renderConsolePage(preload: readonly string[] = []): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<title>sms-relay console</title>',
    '<link rel="icon" href="data:,">',
    '<link rel="stylesheet" href="/console/app.css">',
    '<script type="module" src="/console/app.js"></script>',
    ...preload.map((name) => `<link rel="modulepreload" href="/console/${name}">`),
    '</head>',
    '<body>',
    '<div id="app"><noscript>The console needs JavaScript.</noscript></div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
