import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles, importEdges, ROOT } from '../helpers/module-graph';

/**
 * The folders of `local/`, top first: each may import only the folders after it (the Layout section
 * of docs/architecture.md gives the same reading order).
 */
const LAYERS = ['cli', 'runtime', 'console', 'shared', 'records', 'sandbox', 'http'] as const;

/** The folder of `local/` a repository path lies in (`local/runtime/x.ts` → `runtime`), or undefined outside it. */
function folderOf(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'local') return undefined;
  return parts.length > 2 ? parts[1] : '.';
}

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly file: string;
  readonly specifier: string;
}

/** The imports of `local/` that cross from one of its folders into another. */
function crossFolderImports(): Edge[] {
  return importEdges('local').flatMap(({ from: file, to: target, specifier }) => {
    const from = folderOf(file)!;
    const to = folderOf(target);
    return to === undefined || to === from ? [] : [{ from, to, file, specifier }];
  });
}

describe('the folders of local/', () => {
  const edges = crossFolderImports();

  it('finds the imports it checks', () => {
    // A broken reader would pass everything: the CLI does import the runtime.
    expect(edges.some(({ from, to }) => from === 'cli' && to === 'runtime')).toBe(true);
  });

  it('import each other without a cycle', () => {
    // The cycles of the folder graph: one node per folder.
    expect(importCycles(edges)).toEqual([]);
  });

  it('import only the folders below them, in the order of docs/architecture.md', () => {
    const known = new Set<string>(LAYERS);
    const folders = new Set(edges.flatMap(({ from, to }) => [from, to]));
    expect(
      [...folders].filter((folder) => !known.has(folder)),
      'a folder missing from LAYERS',
    ).toEqual([]);
    const upward = edges.filter(({ from, to }) => LAYERS.indexOf(from as never) >= LAYERS.indexOf(to as never));
    expect(upward.map(({ file, specifier }) => `${file} imports ${specifier}`)).toEqual([]);
  });

  it('are listed in docs/architecture.md in that order', () => {
    const architecture = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const order = architecture.match(/^Reading order of `local\/`[^\n]*\n((?:.+\n)+)/m)?.[1] ?? '';
    const named = [...order.matchAll(/`local\/(\w+)\/`/g)].map((match) => match[1]);
    expect(named).toEqual([...LAYERS]);
  });
});
