import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The 200,000-record forecast last: after it DynamoDB Local stays slow for every file (the store's
 * accept tests took 126 s instead of 5, even with its table deleted), and after the drain and the
 * paging timings it takes minutes instead of about 70 s (its own time-out is 25 minutes).
 */
const rank = (file: TestSpecification): number => (file.moduleId.includes('forecast') ? 1 : 0);

class AwsSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

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
      'test/integration/aws-*.test.ts',
      // 200,000 SENT records: seconds for DynamoDB Local, minutes of CPU for dynalite.
      'test/functions/relay/forecast.test.ts',
    ],
    globalSetup: ['test/helpers/dynamodb-local-setup.ts'],
    // One file at a time, in `AwsSequencer`'s order: every file shares the one DynamoDB Local, and
    // the forecast, 71 s alone, ran out of its 600 s beside the drain and the paging timings (fresh
    // clone's CI, 2026-12-05).
    fileParallelism: false,
    sequence: { sequencer: AwsSequencer },
    env: { TEST_STORE_ENGINE: 'dynamodb-local' },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
