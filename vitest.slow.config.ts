import { defineConfig } from 'vitest/config';

/**
 * `npm run test:slow`: the suites that must stay real and cost minutes of CPU each, kept out of
 * `npm test`'s loop and run by `.ci/run`: the `cdk synth` CLI on every environment (nag packs and
 * CloudFormation's template validation, 15-35 s of CPU per synth) and the CLI's build compared with
 * its sources command by command (two CLI processes per command); Debian's Alertmanager paging
 * through the relay's Opsgenie API (its grouping and the sweeper's escalation: seconds of waiting,
 * and a binary `.ci/run` installs first); the deployed bundles run one invocation per cold Node
 * process (about 40 of them); and the end-to-end files that kill and restart `npm start`'s relay
 * mid-file or start one per test (restart, recovery, credit and money safety: relays ended by
 * SIGKILL, hundreds of webhooks). One file at a time: each loads both cores on its own.
 */
export const SLOW_TESTS = [
  'test/infra/synth-cli.test.ts',
  'test/local/cli/build.test.ts',
  'test/e2e/opsgenie-alertmanager.test.ts',
  'test/integration/bundled.test.ts',
  'test/e2e/restart.test.ts',
  'test/e2e/recovery.test.ts',
  'test/e2e/credit-safety.test.ts',
  'test/e2e/money-safety.test.ts',
];

export default defineConfig({
  test: {
    include: SLOW_TESTS,
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
