import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_LIMITS } from '../../../local/runtime/http-guard';
import { startSandbox } from '../../../local/sandbox/server';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { openStalled, waitUntil } from '../support/http-client';

describe('the sandbox against floods and slow clients', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ apiKey: 'sandbox-guard-key-81c2' });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('refuses connections beyond the cap at once and times the stalled ones out', async () => {
    const beyond = 20;
    const count = HTTP_LIMITS.maxConnections + beyond;
    const stalled = openStalled(sandbox.port, count, `GET /_sandbox/messages HTTP/1.1\r\nHost: 127.0.0.1:${sandbox.port}\r\n`);
    try {
      await waitUntil(() => stalled.closed() >= beyond, 'the connections beyond the cap to be refused');
      await waitUntil(() => stalled.closed() === count, 'the header time-out to close the rest', HTTP_LIMITS.headersTimeoutMs + 15_000);
      const answered = stalled.sockets.filter((_, index) => stalled.received(index).startsWith('HTTP/1.1 408 ')).length;
      // The ones inside the cap were taken in and timed out; the rest were closed unread.
      expect({ answered, refused: count - answered }).toEqual({ answered: HTTP_LIMITS.maxConnections, refused: beyond });
    } finally {
      stalled.destroy();
    }
  }, 40_000);
});
