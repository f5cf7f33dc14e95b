import { defineConfig } from 'vitest/config';

/**
 * `npm run test:browser`: the console in Debian's Chromium (playwright-core) against `npm start`.
 * Kept apart from `npm test` because it needs a browser on the machine; `.ci/run` installs one.
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
