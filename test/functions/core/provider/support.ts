import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { inspect } from 'node:util';
import { expect } from 'vitest';
import { SmsServiceError } from '../../../../functions/core/provider';
import { TEST_TLS_CERT, TEST_TLS_KEY } from './tls-fixture';

/** Shaped like a real key, and distinctive enough that any leak is found by substring search. */
export const API_KEY = 'sk_live_9f8e7d6c5b4a-SECRET-0123456789';

/** Every way a thrown error could end up in a log: none may contain `secret`. */
export function expectNoSecret(error: unknown, secret: string = API_KEY): void {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current);
    const renderings = [
      String(current),
      JSON.stringify(current) ?? '',
      inspect(current, { depth: Infinity, showHidden: true, getters: true }),
    ];
    if (current instanceof Error) renderings.push(current.message, current.stack ?? '');
    if (typeof current === 'object') {
      for (const key of Reflect.ownKeys(current)) {
        renderings.push(inspect((current as Record<PropertyKey, unknown>)[key], { depth: Infinity, showHidden: true }));
      }
    }
    for (const rendering of renderings) expect(rendering).not.toContain(secret);
    current = current instanceof Error ? current.cause : undefined;
  }
}

/** The rejection of `promise` (failing the test if it resolves), checked for key leaks. */
export async function rejectionOf(promise: Promise<unknown>, secret: string = API_KEY): Promise<SmsServiceError> {
  let result: unknown;
  try {
    result = await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SmsServiceError);
    expectNoSecret(error, secret);
    return error as SmsServiceError;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(result)}`);
}

export interface RecordedExchange {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** Index of the TCP connection that carried it (0-based, in accept order). */
  readonly connection: number;
  /** How many requests that connection had carried before this one. */
  readonly previousOnConnection: number;
}

export interface TinyServer {
  readonly baseUrl: string;
  readonly port: number;
  readonly requests: RecordedExchange[];
  connections(): number;
  /** Resolves when every accepted connection has closed. */
  allConnectionsClosed(): Promise<void>;
  close(): Promise<void>;
}

type Handler = (request: http.IncomingMessage, response: http.ServerResponse, exchange: RecordedExchange) => void;

/**
 * A loopback HTTP(S) server for answers the sandbox cannot give (non-JSON 200, 418, cut bodies…).
 * The handler runs after the request body has been read in full and recorded.
 */
export async function startTinyServer(handler: Handler, { tls = false } = {}): Promise<TinyServer> {
  const requests: RecordedExchange[] = [];
  const sockets: net.Socket[] = [];
  const served = new WeakMap<net.Socket, number>();
  const listener = (request: http.IncomingMessage, response: http.ServerResponse): void => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const previousOnConnection = served.get(request.socket) ?? 0;
      served.set(request.socket, previousOnConnection + 1);
      const exchange: RecordedExchange = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        connection: sockets.indexOf(request.socket),
        previousOnConnection,
      };
      requests.push(exchange);
      handler(request, response, exchange);
    });
  };
  const server = tls
    ? https.createServer({ cert: TEST_TLS_CERT, key: TEST_TLS_KEY }, listener)
    : http.createServer(listener);
  server.on(tls ? 'secureConnection' : 'connection', (socket: net.Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    baseUrl: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    connections: () => sockets.length,
    allConnectionsClosed: () =>
      Promise.all(
        sockets.map((socket) => (socket.closed ? undefined : new Promise((resolve) => socket.once('close', resolve)))),
      ).then(() => undefined),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A TCP pass-through that counts connections, to see the client's pooling against the real sandbox. */
export async function startCountingProxy(
  targetPort: number,
): Promise<{ baseUrl: string; connections(): number; close(): Promise<void> }> {
  let count = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    count += 1;
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    connections: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port that was just free: listening on it and closing again leaves nothing to accept. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function json(
  response: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  response.end(payload);
}

export const SEND_OK = {
  success: true,
  message: 'Message queued',
  senderId: 'ACME',
  recipients: [{ to: '255712345678', id: 'm-1' }],
  deducted: 20,
  remainingBalance: 980,
} as const;

export const BALANCE_OK = { success: true, balance: 1000, currency: 'TZS', smsRate: 20 } as const;
