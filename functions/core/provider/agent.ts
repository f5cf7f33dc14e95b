import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';

export interface KeepAliveAgentOptions {
  readonly tls: boolean;
  /** Trusted CA certificates for TLS; Node's bundled roots when absent. */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /**
   * Longest a socket may sit idle and still carry a request. Node lowers it, socket by socket, to
   * the server's `Keep-Alive: timeout=N` less one second when the server announces one.
   */
  readonly idleMs: number;
}

/** A keep-alive agent that never hands out a socket idle for longer than its limit. */
export interface KeepAliveAgent {
  readonly agent: http.Agent;
  /**
   * Destroys the idle sockets past their limit and resolves once the agent has let go of them.
   * Await it before each request: the agent's own idle timer cannot run while Lambda has the
   * process frozen, so on a thaw a socket the server closed long ago may still look free.
   */
  discardStale(): Promise<void>;
}

/**
 * Creates a keep-alive agent whose idle sockets are closed by the agent, never by the caller:
 * Node's idle timer closes them while the process runs (the agent's `timeout`, which Node also
 * lowers to a server's `Keep-Alive` hint), and `discardStale()`, by the wall clock, catches those
 * whose timer a Lambda freeze held up. So a request goes out only on a socket the server has not
 * been idle on for `idleMs` (4 s by default, under the 5 s of Node, Apache and most servers):
 * a reset of such a request is a real failure, never a stale socket taken for a lost answer.
 *
 * @example
 * ```ts
 * const { agent, discardStale } = createKeepAliveAgent({ tls: true, idleMs: 4_000 });
 * await discardStale();
 * https.request({ hostname: 'sms.example', agent }, onResponse).end();
 * ```
 */
export function createKeepAliveAgent({ tls, ca, idleMs }: KeepAliveAgentOptions): KeepAliveAgent {
  const options = { keepAlive: true, timeout: idleMs };
  const agent = tls
    ? new https.Agent({ ...options, ...(ca === undefined ? {} : { ca: ca as string | Buffer | (string | Buffer)[] }) })
    : new http.Agent(options);
  const idleSince = new WeakMap<object, number>();
  const keepSocketAlive = agent.keepSocketAlive.bind(agent) as (socket: Socket) => boolean;
  // The documented hook for a socket going back to the pool: note when it became idle.
  agent.keepSocketAlive = (socket) => {
    const kept = keepSocketAlive(socket as Socket);
    if (kept) idleSince.set(socket, Date.now());
    return kept;
  };

  const isStale = (socket: Socket): boolean => {
    const since = idleSince.get(socket);
    // The limit Node gave the socket when it went idle: `idleMs`, or less after a server's hint.
    const limitMs = socket.timeout || idleMs;
    return since === undefined || Date.now() - since >= limitMs;
  };

  return {
    agent,
    discardStale: async () => {
      const closing: Promise<void>[] = [];
      for (const sockets of Object.values(agent.freeSockets)) {
        for (const socket of sockets ?? []) {
          if (socket.closed || !isStale(socket)) continue;
          // The agent drops a socket from its pool on 'close'; waiting for it means the next
          // request cannot be given this one.
          closing.push(new Promise((resolve) => socket.once('close', () => resolve())));
          socket.destroy();
        }
      }
      await Promise.all(closing);
    },
  };
}
