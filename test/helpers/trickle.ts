import { connect, type Socket } from 'node:net';

/** A slow-loris client that keeps `count` connections open, each trickling a request body. */
export interface Trickle {
  /** Connections opened so far, the replacements included. */
  opened(): number;
  /** Connections open right now (connected, not yet closed). */
  connected(): number;
  /** Connections the server closed (each one is replaced at once). */
  closed(): number;
  /** How many of the closed ones the server answered first (e.g. `408`) rather than just closing. */
  answered(): number;
  /** Stops: no more bytes, no replacements, every connection closed. */
  stop(): void;
}

export interface TrickleOptions {
  readonly host?: string;
  readonly port: number;
  readonly count: number;
  /** Written at once on each connection: a request head announcing a body it never finishes. */
  readonly head: string;
  /** One body byte on each connection this often. @default 1000 */
  readonly intervalMs?: number;
}

/**
 * Opens `count` connections that send `head` and then one body byte every `intervalMs`, and
 * replaces each one the server closes, so the server always has `count` slow clients: the attack
 * of a slow-client attack (256 connections, one byte a second).
 *
 * @example
 * ```ts
 * const trickle = startTrickle({ port, count: 256, head: `POST /hooks/notify HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n` });
 * try { ... } finally { trickle.stop(); }
 * ```
 */
export function startTrickle({ host = '127.0.0.1', port, count, head, intervalMs = 1_000 }: TrickleOptions): Trickle {
  const sockets = new Set<Socket>();
  let opened = 0;
  let connected = 0;
  let closed = 0;
  let answered = 0;
  let stopped = false;

  const open = (): void => {
    if (stopped) return;
    opened += 1;
    const socket = connect({ host, port });
    let heard = false;
    sockets.add(socket);
    socket.on('connect', () => {
      connected += 1;
      socket.write(head);
    });
    socket.on('data', () => (heard = true));
    socket.on('error', () => undefined); // a reset is how a refused connection ends
    socket.on('close', () => {
      sockets.delete(socket);
      if (!socket.connecting) connected -= 1;
      if (stopped) return;
      closed += 1;
      if (heard) answered += 1;
      // Replaced on the next turn, not in a tight loop against a server that refuses at once.
      setTimeout(open, 10);
    });
  };

  for (let index = 0; index < count; index += 1) open();
  const timer = setInterval(() => {
    for (const socket of sockets) if (socket.writable && !socket.connecting) socket.write('a');
  }, intervalMs);

  return {
    opened: () => opened,
    connected: () => connected,
    closed: () => closed,
    answered: () => answered,
    stop: () => {
      stopped = true;
      clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
}
