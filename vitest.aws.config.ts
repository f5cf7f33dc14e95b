import { defineConfig } from 'vitest/config';

/** 200,000 SENT records: seconds for DynamoDB Local, minutes of CPU for dynalite. */
const FORECAST = 'test/functions/relay/forecast.test.ts';

/**
 * `npm run test:aws`: the suites that matter to AWS against AWS's own DynamoDB Local (started by
 * the global setup, on a free port, in memory, without telemetry; stopped at the end), with the
 * store as deployed (listings read the indexes). The same test files as `npm test`: the one
 * switch is `TEST_STORE_ENGINE`, read by test/helpers/dynalite.ts.
 *
 * Two projects, each with a DynamoDB Local of its own: the 200,000-record forecast (70 s on a fresh
 * one) took over 25 minutes on the DynamoDB Local the other files had used (fresh clone's CI,
 * 2026-12-05), and after it that one answered every later file about 20 times slower.
 */
export default defineConfig({
  test: {
    env: { TEST_STORE_ENGINE: 'dynamodb-local' },
    globalSetup: ['test/helpers/dynamodb-local-setup.ts'],
    // One file at a time: the drain and paging timings measure DynamoDB Local's answers, and on
    // two cores a file beside them (or beside the forecast's writes) ran out of its time.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          // Printed beside every file and in the summary: these ran against DynamoDB Local.
          name: 'DynamoDB Local',
          include: [
            'test/functions/store/**/*.test.ts',
            'test/local/shared/dynalite-differential.test.ts',
            'test/local/shared/dynalite-differential-burst.test.ts',
            'test/integration/aws-*.test.ts',
          ],
        },
      },
      { extends: true, test: { name: 'DynamoDB Local (forecast)', include: [FORECAST] } },
    ],
  },
});
