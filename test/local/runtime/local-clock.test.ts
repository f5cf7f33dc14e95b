import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, vi } from 'vitest';
import { test } from '../../helpers/fixtures';
import { localClock } from '../../../local/runtime/local-clock';
import { resolveRuntimeSettings } from '../../../local/shared/settings';

let dir: string;
let file: string;

test.beforeEach(({ tempDir }) => {
  dir = tempDir;
  file = join(dir, 'clock');
  vi.useFakeTimers({ now: new Date('2026-11-28T07:00:00.000Z'), toFake: ['Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the local clock (RELAY_LOCAL_CLOCK, tests only)', () => {
  test('runs ahead of the system clock by the milliseconds in its file, read again at every reading', () => {
    writeFileSync(file, '0\n');
    const clock = localClock(file);
    expect(clock().toISOString()).toBe('2026-11-28T07:00:00.000Z');
    writeFileSync(file, String(8 * 60_000));
    expect(clock().toISOString()).toBe('2026-11-28T07:08:00.000Z');
    vi.setSystemTime(new Date('2026-11-28T07:00:01.000Z'));
    expect(clock().toISOString()).toBe('2026-11-28T07:08:01.000Z');
  });

  test('keeps the last value when a later read fails (the file caught while being rewritten)', () => {
    writeFileSync(file, '60000');
    const clock = localClock(file);
    writeFileSync(file, '');
    expect(clock().toISOString()).toBe('2026-11-28T07:01:00.000Z');
    rmSync(file);
    expect(clock().toISOString()).toBe('2026-11-28T07:01:00.000Z');
  });

  test('refuses at the start a file that is missing or holds anything but a whole number, naming the variable', () => {
    expect(() => localClock(file)).toThrow(`RELAY_LOCAL_CLOCK: ${file} must hold a whole number of milliseconds`);
    writeFileSync(file, '-5');
    expect(() => localClock(file)).toThrow('RELAY_LOCAL_CLOCK:');
    writeFileSync(file, '2 minutes');
    expect(() => localClock(file)).toThrow('RELAY_LOCAL_CLOCK:');
  });

  test('is named by the runtime settings only when set', () => {
    expect(resolveRuntimeSettings({}, {}, '/repo').localClockPath).toBeUndefined();
    expect(resolveRuntimeSettings({}, { RELAY_LOCAL_CLOCK: 'e2e/clock' }, '/repo').localClockPath).toBe(
      '/repo/e2e/clock',
    );
  });
});
