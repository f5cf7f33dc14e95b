// @ts-check
/**
 * `npm run test:mutation`: StrykerJS plants small bugs (mutants) in the modules that carry money and
 * delivery and runs the tests that cover each one (`vitest.mutation.config.ts`); a mutant no test
 * fails on is a bug those tests would let through. Long (see docs/testing.md, Mutation testing): not
 * in `.ci/run`. One module at a time: `npm run test:mutation -- --mutate functions/relay/circuit.ts`.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  // Each mutant runs only the tests that reached its code in the first, measured run.
  coverageAnalysis: 'perTest',
  // Seven other runs may share two cores: two vitest runners at most, niced by the script.
  concurrency: 2,
  mutate: [
    'functions/relay/credit-gate.ts',
    'functions/store/limits.ts',
    'functions/store/accept.ts',
    'functions/relay/sender.ts',
    'functions/store/transitions.ts',
    'functions/relay/circuit.ts',
    'functions/store/circuit.ts',
    'functions/relay/paging.ts',
    'functions/store/incidents.ts',
    'functions/core/recipients/allow.ts',
    'functions/core/fitting/*.ts',
  ],
  // A mutant in a module-level constant runs every test, not its covering ones: hours on this
  // suite. They are counted as ignored, not as survivors.
  ignoreStatic: true,
  // A log line's or an error's wording is not what is sent or charged; mutating every string in
  // these modules doubled the mutants (credit-gate.ts: 395) and the run time.
  mutator: { excludedMutations: ['StringLiteral'] },
  // Tests wait for states; a mutant that makes one wait for ever is a timeout (counted as killed).
  timeoutMS: 20_000,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  tempDirName: '.stryker-tmp',
  // Another run's sandbox and generated output are not the project.
  ignorePatterns: ['.stryker-tmp*', 'reports', 'dist', 'cdk.out', '.relay', '.scratch'],
  // The first, measured run of every covering test takes minutes on a busy machine (default 5).
  dryRunTimeoutMinutes: 20,
  cleanTempDir: 'always',
};
