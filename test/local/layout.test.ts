import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LOCAL = join(ROOT, 'local');

/**
 * The folders of `local/`, top first: each may import only the folders after it (the Layout section
 * of docs/architecture.md gives the same reading order).
 */
const LAYERS = ['cli', 'runtime', 'console', 'shared', 'records', 'sandbox', 'http'] as const;

/** Every module specifier of a file: static and type imports, re-exports and dynamic `import()`. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm)) found.push(match[1]!);
  for (const match of source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) found.push(match[1]!);
  for (const match of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(match[1]!);
  return found;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The folder of `local/` a path lies in (`local/runtime/x.ts` → `runtime`), or undefined outside it. */
function folderOf(path: string): string | undefined {
  const inside = relative(LOCAL, path);
  if (inside.startsWith('..')) return undefined;
  const parts = inside.split(sep);
  return parts.length > 1 ? parts[0] : '.';
}

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly file: string;
  readonly specifier: string;
}

/** The imports of `local/` that cross from one of its folders into another. */
function crossFolderImports(): Edge[] {
  return sourceFiles(LOCAL).flatMap((file) =>
    specifiers(readFileSync(file, 'utf8'))
      .filter((specifier) => specifier.startsWith('.'))
      .flatMap((specifier) => {
        const from = folderOf(file)!;
        const target = resolve(dirname(file), specifier);
        // `../http` names the folder's index.
        const to = folderOf(statSync(target, { throwIfNoEntry: false })?.isDirectory() === true ? join(target, 'index.ts') : target);
        return to === undefined || to === from ? [] : [{ from, to, file: relative(ROOT, file), specifier }];
      }),
  );
}

/** The folder cycles, each as its folders (strongly connected components of more than one folder). */
function folderCycles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) next.set(from, (next.get(from) ?? new Set()).add(to));
  const reaches = (from: string, to: string): boolean => {
    const seen = new Set<string>([from]);
    const stack = [from];
    while (stack.length > 0) {
      for (const folder of next.get(stack.pop()!) ?? []) {
        if (folder === to) return true;
        if (seen.has(folder)) continue;
        seen.add(folder);
        stack.push(folder);
      }
    }
    return false;
  };
  const folders = [...new Set(edges.flatMap(({ from, to }) => [from, to]))].sort();
  const cycles: string[][] = [];
  for (const folder of folders) {
    if (cycles.some((cycle) => cycle.includes(folder))) continue;
    const component = folders.filter((other) => other === folder || (reaches(folder, other) && reaches(other, folder)));
    if (component.length > 1) cycles.push(component);
  }
  return cycles;
}

describe('the folders of local/', () => {
  const edges = crossFolderImports();

  it('finds the imports it checks', () => {
    // A broken reader would pass everything: the CLI does import the runtime.
    expect(edges.some(({ from, to }) => from === 'cli' && to === 'runtime')).toBe(true);
  });

  it('import each other without a cycle', () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it('import only the folders below them, in the order of docs/architecture.md', () => {
    const known = new Set<string>(LAYERS);
    const folders = new Set(edges.flatMap(({ from, to }) => [from, to]));
    expect([...folders].filter((folder) => !known.has(folder)), 'a folder missing from LAYERS').toEqual([]);
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
