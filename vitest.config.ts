import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { SLOW_TESTS } from './vitest.slow.config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // aws-stream reads a table's stream, which only DynamoDB Local has; the runtime's burst replayed
    // to each engine is a check against DynamoDB Local: npm run test:aws runs them.
    exclude: ['test/reliability/**', 'test/browser/**', 'test/integration/aws-stream.test.ts', 'test/local/shared/dynalite-differential-burst.test.ts', ...SLOW_TESTS, 'node_modules/**'],
    // Vitest's default is one worker fewer than the cores: a single file at a time on a 2-core
    // machine, while the end-to-end files spend most of their time waiting on a relay process.
    maxWorkers: availableParallelism(),
    // Bounds for a failing run on a busy machine with two files at once; tests wait for states.
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
