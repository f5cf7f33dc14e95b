import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../../../local/shared/errors';
import { localSchedule, repeat } from '../../../local/runtime/schedule';
import { waitUntil } from '../../helpers/wait';

const settle = async (): Promise<void> => await new Promise((resolve) => setImmediate(resolve));

describe('local schedules', () => {
  it('follow rate() expressions and run cron() hourly', () => {
    expect(localSchedule('rate(5 minutes)')).toEqual({ intervalMs: 300_000, description: 'every 5 minutes' });
    expect(localSchedule('rate(1 hour)')).toEqual({ intervalMs: 3_600_000, description: 'every hour' });
    expect(localSchedule('rate(2 days)').intervalMs).toBe(172_800_000);
    expect(localSchedule('cron(0 6 * * ? *)')).toEqual({
      intervalMs: 3_600_000,
      description: 'every hour (cron(0 6 * * ? *) is not followed locally)',
    });
    expect(() => localSchedule('rate(0 minutes)')).toThrow(RuntimeError);
    expect(() => localSchedule('hourly')).toThrow('balance.schedule: "hourly" is not rate(…) or cron(…)');
  });

  it('never overlap runs, and stop waits for the run in progress', async () => {
    let release!: () => void;
    let runs = 0;
    const sweeping = repeat(
      async () => {
        runs += 1;
        await new Promise<void>((resolve) => (release = resolve));
      },
      { intervalMs: 0, immediately: true, onError: () => undefined },
    );
    await waitUntil('the first run', () => runs === 1, { intervalMs: 1 });
    let stopped = false;
    const stopping = sweeping.stop().then(() => (stopped = true));
    for (let index = 0; index < 5; index += 1) await settle();
    expect({ runs, stopped }).toEqual({ runs: 1, stopped: false });
    release();
    await stopping;
    expect({ runs, stopped }).toEqual({ runs: 1, stopped: true });
  });

  it('keep running after a failed run', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const failing = repeat(
      async () => {
        runs += 1;
        throw new Error(`run ${runs}`);
      },
      { intervalMs: 0, immediately: true, onError: (error) => errors.push(error) },
    );
    await waitUntil('three runs', () => runs >= 3, { intervalMs: 1 });
    await failing.stop();
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect((errors[0] as Error).message).toBe('run 1');
  });

  it('leave the rest of the time to other work when runs are long (maxShare)', async () => {
    const starts: number[] = [];
    const sweeping = repeat(
      async () => {
        starts.push(performance.now());
        await new Promise((resolve) => setTimeout(resolve, 40));
      },
      { intervalMs: 1, maxShare: 0.2, immediately: true, onError: () => undefined },
    );
    await waitUntil('three runs', () => starts.length >= 3, { intervalMs: 20 });
    await sweeping.stop();
    // A run of ≥ 40 ms at a share of 0.2 is followed by ≥ 160 ms of rest; without the share it would be 1 ms.
    const gaps = starts.slice(1).map((start, index) => start - starts[index]!);
    expect(
      gaps.every((gap) => gap >= 190),
      JSON.stringify(gaps),
    ).toBe(true);
  });

  it('never pause longer than maxIntervalMs, however long a run took (a sweep on a busy machine)', async () => {
    let runs = 0;
    const sweeping = repeat(
      async () => {
        runs += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
      // Without the cap, a share this small would pause ~200 s after each 20 ms run.
      { intervalMs: 1, maxShare: 0.0001, maxIntervalMs: 10, immediately: true, onError: () => undefined },
    );
    await waitUntil('three runs', () => runs >= 3, { intervalMs: 20 });
    await sweeping.stop();
    expect(runs).toBeGreaterThanOrEqual(3);
  });
});
