import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // aws-stream reads a table's stream, which only DynamoDB Local has: npm run test:aws runs it.
    exclude: ['test/reliability/**', 'test/browser/**', 'test/integration/aws-stream.test.ts', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
