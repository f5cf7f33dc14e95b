import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The store commands answer in a few hundred milliseconds against a running relay only if they load
 * what that takes (commander, the relay client) and nothing else: the AWS SDK, the store, dynalite,
 * zod (the request schemas) and the config's compiler are imported on demand, when a command opens
 * a store itself or reads a config. The bundle's static import graph from each command says what
 * loads before any of that is asked for.
 */
const STORE_COMMANDS = ['logs', 'incidents', 'circuit', 'redrive', 'dismiss', 'mute', 'oncall'] as const;

/** Loaded only on demand: a module whose path contains one of these is never a static import of a store command. */
const ON_DEMAND = [
  'node_modules/@aws-sdk/',
  'node_modules/@smithy/',
  'node_modules/zod/',
  'node_modules/yaml/',
  'node_modules/liquidjs/',
  'functions/store/index.ts',
  'functions/core/config/load.ts',
  'local/shared/local-store.ts',
] as const;

/** Every module a command's module imports statically, transitively (dynamic `import()`s not followed). */
function staticInputs(metafile: Metafile, entry: string): Set<string> {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const path = pending.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    for (const imported of metafile.inputs[path]?.imports ?? [])
      if (imported.kind === 'import-statement' && !imported.external) pending.push(imported.path);
  }
  return seen;
}

describe('what a store command loads before it asks the running relay', () => {
  let metafile: Metafile;
  beforeAll(async () => {
    ({ metafile } = await build({
      absWorkingDir: ROOT,
      entryPoints: STORE_COMMANDS.map((name) => `local/cli/commands/${name}.ts`),
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      external: ['dynalite', 'esbuild'],
      outdir: 'dist/unused',
      write: false,
      metafile: true,
      logLevel: 'silent',
    }));
  }, 60_000);

  it.each(STORE_COMMANDS)(
    '%s imports no AWS SDK, store, dynalite, zod or config compiler until it needs them',
    (name) => {
      const loaded = [...staticInputs(metafile, `local/cli/commands/${name}.ts`)];
      expect(loaded).toContain('local/shared/relay-client.ts');
      expect(loaded.filter((path) => ON_DEMAND.some((part) => path.includes(part)))).toEqual([]);
    },
  );
});
