import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import './logs';

/**
 * Makes the directory where every child process of the run (runtimes, CLI commands) leaves its
 * output, for `leaks.test.ts`. Removed at the end unless RELIABILITY_KEEP_LOGS=1.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-reliability-logs-'));
  project.provide('reliabilityLogDir', dir);
  return () => {
    if (process.env['RELIABILITY_KEEP_LOGS'] === '1') {
      console.log(`reliability: child process logs kept in ${dir}`);
      return;
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
