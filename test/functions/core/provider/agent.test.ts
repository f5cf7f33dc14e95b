import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSmsClient, type SmsClient } from '../../../../functions/core/provider';
import { API_KEY, json, SEND_OK } from './support';

const SEND = { phoneNumbers: '255712345678', message: 'Hi' } as const;

interface KeepAliveServer {
  readonly baseUrl: string;
  /** Requests per connection, in accept order. */
  readonly served: number[];
  /** Resolves when the connection numbered `index` has closed. */
  closed(index: number): Promise<void>;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A send endpoint that keeps idle connections for `keepAliveTimeoutMs` and announces it
 * (`Keep-Alive: timeout=N`), answering each request after `answerAfterMs`.
 */
async function serve(keepAliveTimeoutMs: number, { answerAfterMs = 0 } = {}): Promise<KeepAliveServer> {
  const sockets: Socket[] = [];
  const served: number[] = [];
  const server = http.createServer((request, response) => {
    served[sockets.indexOf(request.socket)]! += 1;
    request.resume().on('end', () => setTimeout(() => json(response, 200, SEND_OK), answerAfterMs));
  });
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.on('connection', (socket: Socket) => {
    sockets.push(socket);
    served.push(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    closed: (index) => {
      const socket = sockets[index]!;
      return socket.closed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));
    },
  };
}

function clientFor(baseUrl: string, keepAliveMs: number): SmsClient {
  const client = createSmsClient({ baseUrl, apiKey: API_KEY, keepAliveMs });
  cleanups.push(() => client.close());
  return client;
}

/** Moves the wall clock only, as a Lambda freeze does: the sockets' own idle timers do not fire. */
function freezeFor(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + ms);
}

describe('keep-alive connections', () => {
  it('carries sends over one connection while it is idle for less than keepAliveMs', async () => {
    const server = await serve(60_000);
    const client = clientFor(server.baseUrl, 60_000);

    await client.send(SEND);
    freezeFor(30_000);
    await client.send(SEND);

    expect(server.served).toEqual([2]);
  });

  it('never sends on a connection idle for keepAliveMs by the clock, though its idle timer has not fired (a Lambda freeze)', async () => {
    const server = await serve(120_000);
    const client = clientFor(server.baseUrl, 60_000);

    await client.send(SEND);
    freezeFor(61_000);
    await client.send(SEND);

    // The stale connection was dropped by the client, unused: the second send opened a new one.
    expect(server.served).toEqual([1, 1]);
    await server.closed(0);
  });

  it("goes by the service's shorter Keep-Alive timeout, less a second", async () => {
    // The server announces `Keep-Alive: timeout=3`: a connection is reused for 2 s of idleness.
    const server = await serve(3_000);
    const client = clientFor(server.baseUrl, 60_000);

    await client.send(SEND);
    freezeFor(1_000);
    await client.send(SEND);
    freezeFor(2_500);
    await client.send(SEND);

    expect(server.served).toEqual([2, 1]);
  });

  it('closes an idle connection itself while the process runs', async () => {
    // The server would keep it for a minute; only the client can close it before the test ends.
    const server = await serve(60_000);
    const client = clientFor(server.baseUrl, 50);

    await client.send(SEND);

    await server.closed(0);
    expect(server.served).toEqual([1]);
  });

  it('lets a busy connection wait for its answer longer than keepAliveMs', async () => {
    // The idle limit is for sockets in the pool; one carrying a request is bounded by timeoutMs.
    const server = await serve(60_000, { answerAfterMs: 300 });
    const client = clientFor(server.baseUrl, 20);

    await expect(client.send(SEND)).resolves.toMatchObject({ success: true });
    expect(server.served).toEqual([1]);
  });
});
