import { EventEmitter } from 'node:events';
import type { OutgoingHttpHeader, Server } from 'node:http';
import { Readable } from 'node:stream';
import { RuntimeError } from './errors';

/** The SDK's request as its HTTP handler receives it (`HttpRequest` of `@smithy/types`). */
export interface SdkHttpRequest {
  readonly method: string;
  readonly path: string;
  readonly query?: Readonly<Record<string, string | readonly string[] | null>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

/** The SDK's response (`HttpResponse` of `@smithy/types`); a `Uint8Array` body is read as it is. */
export interface SdkHttpResponse {
  readonly statusCode: number;
  readonly reason?: string;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

/**
 * An SDK request handler (smithy's `HttpHandler`: `handle(request) → { response }`) that answers
 * from a dynalite server in this process: the request is emitted as `'request'` on the server with
 * in-memory request and response objects, so whatever listens there (dynalite's own handler, or a
 * wrapper of it) answers it exactly as it answers HTTP, signature and CRC checks included.
 */
export interface DynaliteHandler {
  handle(
    request: SdkHttpRequest,
    options?: { readonly abortSignal?: { readonly aborted: boolean } },
  ): Promise<{ response: SdkHttpResponse }>;
  updateHttpClientConfig(): void;
  httpHandlerConfigs(): Record<string, never>;
  /** Later requests are refused: the client is being closed with the store. */
  destroy(): void;
}

/**
 * A request handler for a `DynamoDBClient` of the dynalite `server` running in this process. The
 * local runtime's own requests (several per SMS) then skip the loopback HTTP round trip: the sockets,
 * HTTP parsing and framing on both ends of it. The server may listen on HTTP as well, for other
 * processes; it need not listen for this handler.
 *
 * Not the SDK's network error handling: there is no socket to fail. A dynalite that never answers
 * holds the request, as it would over HTTP without a time-out; an abort signal is honoured only
 * before the request is handed over (the relay's store passes none).
 *
 * @example
 * ```ts
 * const client = new DynamoDBClient({ region, endpoint, credentials, requestHandler: createDynaliteHandler(server) });
 * ```
 */
export function createDynaliteHandler(server: Server): DynaliteHandler {
  let destroyed = false;
  return {
    handle: (request, { abortSignal } = {}) =>
      new Promise((resolve, reject) => {
        if (destroyed) return reject(new RuntimeError('the local store is closed'));
        if (abortSignal?.aborted === true)
          return reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
        const incoming = toIncoming(request);
        const outgoing = new InMemoryResponse((response) => resolve({ response }));
        try {
          server.emit('request', incoming, outgoing);
        } catch (error) {
          reject(error);
        }
      }),
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => void (destroyed = true),
  };
}

/** What a request listener reads of Node's `IncomingMessage`: a stream of the body, method, url, headers. */
function toIncoming({ method, path, query, headers, body }: SdkHttpRequest): Readable {
  const incoming = new Readable({ read: () => undefined });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {}))
    for (const each of value === null ? [''] : [value].flat()) search.append(name, each);
  Object.assign(incoming, {
    method,
    url: search.size === 0 ? path : `${path}?${search.toString()}`,
    // Node lowercases the names of the headers it receives; listeners look them up that way.
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
    httpVersion: '1.1',
  });
  const bytes = bodyBytes(body);
  if (bytes.length > 0) incoming.push(bytes);
  incoming.push(null);
  return incoming;
}

function bodyBytes(body: unknown): Buffer {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // The DynamoDB JSON protocol sends strings; a stream body would be another client's request.
  throw new RuntimeError(`the in-process DynamoDB handler takes a string or bytes as the body, not ${typeof body}`);
}

/** What a request listener uses of Node's `ServerResponse`; `end` hands the whole answer over. */
class InMemoryResponse extends EventEmitter {
  public statusCode = 200;
  public statusMessage: string | undefined;
  public headersSent = false;
  private readonly headers = new Map<string, string>();
  private readonly chunks: Buffer[] = [];
  private ended = false;

  public constructor(private readonly onEnd: (response: SdkHttpResponse) => void) {
    super();
  }

  public setHeader(name: string, value: OutgoingHttpHeader): this {
    this.headers.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value));
    return this;
  }

  public getHeader(name: string): string | undefined {
    return this.headers.get(name.toLowerCase());
  }

  public hasHeader(name: string): boolean {
    return this.headers.has(name.toLowerCase());
  }

  public removeHeader(name: string): void {
    this.headers.delete(name.toLowerCase());
  }

  public writeHead(
    statusCode: number,
    ...rest: (string | Readonly<Record<string, OutgoingHttpHeader>> | undefined)[]
  ): this {
    this.statusCode = statusCode;
    for (const each of rest) {
      if (typeof each === 'string') this.statusMessage = each;
      else if (each !== undefined) for (const [name, value] of Object.entries(each)) this.setHeader(name, value);
    }
    return this;
  }

  public write(chunk: string | Uint8Array): boolean {
    this.headersSent = true;
    this.chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
    return true;
  }

  public end(chunk?: string | Uint8Array | (() => void), done?: () => void): this {
    if (this.ended) return this;
    this.ended = true;
    if (chunk !== undefined && typeof chunk !== 'function') this.write(chunk);
    this.headersSent = true;
    this.onEnd({
      statusCode: this.statusCode,
      ...(this.statusMessage === undefined ? {} : { reason: this.statusMessage }),
      headers: Object.fromEntries(this.headers),
      body: this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks),
    });
    this.emit('finish');
    (typeof chunk === 'function' ? chunk : done)?.();
    return this;
  }
}
