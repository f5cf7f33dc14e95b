/**
 * The console's browser assets: the Preact client of `local/console/client/` bundled in memory with
 * esbuild (once per process), and the HTML shell that loads it. The server serves
 * `/console` (the shell), `/console/app.js` and `/console/app.css`.
 */
import { fileURLToPath } from 'node:url';

export interface ConsoleAssets {
  readonly js: string;
  readonly css: string;
}

const entry = fileURLToPath(new URL('./client/main.tsx', import.meta.url));

let pending: Promise<ConsoleAssets> | undefined;

/**
 * Bundles the client (JS and CSS, uPlot's stylesheet included), minified, nothing written to disk.
 * The first call builds; later calls share its result. A failed build rejects, and the next call
 * builds again.
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
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    charset: 'utf8',
    legalComments: 'eof',
    sourcemap: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  let js: string | undefined;
  let css: string | undefined;
  for (const file of result.outputFiles) {
    if (file.path.endsWith('.js')) js = file.text;
    else if (file.path.endsWith('.css')) css = file.text;
  }
  if (js === undefined || css === undefined) throw new Error('console assets: esbuild produced no JS or no CSS');
  return { js, css };
}

/** The page at `/console`: the stylesheet and the deferred script; no inline script or style, no token. */
export function renderConsolePage(): string {
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
    '<script src="/console/app.js" defer></script>',
    '</head>',
    '<body>',
    '<div id="app"><noscript>The console needs JavaScript.</noscript></div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
