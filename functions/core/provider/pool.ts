import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';

interface IdleSince {
  readonly wallMs: number;
  readonly monotonicMs: number;
  readonly maxIdleMs: number;
}

/** One client's keep-alive sockets. */
export interface ConnectionPool {
  readonly agent: http.Agent;
  /** Remembers the server's `Keep-Alive: timeout=N` hint for the socket that carried `response`. */
  noteResponse(response: http.IncomingMessage): void;
  /** Closes pooled sockets idle past their limit; resolves once the agent has forgotten them. */
  evictStale(): Promise<void>;
  /** Closes every pooled socket (after one turned out dead, its siblings are suspect too). */
  evictAll(): Promise<void>;
  destroy(): void;
}

// Mirrors Node's own margin (HTTP_AGENT_KEEP_ALIVE_TIMEOUT_BUFFER): stop reusing before the
// server's announced deadline, not at it.
const HINT_MARGIN_MS = 1_000;
const KEEP_ALIVE_HINT = /(?:^|[\s,])timeout=(\d+)/i;

/**
 * Creates the keep-alive agent for one client, with idle tracking that survives a frozen Lambda.
 *
 * Node's agent already closes idle sockets on a timer, but timers do not run while a Lambda
 * execution environment is frozen: after a thaw the first request can take a socket the server
 * closed minutes ago. So each socket is stamped when it goes back to the pool and checked against
 * both clocks right before every request.
 *
 * @example
 * ```ts
 * const pool = createConnectionPool({ tls: true, maxSocketIdleMs: 4_000 });
 * await pool.evictStale();
 * https.request({ agent: pool.agent, ... });
 * ```
 */
export function createConnectionPool({ tls, maxSocketIdleMs, ca }: {
  readonly tls: boolean;
  readonly maxSocketIdleMs: number;
  readonly ca?: string | Buffer | readonly (string | Buffer)[] | undefined;
}): ConnectionPool {
  const agentOptions: https.AgentOptions = {
    keepAlive: true,
    // Most recently used first: the socket least likely to have been closed by the server.
    scheduling: 'lifo',
    ...(maxSocketIdleMs > 0 ? { timeout: maxSocketIdleMs } : {}),
    ...(ca === undefined ? {} : { ca: ca as string | Buffer | (string | Buffer)[] }),
  };
  const agent = tls ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const hints = new WeakMap<object, number>();
  const idle = new WeakMap<object, IdleSince>();

  const keepSocketAlive = agent.keepSocketAlive.bind(agent);
  agent.keepSocketAlive = (socket: Duplex): void => {
    // Node returns false (typed void) when the server's hint is too short to reuse safely.
    const kept = (keepSocketAlive(socket) as unknown) !== false;
    if (kept) {
      const hint = hints.get(socket);
      idle.set(socket, {
        wallMs: Date.now(),
        monotonicMs: performance.now(),
        maxIdleMs: hint === undefined ? maxSocketIdleMs : Math.min(maxSocketIdleMs, hint),
      });
    }
    return kept as unknown as void;
  };

  const freeSockets = (): Socket[] => Object.values(agent.freeSockets).flatMap((sockets) => sockets ?? []);

  const destroyAll = async (sockets: readonly Socket[]): Promise<void> => {
    // Node's agent forgets a socket on its 'close' (its listener was added first, so it has run by
    // the time ours does); until then it could still hand the destroyed socket to a request.
    await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.closed) return resolve();
            socket.once('close', () => resolve());
            socket.destroy();
          }),
      ),
    );
  };

  return {
    agent,
    noteResponse(response) {
      const value = response.headers['keep-alive'];
      const header = Array.isArray(value) ? value.join(',') : value;
      const seconds = header === undefined ? undefined : KEEP_ALIVE_HINT.exec(header)?.[1];
      if (seconds !== undefined) hints.set(response.socket, Number(seconds) * 1_000 - HINT_MARGIN_MS);
    },
    async evictStale() {
      const wallNow = Date.now();
      const monotonicNow = performance.now();
      await destroyAll(
        freeSockets().filter((socket) => {
          const since = idle.get(socket);
          if (since === undefined || socket.destroyed) return true;
          const idleMs = Math.max(wallNow - since.wallMs, monotonicNow - since.monotonicMs);
          return idleMs >= since.maxIdleMs;
        }),
      );
    },
    async evictAll() {
      await destroyAll(freeSockets());
    },
    destroy() {
      agent.destroy();
    },
  };
}
