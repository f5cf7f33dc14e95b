import { describe, expect, it } from 'vitest';
import { importCycles, importEdges } from './helpers/module-graph';

/**
 * No import cycle anywhere in the product's code. Type-only imports count: a cycle of types still
 * means neither module can be read, moved or tested without the other.
 */
describe('the imports of functions/, infra/ and local/', () => {
  const edges = importEdges('functions', 'infra', 'local');

  it('are all read, type-only and dynamic ones included', () => {
    // A broken reader would find no cycle: these three kinds are each imported somewhere today.
    const has = (from: string, to: string): boolean => edges.some((edge) => edge.from === from && edge.to === to);
    expect(has('infra/stack.ts', 'infra/sms-relay.ts')).toBe(true);
    expect(has('functions/relay/ingest.ts', 'functions/core/sources/types.ts'), 'import type').toBe(true);
    expect(has('local/cli/main.ts', 'local/cli/commands/sandbox.ts'), 'a dynamic import()').toBe(true);
  });

  it('form no cycle', () => {
    expect(importCycles(edges)).toEqual([]);
  });
});

describe('importCycles', () => {
  it('finds a cycle of two and a cycle through a third file, and nothing in a chain', () => {
    const edge = (from: string, to: string) => ({ from, to, specifier: to });
    expect(
      importCycles([
        edge('a', 'b'),
        edge('b', 'a'),
        edge('c', 'd'),
        edge('d', 'e'),
        edge('e', 'c'),
        edge('e', 'f'),
        edge('g', 'g'),
      ]),
    ).toEqual([['a', 'b'], ['c', 'd', 'e'], ['g']]);
    expect(importCycles([edge('a', 'b'), edge('b', 'c')])).toEqual([]);
  });
});
