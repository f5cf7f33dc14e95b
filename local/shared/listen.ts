import type { Server } from 'node:http';
import { listen as listenOn } from '../http';
import { PortInUseError, RuntimeError } from './errors';

/**
 * Listens on `host:port` (0: a free port) and returns the port, for the runtime and
 * `sms-relay console`: a taken port is a `PortInUseError` (the CLI suggests another), any other
 * failure a `RuntimeError`.
 *
 * @example
 * ```ts
 * const port = await listen(server, 3000, '127.0.0.1');
 * ```
 */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  return await listenOn(server, { port, host }).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'EADDRINUSE'
      ? new PortInUseError(port, { cause: error })
      : new RuntimeError(`cannot listen on ${host}:${port}: ${error.message}`, { cause: error });
  });
}
