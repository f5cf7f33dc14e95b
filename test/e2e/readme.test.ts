import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import browser from '../../vitest.browser.config';
import unit from '../../vitest.config';
import reliability from '../../vitest.reliability.config';
import slow, { SLOW_TESTS } from '../../vitest.slow.config';
import { REPO_ROOT } from './support';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const SCRIPTS = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

describe('README: what npm test runs', () => {
  it('names the suites npm test leaves to their own scripts, and those scripts run them', () => {
    // The Quick start section: from its heading to the next section's.
    const start = README.indexOf('\n## Quick start\n');
    const end = README.indexOf('\n## ', start + 1);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const quickStart = README.slice(start, end);
    expect(quickStart).not.toMatch(/every test suite/);
    // npm test is the type-check (beside the tests, failing the run when it fails) and vitest.config.ts,
    // which leaves out the reliability and browser suites…
    expect(SCRIPTS['test']).toBe(
      'npm run typecheck & typecheck=$!; vitest run; tests=$?; wait $typecheck && exit $tests',
    );
    expect(unit.test?.exclude).toEqual(expect.arrayContaining(['test/reliability/**', 'test/browser/**']));
    // …and the README says so and names the scripts that run them.
    for (const [script, config, dir] of [
      ['test:reliability', reliability, 'test/reliability'],
      ['test:browser', browser, 'test/browser'],
    ] as const) {
      expect(quickStart).toContain(`\`npm run ${script}\``);
      expect(quickStart).toContain(`\`${dir}\``);
      expect(SCRIPTS[script]).toBe(`vitest run -c vitest.${script.split(':')[1]}.config.ts`);
      expect(config.test?.include).toEqual([`${dir}/**/*.test.ts`]);
    }
    // The slow suite is named files: npm test leaves out exactly those, and the README names each.
    expect(SCRIPTS['test:slow']).toBe('vitest run -c vitest.slow.config.ts');
    expect(slow.test?.include).toEqual(SLOW_TESTS);
    expect(unit.test?.exclude).toEqual(expect.arrayContaining(SLOW_TESTS));
    expect(quickStart).toContain('`npm run test:slow`');
    for (const file of SLOW_TESTS) expect(quickStart).toContain(`\`${file}\``);
  });
});
