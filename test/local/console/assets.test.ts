import { describe, expect, it, vi } from 'vitest';
import { buildConsoleAssets, renderConsolePage } from '../../../local/console/assets';

describe('the console page shell', () => {
  const page = renderConsolePage();

  it('carries no token: the session cookie of the one-time link is the only credential', () => {
    expect(page).not.toMatch(/token/i);
    expect(page.match(/<script\b/g)).toHaveLength(1);
  });

  it('loads the bundle from /console/app.js (a module) and /console/app.css, and has no inline script or style', () => {
    expect(page).toContain('<link rel="stylesheet" href="/console/app.css">');
    expect(page).toContain('<script type="module" src="/console/app.js"></script>');
    const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts).toHaveLength(1);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/console\/app\.js"/);
      expect(body).toBe('');
    }
    expect(page).not.toMatch(/<style\b|\son[a-z]+=|javascript:/i);
  });

  it('asks for the chunks the entry imports beside it, not once the entry is in', async () => {
    const { entryImports } = await buildConsoleAssets();
    const shell = renderConsolePage(entryImports);
    const preloaded = [...shell.matchAll(/<link rel="modulepreload" href="\/console\/([^"]+)">/g)].map(
      ([, name]) => name,
    );
    expect(preloaded).toEqual(entryImports);
    expect(shell.match(/<script\b/g)).toHaveLength(1);
  });
});

describe('the console bundle', () => {
  it('builds once per process: the same assets for every call', async () => {
    const [first, second] = await Promise.all([buildConsoleAssets(), buildConsoleAssets()]);
    expect(second).toBe(first);
    expect(await buildConsoleAssets()).toBe(first);
  });

  it('holds the app and its stylesheet, uPlot included', async () => {
    const { js, css, chunks } = await buildConsoleAssets();
    const all = [js, ...chunks.values()].join('\n');
    // The anti-forgery header of the contract, the API paths, the test hooks.
    expect(all).toContain('x-sms-relay-console');
    expect(all).toContain('/console/api');
    expect(all).toContain('activity-row');
    expect(all).toContain('balance-chart');
    expect(all).toContain('u-over');
    expect(css).toContain('.uplot');
    expect(css).toContain('.state-parked');
  });

  it('opens on Activity with its own code and what every page shares, not the other pages nor uPlot', async () => {
    const { js, chunks, entryImports } = await buildConsoleAssets();
    const first = [js, ...entryImports.map((name) => chunks.get(name) ?? '')].join('\n');
    expect(first).toContain('activity-row');
    expect(first).toContain('x-sms-relay-console');
    // uPlot's canvas overlay, the Credit, Templates, Routes, On call and record pages.
    for (const other of ['u-over', 'balance-chart', 'tpl-payload', 'route-card', 'oncall-now', 'record-detail'])
      expect(first, other).not.toContain(other);
    // Each chunk is served by the name the entry imports it by.
    for (const name of entryImports) expect(chunks.has(name), name).toBe(true);
    const imported = [...[js, ...chunks.values()].join('\n').matchAll(/"\.\/(chunk-[A-Z0-9]+\.js)"/g)].map(
      ([, name]) => name!,
    );
    for (const name of imported) expect(chunks.has(name), name).toBe(true);
    expect(new Set(imported)).toEqual(new Set(chunks.keys()));
  });

  it('loads nothing from outside: no remote script, import, fetch, stylesheet or font', async () => {
    const { js: entry, css, chunks } = await buildConsoleAssets();
    const js = [entry, ...chunks.values()].join('\n');
    // The only URLs in the bundle are XML namespace names (preact's SVG and MathML support).
    const urls = new Set(js.match(/https?:\/\/[^\s"'`)]+/g) ?? []);
    for (const url of urls) expect(url).toMatch(/^http:\/\/www\.w3\.org\//);
    expect(js).not.toMatch(/(?:import|fetch|importScripts)\(\s*["'`]https?:/);
    expect(js).not.toMatch(/src\s*=\s*\\?["'`]?https?:/);
    expect(js).not.toMatch(/new (?:WebSocket|EventSource|Worker)\(/);
    expect(js).not.toMatch(/\beval\(|new Function\(/);
    expect(css).not.toMatch(/https?:\/\//);
    expect(css).not.toMatch(/@import|@font-face/);
    expect(css).not.toMatch(/url\((?!\s*["']?data:)/);
  });

  it('carries nothing of the server: no Node built-ins or server modules', async () => {
    const { js: entry, chunks } = await buildConsoleAssets();
    const js = [entry, ...chunks.values()].join('\n');
    expect(js).not.toMatch(/\brequire\(|["']node:/);
    expect(js).not.toMatch(/dynalite|liquidjs|@aws-sdk/);
  });
});

describe('a failed build', () => {
  it('rejects, and the next call builds again', async () => {
    vi.resetModules();
    let calls = 0;
    vi.doMock('esbuild', async (importOriginal) => {
      const real = await importOriginal<typeof import('esbuild')>();
      const build: typeof real.build = async (options) => {
        calls++;
        if (calls === 1) throw new Error('disk on fire');
        return real.build(options);
      };
      return { ...real, build, default: { ...real, build } };
    });
    try {
      const { buildConsoleAssets: freshBuild } = await import('../../../local/console/assets');
      await expect(freshBuild()).rejects.toThrow('disk on fire');
      const assets = await freshBuild();
      expect([assets.js, ...assets.chunks.values()].join('\n')).toContain('/console/api');
      expect(await freshBuild()).toBe(assets);
      expect(calls).toBe(2);
    } finally {
      vi.doUnmock('esbuild');
      vi.resetModules();
    }
  });
});
