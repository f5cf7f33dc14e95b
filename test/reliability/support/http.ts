import { Agent, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

export interface HttpAnswer {
  readonly status: number;
  readonly text: string;
  /** The JSON body, or `undefined` when the body is not JSON. */
  readonly json: Record<string, unknown> | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface HttpCall {
  readonly method?: string;
  /** Path and query, e.g. `/hooks/notify?token=x`. */
  readonly path: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string | Uint8Array;
  /** @default 30000 */
  readonly timeoutMs?: number;
}

/** Keep-alive sockets shared by a test file's requests; at most 128 open at once. */
const agent = new Agent({ keepAlive: true, maxSockets: 128 });

/**
 * One HTTP request to a loopback server over a keep-alive pool. Rejects only on a transport error
 * or time-out; any status resolves.
 *
 * @example
 * ```ts
 * const answer = await call(runtime.baseUrl, { method: 'POST', path: '/hooks/notify', body: '{}' });
 * ```
 */
export function call(
  baseUrl: string,
  { method = 'GET', path, headers = {}, body, timeoutMs = 30_000 }: HttpCall,
): Promise<HttpAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const payload =
      body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
    const outgoing = httpRequest(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, ...(payload === undefined ? {} : { 'content-length': String(payload.byteLength) }) },
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Record<string, unknown> | undefined;
          try {
            const parsed: unknown = JSON.parse(text);
            json =
              parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
                ? (parsed as Record<string, unknown>)
                : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, text, json, headers: response.headers });
        });
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** Closes the pool's idle sockets (end of a test file). */
export function closeIdleSockets(): void {
  agent.destroy();
}

/**
 * Sends raw bytes as one HTTP/1.1 exchange on a fresh connection (for requests Node's client
 * refuses to build: bare CR/LF in headers, conflicting framing) and returns the status code of the
 * first response line, or 0 when the server closed the connection without answering.
 */
export function rawExchange(
  baseUrl: string,
  bytes: Uint8Array,
  timeoutMs = 10_000,
): Promise<{ status: number; text: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`raw exchange: no end within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset after the answer is fine; the close settles it
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: match === null ? 0 : Number(match[1]), text });
    });
    socket.on('connect', () => {
      socket.write(bytes);
      // Half-close: the server answers what it got, then closes.
      socket.end();
    });
  });
}

/**
 * Runs `work` over `items` with at most `concurrency` at once, keeping the order of results.
 *
 * @example
 * ```ts
 * const answers = await mapConcurrent(bodies, 64, (body) => call(baseUrl, { method: 'POST', path, body }));
 * ```
 */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
