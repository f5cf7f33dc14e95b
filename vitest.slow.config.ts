import { defineConfig } from 'vitest/config';

/**
 * `npm run test:slow`: the suites that must stay real and cost minutes of CPU each, kept out of
 * `npm test`'s loop and run by `.ci/run`: the `cdk synth` CLI on every environment (nag packs and
 * CloudFormation's template validation, 15-35 s of CPU per synth) and the CLI's build compared with
 * its sources command by command (two CLI processes per command); and Debian's Alertmanager paging
 * through the relay's Opsgenie API (its grouping and the sweeper's escalation: seconds of waiting,
 * and a binary `.ci/run` installs first). One file at a time: each loads both cores on its own.
 */
export const SLOW_TESTS = [
  'test/infra/synth-cli.test.ts',
  'test/local/cli/build.test.ts',
  'test/e2e/opsgenie-alertmanager.test.ts',
];

export default defineConfig({
  test: {
    include: SLOW_TESTS,
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
