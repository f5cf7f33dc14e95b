import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createGuardedServer, HttpError, isUnder, listen, requestPath } from '../http';
import { CONTROL_PREFIX, createControlHandler } from './control-routes';
import { notFound, SandboxStartError } from './errors';
import { parseSandboxFault } from './faults';
import { sendError } from './http';
import { resolveSandboxOptions, type ResolvedSandboxOptions } from './options';
import { SandboxState } from './state';
import type { RecordedRequest, RunningSandbox, SandboxOptions } from './types';
import { createV1Handler } from './v1-routes';

/** Header values never written to the request log: every sandbox's key header. */
const UNRECORDED_HEADERS = new Set(['x-api-key', 'authorization', 'apikey']);

/** A provider type's own API inside a sandbox: the paths under `prefix`, and its error shape. */
export interface SandboxApi {
  /** Every request under it is the API's (and recorded); the rest is `/_sandbox` or 404. */
  readonly prefix: string;
  readonly handle: (request: IncomingMessage, response: ServerResponse, path: string) => Promise<void>;
  /** Answers a thrown error the way the provider does. */
  readonly sendError: (response: ServerResponse, error: unknown) => void;
}

/**
 * Starts the sandbox SMS service: the `/v1` API of docs/sms-service.md plus the `/_sandbox` control endpoints,
 * on loopback by default. Throws `InvalidSandboxOptionsError` for bad options and
 * `SandboxStartError` when it cannot listen.
 *
 * @example
 * const sandbox = await startSandbox({ apiKey: 'test-key', balance: 100, rate: 0.35 });
 * await fetch(`${sandbox.baseUrl}/v1/account/balance`, { headers: { 'X-API-Key': 'test-key' } });
 * await sandbox.close();
 */
export async function startSandbox(options: SandboxOptions): Promise<RunningSandbox> {
  const resolved = resolveSandboxOptions(options);
  return await startSandboxServer(resolved, ({ state, signal }) => ({
    prefix: '/v1',
    handle: createV1Handler({ state, apiKey: resolved.apiKey, signal }),
    sendError,
  }));
}

/**
 * Serves one provider type's API (`apiOf`) beside the control endpoints every sandbox shares:
 * inbox, account and balance, faults, outage, rate limit and request log (see `types.ts`).
 *
 * @example
 * const sandbox = await startSandboxServer(resolveSandboxOptions({ apiKey }), ({ state, signal }) => myApi(state, signal));
 */
export async function startSandboxServer(
  resolved: ResolvedSandboxOptions,
  apiOf: (context: { readonly state: SandboxState; readonly signal: AbortSignal }) => SandboxApi,
): Promise<RunningSandbox> {
  const state = new SandboxState(resolved);
  const shutdown = new AbortController();
  const api = apiOf({ state, signal: shutdown.signal });
  const handleControl = createControlHandler({ state });
  const connectionOf = connectionNumbers();

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = requestPath(request.url);
    const isApi = isUnder(path, api.prefix);
    if (isApi) recordWhenSettled(request, response, path, state, connectionOf(request.socket));
    try {
      if (isApi) await api.handle(request, response, path);
      else if (isUnder(path, CONTROL_PREFIX)) await handleControl(request, response, path);
      else throw notFound(request.method ?? 'GET', path);
    } catch (error) {
      if (shutdown.signal.aborted || response.headersSent || request.socket.destroyed) {
        response.destroy();
        return;
      }
      if (!(error instanceof HttpError)) {
        // A bug in the sandbox, not a client mistake: say so where the person running it will look.
        console.error('sandbox: internal error while handling %s %s:', request.method, path, error);
      }
      (isApi ? api.sendError : sendError)(response, error);
    }
  };

  // Time-outs, keep-alive and the connection cap of the runtime's server (see HTTP_LIMITS).
  const server = createGuardedServer((request, response) => void handle(request, response));
  const port = await listen(server, resolved).catch((error: Error) => {
    throw new SandboxStartError(`Sandbox could not listen on ${resolved.host}:${resolved.port}: ${error.message}`, {
      cause: error,
    });
  });
  const baseUrl = `http://${resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    port,
    messages: () => state.messages(),
    clearMessages: () => void state.clearMessages(),
    balance: () => state.account.balance,
    setBalance: (balance) => state.account.setBalance(balance),
    // In-process callers get the same validation as `POST /_sandbox/faults`.
    injectFault: (fault) => state.faults.push(parseSandboxFault(fault)),
    clearFaults: () => state.faults.clear(),
    requests: () => state.requests(),
    clearRequests: () => void state.clearRequests(),
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        shutdown.abort();
        server.close((error) => (error ? reject(error) : resolve()));
        // close() alone waits for idle keep-alive sockets to time out; tests would hang for seconds.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * Numbers connections in the order their first `/v1` request arrived, so a test can tell whether a
 * client reused its keep-alive socket.
 */
function connectionNumbers(): (socket: Socket) => number {
  const numbers = new WeakMap<Socket, number>();
  let last = 0;
  return (socket) => {
    let number = numbers.get(socket);
    if (number === undefined) {
      number = ++last;
      numbers.set(socket, number);
    }
    return number;
  };
}

function recordWhenSettled(
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
  state: SandboxState,
  connection: number,
): void {
  const at = new Date().toISOString();
  const headers = recordableHeaders(request);
  let recorded = false;
  const record = (status: number): void => {
    if (recorded) return;
    recorded = true;
    const entry: RecordedRequest = { method: request.method ?? 'GET', path, status, at, connection, headers };
    state.record(entry);
  };
  response.once('finish', () => record(response.statusCode));
  // 'close' without 'finish': the socket went away (a reset fault, or the client gave up) before an answer.
  response.once('close', () => record(0));
}

function recordableHeaders(request: IncomingMessage): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || UNRECORDED_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
