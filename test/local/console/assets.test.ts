import { describe, expect, it, vi } from 'vitest';
import { buildConsoleAssets, renderConsolePage } from '../../../local/console/assets';

describe('the console page shell', () => {
  const page = renderConsolePage();

  it('carries no token: the session cookie of the one-time link is the only credential', () => {
    expect(page).not.toMatch(/token/i);
    expect(page.match(/<script\b/g)).toHaveLength(1);
  });

  it('loads the bundle from /console/app.js and /console/app.css, and has no inline script or style', () => {
    expect(page).toContain('<link rel="stylesheet" href="/console/app.css">');
    expect(page).toContain('<script src="/console/app.js" defer></script>');
    const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts).toHaveLength(1);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/console\/app\.js"/);
      expect(body).toBe('');
    }
    expect(page).not.toMatch(/<style\b|\son[a-z]+=|javascript:/i);
  });
});

describe('the console bundle', () => {
  it('builds once per process: the same assets for every call', async () => {
    const [first, second] = await Promise.all([buildConsoleAssets(), buildConsoleAssets()]);
    expect(second).toBe(first);
    expect(await buildConsoleAssets()).toBe(first);
  });

  it('holds the app and its stylesheet, uPlot included', async () => {
    const { js, css } = await buildConsoleAssets();
    expect(js.length).toBeGreaterThan(10_000);
    // The anti-forgery header of the contract, the API paths, the test hooks.
    expect(js).toContain('x-sms-relay-console');
    expect(js).toContain('/console/api');
    expect(js).toContain('activity-row');
    expect(css).toContain('.uplot');
    expect(css).toContain('.state-parked');
  });

  it('loads nothing from outside: no remote script, import, fetch, stylesheet or font', async () => {
    const { js, css } = await buildConsoleAssets();
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
    const { js } = await buildConsoleAssets();
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
      expect(assets.js).toContain('/console/api');
      expect(await freshBuild()).toBe(assets);
      expect(calls).toBe(2);
    } finally {
      vi.doUnmock('esbuild');
      vi.resetModules();
    }
  });
});
