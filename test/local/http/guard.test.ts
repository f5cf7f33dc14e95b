import { describe, expect, it } from 'vitest';
import { HTTP_LIMITS, readLimited, sendJson, type HttpLimits } from '../../../local/http';
import { openStalled, waitUntil } from '../support/http-client';
import { serve } from './serve';

/** Short time-outs and a low cap, so the test sees them act without waiting for the real ones. */
const LIMITS: HttpLimits = {
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 60_000,
  checkIntervalMs: 100,
  keepAliveTimeoutMs: 500,
  maxConnections: 4,
  minBodyBytesPerSecond: 1_024,
  bodyGraceMs: 300,
};

describe('createGuardedServer', () => {
  it('sets the shared limits on the server by default', async () => {
    const { server } = await serve((_request, response) => void response.end());
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([
      HTTP_LIMITS.headersTimeoutMs,
      HTTP_LIMITS.requestTimeoutMs,
      HTTP_LIMITS.keepAliveTimeoutMs,
    ]);
    expect(server.maxConnections).toBeUndefined();
  });

  it('answers 408 to a body that trickles below the minimum rate, and the handler never gets it', async () => {
    const bodies: unknown[] = [];
    const { port } = await serve(async (request, response) => {
      bodies.push(await readLimited(request, 10_000).catch(() => 'gone'));
      if (!response.headersSent && !response.destroyed) sendJson(response, 200, {});
    }, LIMITS);
    const [slow] = [openStalled(port, 1, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{"a":"`)];
    const trickle = setInterval(() => slow.sockets[0]!.writable && slow.sockets[0]!.write('b'), 100);
    try {
      await waitUntil('the guard to cut the slow body off', () => slow.closed() === 1);
    } finally {
      clearInterval(trickle);
      slow.destroy();
    }
    expect(slow.received(0)).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodies.every((body) => body === 'gone')).toBe(true);
  });

  it('past the cap, drops the stalest connection to take the new one', async () => {
    const { url, port } = await serve((_request, response) => sendJson(response, 200, { ok: true }), LIMITS);
    const silent = openStalled(port, LIMITS.maxConnections, '');
    try {
      // Each new connection beyond the cap closes one silent one; a real request still gets its answer.
      await waitUntil(
        'a request to get through at the cap',
        async () =>
          (await fetch(url).then(
            (answer) => answer.ok,
            () => false,
          )) && silent.closed() >= 1,
      );
      expect(silent.closed()).toBeGreaterThanOrEqual(1);
    } finally {
      silent.destroy();
    }
  });
});
