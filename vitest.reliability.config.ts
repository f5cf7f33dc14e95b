import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:reliability`: the relay's guarantees checked against the local runtime (child
 * processes of `sms-relay start`) and the sandbox SMS service, on loopback only. One file at a
 * time: each one loads the two cores on its own, and timings would interfere.
 */

/** Cheap groups first; `leaks` last, as it reads the output of every runtime the other files started. */
const ORDER = [
  'forgery',
  'bad-input',
  'hostile',
  'duplicates',
  'money',
  'faults',
  'outage',
  'crash',
  'crash-cycles',
  'load',
  'leaks',
];

const rank = (spec: TestSpecification): number => {
  const name =
    spec.moduleId
      .split('/')
      .at(-1)
      ?.replace(/\.test\.ts$/, '') ?? '';
  const index = ORDER.indexOf(name);
  return index < 0 ? ORDER.length - 1.5 : index;
};

class ReliabilitySequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    globalSetup: ['test/reliability/support/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    // Generous bounds: a deadline inside a test fails with its own message first.
    testTimeout: 600_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
    sequence: { sequencer: ReliabilitySequencer },
    reporters: ['default'],
  },
});
