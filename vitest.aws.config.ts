import { defineConfig } from 'vitest/config';

/**
 * `npm run test:aws`: the suites that matter to AWS against AWS's own DynamoDB Local (started once
 * by the global setup, on a free port, in memory, without telemetry; stopped at the end), with the
 * store as deployed (listings read the indexes). The same test files as `npm test`: the one
 * switch is `TEST_STORE_ENGINE`, read by test/helpers/dynalite.ts.
 */
export default defineConfig({
  test: {
    // Printed beside every file and in the summary: these ran against DynamoDB Local.
    name: 'DynamoDB Local',
    include: [
      'test/functions/store/**/*.test.ts',
      'test/local/shared/dynalite-differential.test.ts',
      'test/local/shared/dynalite-differential-burst.test.ts',
      'test/integration/aws-stream.test.ts',
      'test/integration/aws-paging-timing.test.ts',
    ],
    globalSetup: ['test/helpers/dynamodb-local-setup.ts'],
    env: { TEST_STORE_ENGINE: 'dynamodb-local' },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
