import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { SLOW_TESTS } from './vitest.slow.config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // aws-stream reads a table's stream, which only DynamoDB Local has; the differential files check
    // the relay's dynalite against DynamoDB Local; the paging timing waits out real minutes of the
    // sweeper's schedule: npm run test:aws runs them.
    exclude: [
      'test/reliability/**',
      'test/browser/**',
      'test/integration/aws-*.test.ts',
      'test/local/shared/dynalite-differential.test.ts',
      'test/local/shared/dynalite-differential-burst.test.ts',
      // The forecast over 200,000 SENT records: DynamoDB Local writes them in seconds (test:aws).
      'test/functions/relay/forecast.test.ts',
      ...SLOW_TESTS,
      'node_modules/**',
    ],
    // Vitest's default is one worker fewer than the cores: a single file at a time on a 2-core
    // machine, while the end-to-end files spend most of their time waiting on a relay process.
    maxWorkers: availableParallelism(),
    // Worker threads, each importing the relay's modules once for all the files it runs, instead of
    // a process per worker and a fresh module graph per file: the imports (the AWS SDK, zod,
    // LiquidJS, the sources) were most of the unit tests' CPU. Files leave no state behind: env
    // stubs, fake timers and client mocks are undone in their after hooks.
    pool: 'threads',
    isolate: false,
    setupFiles: ['test/helpers/isolation.ts'],
    // Bounds for a failing run on a busy machine with two files at once; tests wait for states.
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
