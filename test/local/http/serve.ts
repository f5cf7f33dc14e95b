import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { afterEach } from 'vitest';
import { createGuardedServer, listen, type HttpLimits } from '../../../local/http';

const servers: Server[] = [];

/** A guarded server on a free loopback port, closed after each test. */
export async function serve(
  handler: (request: IncomingMessage, response: ServerResponse) => void | Promise<void>,
  limits?: HttpLimits,
): Promise<{ server: Server; port: number; url: string }> {
  const server = createGuardedServer((request, response) => void handler(request, response), limits);
  servers.push(server);
  const port = await listen(server, { port: 0, host: '127.0.0.1' });
  return { server, port, url: `http://127.0.0.1:${port}` };
}

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      async (server) =>
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    ),
  );
});
