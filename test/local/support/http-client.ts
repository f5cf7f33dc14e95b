import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

/** Connections a test opened and holds without finishing a request; counts how many the server closed. */
export interface StalledConnections {
  readonly sockets: readonly Socket[];
  /** How many the server has closed (or refused) so far. */
  closed(): number;
  /** Everything the server wrote on the `index`th connection (e.g. a `408` answer). */
  received(index: number): string;
  destroy(): void;
}

/**
 * Opens `count` connections to `127.0.0.1:port` and writes `first` on each once it connects, then
 * nothing more: a slow-loris client.
 */
export function openStalled(port: number, count: number, first: string): StalledConnections {
  let closed = 0;
  const received = Array.from({ length: count }, () => '');
  const sockets = Array.from({ length: count }, (_, index) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => undefined); // a refused or reset connection counts as closed
    socket.on('data', (chunk: Buffer) => (received[index] += chunk.toString('latin1')));
    socket.on('close', () => void closed++);
    socket.on('connect', () => socket.write(first));
    return socket;
  });
  return {
    sockets,
    closed: () => closed,
    received: (index) => received[index]!,
    destroy: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

export { waitUntil } from '../../helpers/wait';

/**
 * One request to `127.0.0.1:port` with the `Host` header as given (`fetch` will not send a
 * chosen Host), on a fresh connection.
 */
export function requestWithHost(
  port: number,
  {
    host,
    path,
    method = 'GET',
    headers = {},
    body,
  }: { host: string; path: string; method?: string; headers?: OutgoingHttpHeaders; body?: string },
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port, path, method, agent: false, headers: { ...headers, host }, timeout: 10_000 },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            json: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') as Record<string, unknown>,
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${path}: no answer`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
