import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Listens on `host:port` (0: a free port) and returns the port; rejects with the socket's error
 * (`code` `EADDRINUSE` when the port is taken), which each caller words for its own users.
 *
 * @example
 * ```ts
 * const port = await listen(createGuardedServer(handler), { port: 0, host: '127.0.0.1' });
 * ```
 */
export async function listen(
  server: Server,
  { port, host }: { readonly port: number; readonly host: string },
): Promise<number> {
  return await new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => reject(error);
    server.once('error', onError);
    server.listen({ port, host }, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
