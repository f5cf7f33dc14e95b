import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assertPinnedDynalite,
  dynaliteInternals,
  PINNED_DYNALITE_VERSION,
} from '../../../local/shared/dynalite-internals';
import { RuntimeError } from '../../../local/shared/errors';
import packageJson from '../../../package.json' with { type: 'json' };

const sources = (directory: string): string[] =>
  readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.(ts|mjs|js)$/.test(entry.name) ? [path] : [];
  });

describe("dynalite's internal modules", () => {
  it('are the pinned release’s: another version fails with a sentence that says what to do', () => {
    expect(packageJson.dependencies.dynalite).toBe(PINNED_DYNALITE_VERSION);
    expect(() => assertPinnedDynalite(PINNED_DYNALITE_VERSION)).not.toThrow();
    for (const other of ['4.0.1', '3.2.2', undefined]) {
      expect(() => assertPinnedDynalite(other)).toThrow(RuntimeError);
      expect(() => assertPinnedDynalite(other)).toThrow(
        `the local store needs dynalite 4.0.0 (it uses that release's internal modules) but dynalite ${String(other)} is installed: run "npm ci"`,
      );
    }
    const internals = dynaliteInternals();
    expect(typeof internals.db.validateItem).toBe('function');
    expect(typeof internals.db.checkConditional).toBe('function');
  });

  it('are reached from one module only', () => {
    const reaching = [...sources('local'), ...sources('functions'), ...sources('bench')].filter((path) => {
      const text = readFileSync(path, 'utf8');
      return /resolve\(['"]dynalite['"]\)|['"]dynalite\/|from ['"]level['"]/.test(text);
    });
    expect(reaching).toEqual([join('local', 'shared', 'dynalite-internals.ts')]);
  });
});
