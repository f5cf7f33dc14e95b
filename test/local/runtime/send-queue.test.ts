import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSendQueue } from '../../../local/runtime/send-queue';

describe('the local send queue', () => {
  it('queues an id once while it is queued or being sent: the sweeper feeds the whole backlog every pass', async () => {
    const started: string[] = [];
    const queue = createSendQueue({
      send: async (id) => void started.push(id),
      concurrency: 1,
      onError: () => undefined,
    });
    queue.feed(['a', 'b', 'c']);
    queue.feed(['a', 'b', 'c', 'd']);
    queue.feed(['b', 'd']);
    await queue.idle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('takes an id again once its send is over (a retry that came due)', async () => {
    const started: string[] = [];
    const queue = createSendQueue({
      send: async (id) => void started.push(id),
      concurrency: 2,
      onError: () => undefined,
    });
    queue.feed(['a']);
    await queue.idle();
    queue.feed(['a']);
    await queue.idle();
    expect(started).toEqual(['a', 'a']);
  });

  describe('feedAt: a retry sent at its backoff', () => {
    afterEach(() => void vi.useRealTimers());

    it('feeds the id once the clock reaches the given time, not before', async () => {
      vi.useFakeTimers({ now: new Date('2026-11-26T10:00:00.000Z') });
      const started: number[] = [];
      const queue = createSendQueue({
        send: async () => void started.push(Date.now()),
        concurrency: 1,
        onError: () => undefined,
      });
      const at = new Date('2026-11-26T10:00:05.000Z');
      queue.feedAt('a', at);
      await vi.advanceTimersByTimeAsync(4_999);
      expect(started).toEqual([]);
      await vi.advanceTimersByTimeAsync(2);
      await queue.idle();
      expect(started).toHaveLength(1);
      expect(started[0]).toBeGreaterThanOrEqual(at.getTime());
    });

    it('feeds nothing after stop: the record waits in the table for the next start', async () => {
      vi.useFakeTimers();
      const started: string[] = [];
      const queue = createSendQueue({
        send: async (id) => void started.push(id),
        concurrency: 1,
        onError: () => undefined,
      });
      queue.feedAt('a', new Date(Date.now() + 1_000));
      queue.stop();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(started).toEqual([]);
    });

    it('does not feed twice an id the sweeper already queued', async () => {
      vi.useFakeTimers();
      const started: string[] = [];
      let release!: () => void;
      const blocked = new Promise<void>((resolve) => (release = resolve));
      const queue = createSendQueue({
        send: async (id) => {
          started.push(id);
          await blocked;
        },
        concurrency: 1,
        onError: () => undefined,
      });
      queue.feedAt('a', new Date(Date.now() + 1_000));
      queue.feed(['a']);
      await vi.advanceTimersByTimeAsync(1_001);
      release();
      await queue.idle();
      expect(started).toEqual(['a']);
    });
  });
});
