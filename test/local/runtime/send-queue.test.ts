import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSendQueue } from '../../../local/runtime/send-queue';
import { Lane } from '../../../functions/core/lanes';

describe('the local send queue', () => {
  it('says how many ids it has queued or sending, not the retries waiting for their time: what the listings make room for', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const queue = createSendQueue({ send: async () => await blocked, concurrency: 1, onError: () => undefined });
    expect(queue.pending()).toBe(0);
    queue.feedAt('later', new Date(Date.now() + 60_000), Lane.Bulk);
    expect(queue.pending()).toBe(0);
    queue.feed(['a', 'b'], Lane.Bulk);
    expect(queue.pending()).toBe(2);
    release();
    await queue.idle();
    expect(queue.pending()).toBe(0);
    queue.stop();
  });

  it('queues an id once while it is queued or being sent: the sweeper feeds the whole backlog every pass', async () => {
    const started: string[] = [];
    const queue = createSendQueue({
      send: async (id) => void started.push(id),
      concurrency: 1,
      onError: () => undefined,
    });
    queue.feed(['a', 'b', 'c'], Lane.Bulk);
    queue.feed(['a', 'b', 'c', 'd'], Lane.Bulk);
    queue.feed(['b', 'd'], Lane.Bulk);
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
    queue.feed(['a'], Lane.Bulk);
    await queue.idle();
    queue.feed(['a'], Lane.Bulk);
    await queue.idle();
    expect(started).toEqual(['a', 'a']);
  });

  it('serves the critical lane first: an alert fed behind a bulk backlog starts before the backlog', async () => {
    const started: string[] = [];
    const releases: (() => void)[] = [];
    const queue = createSendQueue({
      send: async (id) => {
        started.push(id);
        await new Promise<void>((resolve) => releases.push(resolve));
      },
      concurrency: 1,
      onError: () => undefined,
    });
    queue.feed(['order-1', 'order-2', 'order-3'], Lane.Bulk);
    queue.feed(['alert'], Lane.Critical);
    // Each lane has its own sends in flight: the alert does not wait for the order being sent.
    expect(started).toEqual(['order-1', 'alert']);
    while (started.length < 4 || releases.length > 0) {
      releases.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await queue.idle();
    expect(started).toEqual(['order-1', 'alert', 'order-2', 'order-3']);
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
      queue.feedAt('a', at, Lane.Bulk);
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
      queue.feedAt('a', new Date(Date.now() + 1_000), Lane.Bulk);
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
      queue.feedAt('a', new Date(Date.now() + 1_000), Lane.Bulk);
      queue.feed(['a'], Lane.Bulk);
      await vi.advanceTimersByTimeAsync(1_001);
      release();
      await queue.idle();
      expect(started).toEqual(['a']);
    });
  });
});
