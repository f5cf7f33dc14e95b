import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository's root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** One import between two of the repository's files, as paths relative to the root (`/`-separated). */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
  readonly specifier: string;
}

/** The TypeScript and JavaScript sources under `folders` (relative to the root), declarations left out. */
export function sourceFiles(...folders: readonly string[]): string[] {
  const walk = (directory: string): string[] =>
    readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path);
      return /\.(ts|tsx|mts|mjs)$/.test(entry.name) && !/\.d\.m?ts$/.test(entry.name) ? [path] : [];
    });
  return folders
    .flatMap((folder) => walk(join(ROOT, folder)))
    .map(toRepoPath)
    .sort();
}

function toRepoPath(path: string): string {
  return relative(ROOT, path).split(sep).join('/');
}

/**
 * The file a relative specifier names, as the bundler resolves it (`./x` → `x.ts`, `x.tsx` or
 * `x/index.ts`; `./x.js` → `x.ts`), or undefined for a package or a file that does not exist.
 */
function resolveSpecifier(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(ROOT, dirname(fromFile), specifier);
  const candidates = [
    base,
    `${base}.ts`,
    `${base}.tsx`,
    `${base}.mts`,
    `${base}.mjs`,
    join(base, 'index.ts'),
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
  ];
  const found = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  return found === undefined ? undefined : toRepoPath(found);
}

/**
 * Every import of the files under `folders` that names another file of the repository: static
 * imports and re-exports (type-only ones included: they tie the modules together for a reader and
 * for the compiler just the same) and dynamic `import()`. TypeScript's own pre-processor reads
 * them, so a multi-line import or one inside a comment is read as the compiler reads it.
 */
export function importEdges(...folders: readonly string[]): ImportEdge[] {
  return sourceFiles(...folders).flatMap((from) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, from), 'utf8'), true, true);
    return importedFiles.flatMap(({ fileName: specifier }) => {
      const to = resolveSpecifier(from, specifier);
      return to === undefined ? [] : [{ from, to, specifier }];
    });
  });
}

/**
 * The import cycles: each strongly connected component of more than one file (or a file that
 * imports itself), its files sorted; Tarjan's algorithm, iterative so a deep graph cannot
 * overflow the stack.
 */
export function importCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const nodes = [...new Set(edges.flatMap(({ from, to }) => [from, to]))].sort();
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; child: number }> = [{ node: root, child: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const children = next.get(frame.node) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child++]!;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || children.includes(frame.node)) cycles.push(component.sort());
    }
  }
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
