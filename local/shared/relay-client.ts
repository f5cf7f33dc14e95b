/**
 * The one client of the running relay's `/_relay` API ({@link RELAY_API}): every CLI command that
 * talks to a running relay calls it through {@link relayClient}. Its endpoints, requests and answers
 * are the route map's types; the map itself (zod schemas) is never loaded here, and requests go
 * through `node:http` rather than `fetch`, whose implementation takes longer to load than a store
 * command may take to answer.
 */
import { request as httpRequest } from 'node:http';
import { routeTarget } from '../http/route-map';
import type { RELAY_API, RelayAnswer, RelayCall, RelayEndpoint } from '../records/relay-api';
import { RuntimeError } from './errors';

/** Where the runtime serves {@link RELAY_API}. */
export const RELAY_PREFIX = '/_relay';

/** How long a call may take: a listing of every record of a large local store takes seconds. */
const CALL_TIMEOUT_MS = 60_000;

/** A JSON answer: its status and body (`undefined` when it was not JSON). */
export interface JsonAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * One HTTP request to a loopback server, its answer read as JSON.
 *
 * @throws {Error} the connection failed or `timeoutMs` passed
 *
 * @example
 * ```ts
 * const { status, body } = await requestJson('http://127.0.0.1:3000/health', { timeoutMs: 3_000 });
 * ```
 */
export async function requestJson(
  url: string,
  {
    method = 'GET',
    headers = {},
    body,
    timeoutMs,
  }: {
    readonly method?: string;
    readonly headers?: Readonly<Record<string, string>>;
    readonly body?: string;
    readonly timeoutMs: number;
  },
): Promise<JsonAnswer> {
  return await new Promise<JsonAnswer>((resolve, reject) => {
    const outgoing = httpRequest(url, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      timeout: timeoutMs,
    });
    outgoing.once('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    outgoing.once('error', reject);
    outgoing.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          parsed = undefined;
        }
        resolve({ status: response.statusCode ?? 0, body: parsed });
      });
    });
    outgoing.end(body);
  });
}

/** Calls one endpoint of {@link RELAY_API}; its request's arguments as the map types them. */
export type RelayClient = <E extends RelayEndpoint>(
  endpoint: E,
  ...[call]: Record<never, never> extends RelayCall<E> ? [call?: RelayCall<E>] : [call: RelayCall<E>]
) => Promise<RelayAnswer<E>>;

/**
 * The client of the relay at `url`, presenting `consoleSecret` (from its `runtime.json`): `/_relay`
 * answers no one else.
 *
 * @throws {RuntimeError} from a call: the relay did not answer, or answered with an error (its `error` quoted)
 *
 * @example
 * ```ts
 * const relay = relayClient({ url: running.url, consoleSecret: running.consoleSecret });
 * const { records } = await relay('GET /records', { query: { state: 'PARKED', limit: 50 } });
 * await relay('POST /unmute', { body: { route: 'alerts' } });
 * ```
 */
export function relayClient({
  url,
  consoleSecret,
}: {
  readonly url: string;
  readonly consoleSecret?: string | undefined;
}): RelayClient {
  const authorization: Record<string, string> =
    consoleSecret === undefined ? {} : { authorization: `Bearer ${consoleSecret}` };
  return async (endpoint, ...[call]) => {
    const { params, query, body } = (call ?? {}) as {
      readonly params?: Record<string, string>;
      readonly query?: Record<string, string | number | undefined>;
      readonly body?: unknown;
    };
    const { method, target } = routeTarget(endpoint, { params, query });
    let answer: JsonAnswer;
    try {
      answer = await requestJson(`${url}${RELAY_PREFIX}${target}`, {
        method,
        headers: method === 'POST' ? { ...authorization, 'content-type': 'application/json' } : authorization,
        ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
        timeoutMs: CALL_TIMEOUT_MS,
      });
    } catch (error) {
      throw new RuntimeError(`the running relay at ${url} did not answer (${(error as Error).message})`, {
        cause: error,
      });
    }
    if (answer.status < 200 || answer.status > 299) {
      const reason = (answer.body as { error?: unknown } | undefined)?.error;
      throw new RuntimeError(
        `the running relay answered ${answer.status}: ${typeof reason === 'string' ? reason : 'no details'}`,
      );
    }
    if (answer.body === undefined) throw new RuntimeError(`the running relay answered ${answer.status} without JSON`);
    return answer.body as RelayAnswer<typeof endpoint>;
  };
}
