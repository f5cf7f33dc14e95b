import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpsGet } from '../../../functions/relay/https-get';

let server: Server | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

describe('createHttpsGet (the source packs’ network port)', () => {
  it('refuses anything but https before connecting', async () => {
    const get = createHttpsGet();
    await expect(get('http://sns.eu-west-1.amazonaws.com/SimpleNotificationService-a.pem')).rejects.toThrow(
      /only https/,
    );
    await expect(get('not a url')).rejects.toThrow();
  });

  it('gives up within its time-out on a host that never answers', async () => {
    server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const started = Date.now();
    await expect(createHttpsGet({ timeoutMs: 200 })(`https://127.0.0.1:${port}/cert.pem`)).rejects.toThrow(
      /within 200 ms/,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
