import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';

/**
 * Connection limits of the local HTTP servers (the runtime's and the sandbox's), kept together so
 * they can move into a shared defaults module as one piece. Sized for a person trying the relay
 * through a tunnel: real senders finish a request in well under a second; a client that trickles
 * bytes (slow-loris) or opens connections and sends nothing is cut off within seconds, and no
 * number of them holds more than `maxConnections` sockets.
 */
export const HTTP_LIMITS = {
  /**
   * The whole request head (request line and headers) must arrive within this, counted from the
   * connection (or from the end of the previous request on a kept-alive connection); otherwise
   * the connection is answered 408 and closed. Node's `headersTimeout`.
   */
  headersTimeoutMs: 10_000,
  /**
   * The whole request, head and body, must arrive within this: the per-request body-read
   * deadline. Past it the connection is answered 408 (when no answer has started) and closed.
   * The time the handler then takes to answer does not count. Node's `requestTimeout`; 1 MiB in
   * 30 s is about 35 KB/s, slower than any webhook sender.
   */
  requestTimeoutMs: 30_000,
  /**
   * How often the two time-outs above are checked, so a late client is cut at most this long
   * after its time-out. Node's `connectionsCheckingInterval` (default 30 s).
   */
  checkIntervalMs: 1_000,
  /**
   * An idle kept-alive connection is closed after this. It outlives undici's 4 s idle time-out,
   * so a pooled client socket is never closed under a request in flight.
   */
  keepAliveTimeoutMs: 5_000,
  /**
   * Open connections at most; a connection beyond it is closed as soon as it is accepted, before
   * anything is read. Far above what a sender or the test suites open at once (128).
   */
  maxConnections: 256,
} as const;

export type HttpLimits = { readonly [Key in keyof typeof HTTP_LIMITS]: number };

/**
 * An HTTP server with the limits above: header and request time-outs, a keep-alive time-out and a
 * cap on open connections.
 *
 * @example
 * ```ts
 * const server = createGuardedServer((request, response) => response.end('ok'));
 * server.listen(0, '127.0.0.1');
 * ```
 */
export function createGuardedServer(listener: RequestListener, limits: HttpLimits = HTTP_LIMITS): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
    },
    listener,
  );
  server.maxConnections = limits.maxConnections;
  return server;
}

/** Headers a proxy or tunnel adds: a request carrying one came from further away than loopback. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip', 'cf-connecting-ip'] as const;

/**
 * Whether a request may use a local-only endpoint: its `Host` names the loopback address and the
 * port it reached (`127.0.0.1:<port>`, `localhost:<port>` or `[::1]:<port>`), which a page on
 * another site cannot make a browser send (DNS rebinding), and no proxy or tunnel forwarded it.
 *
 * @example
 * ```ts
 * if (!isLocalRequest(request)) return sendJson(response, 403, { error: 'local requests only' });
 * ```
 */
export function isLocalRequest(request: IncomingMessage): boolean {
  const port = request.socket.localPort;
  const host = request.headers.host;
  if (port === undefined || host === undefined) return false;
  if (FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined)) return false;
  return host === `127.0.0.1:${port}` || host === `localhost:${port}` || host === `[::1]:${port}`;
}

/** The body, or `undefined` once it grows past `limit` (the rest is discarded, not buffered). */
export async function readLimited(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    discardRest(request);
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  return await new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      request.off('data', onData).off('end', onEnd).off('error', reject);
      discardRest(request);
      resolve(undefined);
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    request.on('data', onData).once('end', onEnd).once('error', reject);
  });
}

/** Past this much discarded body the connection is cut instead of drained. */
const MAX_DISCARD_BYTES = 16 * 1024 * 1024;

/**
 * Reads and drops the rest of a refused body, so the client gets to read the answer instead of a
 * reset; a client that keeps sending far past the limit is cut off.
 */
function discardRest(request: IncomingMessage): void {
  let discarded = 0;
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > MAX_DISCARD_BYTES) request.socket.destroy();
  });
  request.resume();
}
