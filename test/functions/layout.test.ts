import { describe, expect, it } from 'vitest';
import { importEdges } from '../helpers/module-graph';

/**
 * The folders of `functions/`, top first: each may import only the folders after it. The Lambda
 * handlers sit on the adapters both runtimes use (the local runtime imports those too), which
 * implement the relay's ports; the relay's operations use the store, and everything uses the core.
 */
const LAYERS = ['handlers', 'adapters', 'relay', 'store', 'core'] as const;

/** The folder of `functions/` a repository path lies in (`functions/relay/x.ts` → `relay`). */
function folderOf(path: string): string {
  return path.split('/')[1]!;
}

describe('the folders of functions/', () => {
  const edges = importEdges('functions');
  const crossing = edges.filter(({ from, to }) => to.startsWith('functions/') && folderOf(from) !== folderOf(to));

  it('finds the imports it checks', () => {
    // A broken reader would pass everything: the relay does import the store, the handlers the adapters.
    expect(crossing.some(({ from, to }) => folderOf(from) === 'relay' && folderOf(to) === 'store')).toBe(true);
    expect(crossing.some(({ from, to }) => folderOf(from) === 'handlers' && folderOf(to) === 'adapters')).toBe(true);
  });

  it('import nothing from infra/ or local/ (or anywhere else outside functions/)', () => {
    expect(
      edges
        .filter(({ to }) => !to.startsWith('functions/'))
        .map(({ from, specifier }) => `${from} imports ${specifier}`),
    ).toEqual([]);
  });

  it('import only the folders below them: handlers → adapters → relay → store → core', () => {
    const known = new Set<string>(LAYERS);
    const folders = new Set(crossing.flatMap(({ from, to }) => [folderOf(from), folderOf(to)]));
    expect(
      [...folders].filter((folder) => !known.has(folder)),
      'a folder missing from LAYERS',
    ).toEqual([]);
    const upward = crossing.filter(
      ({ from, to }) => LAYERS.indexOf(folderOf(from) as never) >= LAYERS.indexOf(folderOf(to) as never),
    );
    expect(upward.map(({ from, specifier }) => `${from} imports ${specifier}`)).toEqual([]);
  });
});
