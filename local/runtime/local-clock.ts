import { readFileSync } from 'node:fs';
import { invalidSetting } from '../shared/errors';

/** The environment variable naming the file; read only by the local runtime (`npm start`). */
export const LOCAL_CLOCK_ENV = 'RELAY_LOCAL_CLOCK';

/**
 * LOCAL RUNTIME ONLY, for tests: the runtime's clock, running ahead of the system clock by the
 * whole number of milliseconds written in the file at `path`. The file is read again at every
 * reading of the clock, so a test that writes a larger number moves the relay's time forward
 * (quiet hours end, a heartbeat's route falls silent) and the relay acts on it at its next sweep,
 * instead of the test waiting real minutes. Every time the relay keeps reads this clock: records,
 * quiet hours and digests, heartbeats, mutes, retries. Nothing on AWS reads this variable: the
 * Lambda handlers always use the system clock.
 *
 * A read that fails after the start (the file caught while a test rewrites it) keeps the last
 * value: a test should write a new file and rename it over the old one.
 *
 * @throws {RuntimeError} the file is unreadable or not a whole number of milliseconds at the start
 *
 * @example
 * ```ts
 * const clock = localClock('/tmp/e2e/clock'); // the file holds "0"
 * writeFileSync('/tmp/e2e/clock', String(8 * 60_000)); // clock() is now 8 minutes ahead
 * ```
 */
export function localClock(path: string): () => Date {
  const read = (): number | undefined => {
    try {
      const text = readFileSync(path, 'utf8').trim();
      return /^\d+$/.test(text) ? Number(text) : undefined;
    } catch {
      return undefined;
    }
  };
  const initial = read();
  if (initial === undefined)
    throw invalidSetting(
      LOCAL_CLOCK_ENV,
      `${path} must hold a whole number of milliseconds (how far the runtime's clock runs ahead)`,
    );
  let aheadMs = initial;
  return () => {
    aheadMs = read() ?? aheadMs;
    return new Date(Date.now() + aheadMs);
  };
}
