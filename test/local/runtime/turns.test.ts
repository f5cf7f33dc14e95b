import { describe, expect, it } from 'vitest';
import { takeTurns } from '../../../local/runtime/turns';

describe('takeTurns', () => {
  it('runs one task at a time, in order, and passes results and failures through', async () => {
    const turns = takeTurns({ maxShare: 1 });
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const task = (n: number) => async (): Promise<number> => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push(n);
      running -= 1;
      return n;
    };
    const failing = turns.run(async () => {
      throw new Error('listing failed');
    });
    const results = await Promise.all([turns.run(task(1)), turns.run(task(2)), turns.run(task(3))]);
    await expect(failing).rejects.toThrow('listing failed');
    expect(results).toEqual([1, 2, 3]);
    expect(order).toEqual([1, 2, 3]);
    expect(most).toBe(1);
  });

  it('leaves the rest of the time to other work: after a task of d ms the next waits d × (1 − share) / share', async () => {
    const turns = takeTurns({ maxShare: 0.25 });
    const spans: { start: number; end: number }[] = [];
    const task = async (): Promise<void> => {
      const start = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 30));
      spans.push({ start, end: performance.now() });
    };
    await Promise.all([turns.run(task), turns.run(task), turns.run(task)]);
    // Lower bounds only: a busy machine makes gaps longer, never shorter.
    for (let index = 1; index < spans.length; index += 1) {
      const took = spans[index - 1]!.end - spans[index - 1]!.start;
      expect(spans[index]!.start - spans[index - 1]!.end).toBeGreaterThanOrEqual(took * 3 - 2); // timers may fire a millisecond early
    }
  });

  it('pauses only while other work uses what the tasks share: uncontended, the next task starts at once', async () => {
    let busy = false;
    const turns = takeTurns({ maxShare: 0.01, contended: () => busy });
    const slow = async (): Promise<void> => await new Promise((resolve) => setTimeout(resolve, 20));
    // At 1 % a 20 ms task leaves about 2 s to other work. Whether the next task waited for that pause
    // shows in its order against a timer set for half of it, whatever the machine's speed.
    const againstHalfThePause = async (): Promise<string[]> => {
      const order: string[] = [];
      const half = new Promise<void>((resolve) =>
        setTimeout(
          () => {
            order.push('half the pause');
            resolve();
          },
          (20 * 99) / 2,
        ),
      );
      await turns.run(async () => {
        order.push('task');
      });
      await half;
      return order;
    };
    await turns.run(slow);
    expect(await againstHalfThePause()).toEqual(['task', 'half the pause']);

    await turns.run(slow);
    busy = true;
    const busyStart = performance.now();
    expect(await againstHalfThePause()).toEqual(['half the pause', 'task']);
    // The pause is 99 × the task's measured time, and a 20 ms timer may fire up to a millisecond early.
    expect(performance.now() - busyStart).toBeGreaterThanOrEqual((20 - 1) * 99);
  });
});
