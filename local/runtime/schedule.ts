import { readSchedule } from '../../functions/core/schedule';
import { invalidSetting } from '../shared/errors';

const UNIT_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

/** When a cron expression cannot be followed locally, the balance watch runs this often. */
export const CRON_FALLBACK_MS = 3_600_000;

export interface LocalSchedule {
  readonly intervalMs: number;
  /** For the banner, e.g. `every 5 minutes`. */
  readonly description: string;
}

/**
 * Reads an EventBridge schedule expression for a local timer. `rate(N unit)` is followed exactly;
 * a `cron(…)` expression runs hourly instead: the runtime is a development tool, and a cron parser
 * would be a dependency for a check that also runs once at start-up.
 *
 * @throws {RuntimeError} neither `rate(…)` nor `cron(…)`
 *
 * @example
 * ```ts
 * localSchedule('rate(5 minutes)'); // { intervalMs: 300000, description: 'every 5 minutes' }
 * localSchedule('cron(0 6 * * ? *)').intervalMs; // 3600000
 * ```
 */
export function localSchedule(expression: string): LocalSchedule {
  const schedule = readSchedule(expression.trim());
  if (schedule?.kind === 'rate') {
    const { count, unit } = schedule;
    if (count < 1) throw invalidSetting('balance.schedule', `"${expression}" has a zero rate`);
    return { intervalMs: count * UNIT_MS[unit], description: `every ${count === 1 ? unit : `${count} ${unit}s`}` };
  }
  if (schedule?.kind === 'cron') {
    return { intervalMs: CRON_FALLBACK_MS, description: `every hour (${expression} is not followed locally)` };
  }
  throw invalidSetting('balance.schedule', `"${expression}" is not rate(…) or cron(…)`);
}

export interface Repeating {
  /** Stops the timer and waits for a run in progress to finish. */
  stop(): Promise<void>;
}

export interface RepeatOptions {
  readonly intervalMs: number;
  /**
   * Run once right away as well.
   * @default false
   */
  readonly immediately?: boolean;
  /** Told about a run that threw; the next run still happens. */
  readonly onError: (error: unknown) => void;
  /**
   * At most this share of the time is spent running: after a run of `d` ms the next waits at
   * least `d × (1 − share) / share`. The local sweeper's first run scans the whole table, which
   * takes ~0.5 s at 10,000 records, and a large backlog makes any run long: run every second, such
   * runs would keep a core busy doing nothing.
   * @default 1 (no limit: every `intervalMs`)
   */
  readonly maxShare?: number;
  /**
   * The longest pause `maxShare` may impose. A slow run on a busy machine (a sweep while a backlog
   * is sent and listings poll) would otherwise push the next one back for many seconds, and with it
   * every retry that comes due meanwhile.
   * @default Infinity
   */
  readonly maxIntervalMs?: number;
}

/**
 * Runs `task` every `intervalMs`, never two runs at once: the next run is timed from the end of
 * the last, as a slow sweep must not pile up behind itself.
 *
 * @example
 * ```ts
 * const sweeping = repeat(() => sweepOnce(), { intervalMs: 1_000, onError: (e) => console.error(e) });
 * await sweeping.stop();
 * ```
 */
export function repeat(
  task: () => Promise<void>,
  { intervalMs, immediately = false, onError, maxShare = 1, maxIntervalMs = Number.POSITIVE_INFINITY }: RepeatOptions,
): Repeating {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const run = (): void => {
    timer = undefined;
    if (stopped) return;
    const started = performance.now();
    running = task()
      .catch(onError)
      .finally(() => {
        running = undefined;
        const took = performance.now() - started;
        if (!stopped)
          timer = setTimeout(
            run,
            Math.min(Math.max(intervalMs, maxIntervalMs), Math.max(intervalMs, (took * (1 - maxShare)) / maxShare)),
          );
      });
  };
  timer = setTimeout(run, immediately ? 0 : intervalMs);
  return {
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
