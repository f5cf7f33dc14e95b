import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { announceRuntime, findRunningRuntime, RUNTIME_FILE, withdrawRuntime } from '../../../local/shared/discovery';

describe('finding the running runtime', () => {
  it('ignores what a killed runtime left behind, and withdraws only its own announcement', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sms-relay-discovery-'));
    try {
      // The pid of a process that has certainly ended.
      const ended = spawnSync(process.execPath, ['-e', '0']).pid!;
      announceRuntime({
        pid: ended,
        url: 'http://127.0.0.1:9',
        dataDir: dir,
        providerBaseUrl: 'http://127.0.0.1:9',
        startedAt: new Date().toISOString(),
      });
      expect(await findRunningRuntime(dir)).toBeUndefined();
      withdrawRuntime(dir, process.pid);
      expect(existsSync(join(dir, RUNTIME_FILE))).toBe(true);
      withdrawRuntime(dir, ended);
      expect(existsSync(join(dir, RUNTIME_FILE))).toBe(false);
      expect(await findRunningRuntime(dir)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
