import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Connection limits of the local HTTP servers (the runtime's, the console's and the sandbox's),
 * kept together so they can move into a shared defaults module as one piece. Sized for a person
 * trying the relay through a tunnel, where every connection comes from 127.0.0.1: real senders
 * finish a request in well under a second; a client that trickles bytes (slow-loris) or opens
 * connections and sends nothing is cut off within seconds, and when `maxConnections` are open the
 * stalest one makes room for a new one.
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
   * How often the time-outs above and the body rate below are checked, so a late client is cut at
   * most this long after its time. Node's `connectionsCheckingInterval` (default 30 s).
   */
  checkIntervalMs: 1_000,
  /**
   * An idle kept-alive connection is closed after this. It outlives undici's 4 s idle time-out,
   * so a pooled client socket is never closed under a request in flight.
   */
  keepAliveTimeoutMs: 5_000,
  /**
   * Open connections at most. A new connection beyond it is taken and the stalest other one is
   * dropped: the one that has gone longest without sending a byte (an idle or silent one before a
   * trickling one), never one whose request is whole and being answered; only when every
   * connection is being answered is the new one refused. Far above what a sender or the test
   * suites open at once (128).
   */
  maxConnections: 256,
  /**
   * A request body must arrive at least this fast (bytes per second) once `bodyGraceMs` have
   * passed: after `bodyGraceMs + received / minBodyBytesPerSecond` it is answered 408 and closed.
   * One byte a second is cut after about 3 s; a 256 KB webhook has minutes (the request time-out
   * comes first). 1 KiB/s is slower than any real link.
   */
  minBodyBytesPerSecond: 1_024,
  /** How long a request body may take before `minBodyBytesPerSecond` applies. */
  bodyGraceMs: 3_000,
} as const;

export type HttpLimits = { readonly [Key in keyof typeof HTTP_LIMITS]: number };

/** What Node itself writes to a request it times out. */
const REQUEST_TIMEOUT_ANSWER = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/** One open connection, as the guard sees it. */
interface Connection {
  readonly socket: Socket;
  readonly openedAt: number;
  /** The request being read or answered on it, if any. */
  request: IncomingMessage | undefined;
  response: ServerResponse | undefined;
  requestAt: number;
  bytesAtRequest: number;
  /** `socket.bytesRead` when it opened or its last request ended: nothing since means it is idle. */
  bytesAtRest: number;
  /** `socket.bytesRead` at the last look, when that was, and since when it is known to be sending nothing. */
  seenBytes: number;
  seenAt: number;
  progressAt: number;
}

/**
 * An HTTP server with the limits above: header and request time-outs, a minimum body rate, a
 * keep-alive time-out and a cap on open connections that drops the stalest one.
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
  const connections = new Map<Socket, Connection>();

  server.on('connection', (socket: Socket) => {
    const now = performance.now();
    connections.set(socket, {
      socket,
      openedAt: now,
      request: undefined,
      response: undefined,
      requestAt: now,
      bytesAtRequest: 0,
      bytesAtRest: 0,
      seenBytes: 0,
      seenAt: now,
      progressAt: now,
    });
    socket.once('close', () => connections.delete(socket));
    if (connections.size <= limits.maxConnections) return;
    const stalest = stalestConnection(connections, socket);
    if (stalest === undefined) socket.destroy();
    else drop(stalest);
  });

  // Runs after the caller's listener, in the same turn: no body byte has been read yet.
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const connection = connections.get(request.socket);
    if (connection === undefined) return;
    connection.request = request;
    connection.response = response;
    connection.requestAt = performance.now();
    connection.bytesAtRequest = request.socket.bytesRead;
    // Done when answered and the body is in: a handler that answers before reading the body (a
    // refusal) leaves the rest of it to the rate check.
    const settle = (): void => {
      if (connection.request !== request || !request.complete || !response.writableFinished) return;
      connection.request = undefined;
      connection.response = undefined;
      connection.bytesAtRest = request.socket.bytesRead;
    };
    response.once('finish', settle);
    request.once('end', settle);
  });

  let lastCheck = performance.now();
  const check = setInterval(() => {
    const now = performance.now();
    // Time this process was too busy to read (timers run before pending reads) is not the
    // client's: it is added to each body's allowance, so a stall never cuts a body waiting unread.
    const stalled = Math.max(0, now - lastCheck - limits.checkIntervalMs);
    lastCheck = now;
    for (const connection of connections.values()) {
      look(connection, now);
      connection.requestAt += stalled;
      const { request, requestAt, bytesAtRequest, socket } = connection;
      if (request === undefined || request.complete) continue;
      const received = socket.bytesRead - bytesAtRequest;
      if (now - requestAt > limits.bodyGraceMs + (received * 1_000) / limits.minBodyBytesPerSecond) drop(connection);
    }
  }, limits.checkIntervalMs);
  check.unref();
  server.once('close', () => clearInterval(check));
  return server;
}

/** Notes whether the connection sent anything since the last look. */
function look(connection: Connection, now: number): void {
  const bytes = connection.socket.bytesRead;
  if (bytes > connection.seenBytes) {
    // It sent something since the last look, at some time after it: counted from that look, so a
    // connection that just opened is never staler than one that merely trickled.
    connection.progressAt = connection.seenAt;
    connection.seenBytes = bytes;
  }
  connection.seenAt = now;
}

/**
 * The connection to drop for a new one: not `newcomer`, not one whose request is whole and being
 * answered; of the others the one that has gone longest without sending a byte (an idle one has
 * sent nothing since it opened or since its last answer), the oldest first.
 */
function stalestConnection(connections: ReadonlyMap<Socket, Connection>, newcomer: Socket): Connection | undefined {
  const now = performance.now();
  let stalest: Connection | undefined;
  for (const connection of connections.values()) {
    if (connection.socket === newcomer) continue;
    look(connection, now);
    if (connection.request?.complete === true) continue;
    if (
      stalest === undefined ||
      connection.progressAt < stalest.progressAt ||
      (connection.progressAt === stalest.progressAt && connection.openedAt < stalest.openedAt)
    ) {
      stalest = connection;
    }
  }
  return stalest;
}

/**
 * Closes a connection; a client in the middle of a request is answered 408 first, as Node does
 * when it times one out. An idle one is just closed, as its keep-alive time-out would.
 */
function drop({ socket, request, response, bytesAtRest }: Connection): void {
  if (socket.destroyed) return;
  const idle = request === undefined && socket.bytesRead === bytesAtRest;
  if (idle || response?.headersSent === true) {
    socket.destroy();
    return;
  }
  socket.end(REQUEST_TIMEOUT_ANSWER, () => socket.destroy());
}
