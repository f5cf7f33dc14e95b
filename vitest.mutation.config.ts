import { defineConfig } from 'vitest/config';
import base from './vitest.config';

/**
 * The tests `npm run test:mutation` (StrykerJS, `stryker.config.mjs`) runs against each mutant of
 * the modules that carry money and delivery: the unit and store tests that cover them, each against
 * dynalite and the sandbox on loopback, never the end-to-end suites (a relay process per file would
 * make every mutant cost seconds). One file at a time: seven other runs may share the cores.
 */
export const MUTATION_TESTS = [
  'test/functions/core/recipients/allow.test.ts',
  'test/functions/core/fitting/*.test.ts',
  'test/functions/core/paging/*.test.ts',
  'test/functions/relay/circuit.test.ts',
  'test/functions/relay/sender.test.ts',
  'test/functions/relay/sweeper.test.ts',
  'test/functions/relay/ingest.test.ts',
  'test/functions/relay/paging.test.ts',
  'test/functions/store/accept.test.ts',
  'test/functions/store/circuit.test.ts',
  'test/functions/store/credit.test.ts',
  'test/functions/store/incidents.test.ts',
  'test/functions/store/limits.test.ts',
  'test/functions/store/transitions.test.ts',
];

/**
 * `MUTATION_TESTS` (comma-separated globs) narrows the run to one module's own tests: a module used
 * by nearly every test (fitting) otherwise runs hundreds of tests per mutant, days on this machine.
 *
 * @example MUTATION_TESTS='test/functions/core/fitting/*.test.ts' npm run test:mutation -- --mutate 'functions/core/fitting/*.ts'
 */
const only = process.env['MUTATION_TESTS']?.split(',').filter((glob) => glob.length > 0);

export default defineConfig({
  // A fresh module graph per file: with one graph per worker (`npm test`'s `isolate: false`), Stryker's
  // per-test coverage missed tests that reach a mutant, reporting survivors that tests kill.
  test: { ...base.test, include: only ?? MUTATION_TESTS, maxWorkers: 1, isolate: true },
});
