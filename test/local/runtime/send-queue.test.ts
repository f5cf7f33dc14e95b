import { describe, expect, it } from 'vitest';
import { createSendQueue } from '../../../local/runtime/send-queue';

describe('the local send queue', () => {
  it('queues an id once while it is queued or being sent: the sweeper feeds the whole backlog every pass', async () => {
    const started: string[] = [];
    const queue = createSendQueue({ send: async (id) => void started.push(id), concurrency: 1, onError: () => undefined });
    queue.feed(['a', 'b', 'c']);
    queue.feed(['a', 'b', 'c', 'd']);
    queue.feed(['b', 'd']);
    await queue.idle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('takes an id again once its send is over (a retry that came due)', async () => {
    const started: string[] = [];
    const queue = createSendQueue({ send: async (id) => void started.push(id), concurrency: 2, onError: () => undefined });
    queue.feed(['a']);
    await queue.idle();
    queue.feed(['a']);
    await queue.idle();
    expect(started).toEqual(['a', 'a']);
  });
});
