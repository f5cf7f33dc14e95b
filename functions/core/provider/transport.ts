import http from 'node:http';
import https from 'node:https';
import { SmsErrorCode, SmsServiceError } from './errors';
import { SendCertainty, SmsOperation } from './types';
import type { ResolvedClientOptions } from './validate';

/** Bodies of this API are tiny; a bigger one is not the service talking, so stop reading it. */
export const MAX_RESPONSE_BYTES = 1_048_576;

/** A complete HTTP answer. `body` is `undefined` when it exceeded `MAX_RESPONSE_BYTES`. */
export interface RawResponse {
  readonly status: number;
  readonly body: Buffer | undefined;
  /** The `Retry-After` header, as sent (a 429's wait). */
  readonly retryAfter?: string;
}

export interface ExchangeSpec {
  readonly operation: SmsOperation;
  readonly method: 'GET' | 'POST' | 'PUT';
  /** Path below the base URL, e.g. `/v1/sms/send`. */
  readonly path: string;
  readonly body?: string;
  /** The body's media type. @default 'application/json' */
  readonly contentType?: string;
  /** Headers of this service's own (its key): never recorded on an error. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/** What an exchange needs of the client's options: where to connect, and how. */
export type ExchangeTarget = Pick<
  ResolvedClientOptions,
  'tls' | 'hostname' | 'port' | 'pathPrefix' | 'userAgent' | 'lookup'
>;

/** How far one exchange got: the evidence for `delivery`. */
interface Progress {
  connected: boolean;
  /** Node's 'finish': the last byte of the request was handed to the OS. */
  requestSent: boolean;
  status: number | undefined;
  reusedSocket: boolean;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
/**
 * The service's documented refusals, and 429: it looked at the request and did not act on it. The
 * service's document shows no 429; the relay takes one as "not sent, try again" (docs/sms-service.md).
 */
export const REFUSAL_STATUSES: ReadonlySet<number> = new Set([400, 401, 402, 429]);

/**
 * The single rule for `delivery`. A balance lookup never sends. Once a status line arrived, only a
 * documented refusal proves nothing went out. Without one, a request whose last byte never
 * reached the OS cannot have been acted on: the body is JSON framed by Content-Length, so the
 * service cannot have held a complete, parseable request.
 */
export function sendCertaintyOf(
  operation: SmsOperation,
  requestSent: boolean,
  status: number | undefined,
): SendCertainty {
  if (operation !== SmsOperation.SEND) return SendCertainty.NOT_SENT;
  if (status !== undefined) return REFUSAL_STATUSES.has(status) ? SendCertainty.NOT_SENT : SendCertainty.MAYBE_SENT;
  return requestSent ? SendCertainty.MAYBE_SENT : SendCertainty.NOT_SENT;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Replaces every secret value in a text (a service that echoes the key back must not get it into logs). */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const values = secrets.filter((value) => value.length > 0);
  return (text) => values.reduce((redacted, value) => redacted.split(value).join('[REDACTED]'), text);
}

/**
 * A copy of a Node error holding only safe fields, with the key scrubbed from its text, so that a
 * `cause` can never carry request options or headers whatever Node attaches in some version.
 */
export function safeCause(error: unknown, redact: (text: string) => string): Error {
  const source = error instanceof Error ? error : new Error(String(error));
  const copy = new Error(redact(source.message));
  copy.name = redact(source.name);
  copy.stack = redact(source.stack ?? `${copy.name}: ${copy.message}`);
  for (const field of ['code', 'errno', 'syscall', 'hostname'] as const) {
    const value: unknown = (source as unknown as Record<string, unknown>)[field];
    if (typeof value === 'string' || typeof value === 'number') {
      Object.defineProperty(copy, field, {
        value: typeof value === 'string' ? redact(value) : value,
        enumerable: true,
      });
    }
  }
  return copy;
}

function transportError(
  error: unknown,
  progress: Progress,
  { operation, hostname, redact }: { operation: SmsOperation; hostname: string; redact: (text: string) => string },
): SmsServiceError {
  const systemCode = codeOf(error);
  const details = {
    operation,
    delivery: sendCertaintyOf(operation, progress.requestSent, progress.status),
    status: progress.status,
    systemCode,
    cause: safeCause(error, redact),
  };
  if (!progress.connected && systemCode === 'ECONNREFUSED') {
    return new SmsServiceError(`SMS ${operation} connection was refused`, {
      ...details,
      code: SmsErrorCode.REFUSED,
      delivery: SendCertainty.NOT_SENT,
    });
  }
  if (!progress.connected && systemCode !== undefined && DNS_CODES.has(systemCode)) {
    return new SmsServiceError(`SMS ${operation} could not resolve ${hostname}`, {
      ...details,
      code: SmsErrorCode.DNS,
      delivery: SendCertainty.NOT_SENT,
    });
  }
  if (systemCode !== undefined && RESET_CODES.has(systemCode)) {
    // Even on a reused socket a reset after the request went out is `maybe-sent`: a server that
    // closed an idle socket and one that crashed after sending look the same from here.
    const reused = progress.reusedSocket ? ' on a reused keep-alive socket' : '';
    return new SmsServiceError(`SMS ${operation} connection was reset${reused}`, {
      ...details,
      code: SmsErrorCode.RESET,
    });
  }
  const suffix = systemCode === undefined ? '' : ` (${systemCode})`;
  return new SmsServiceError(`SMS ${operation} connection failed${suffix}`, { ...details, code: SmsErrorCode.NETWORK });
}

/**
 * One HTTP exchange over `agent`, with a deadline and a record of how far it got, so every
 * failure comes back as an `SmsServiceError` whose `delivery` follows `sendCertaintyOf`.
 * Resolves with any complete answer, whatever its status.
 *
 * @example
 * ```ts
 * const raw = await exchange(config, agent, redact, { operation: 'balance', method: 'GET', path: '/v1/account/balance', timeoutMs: 5_000 });
 * ```
 * @throws SmsServiceError
 */
export async function exchange(
  config: ExchangeTarget,
  agent: http.Agent,
  redact: (text: string) => string,
  spec: ExchangeSpec,
): Promise<RawResponse> {
  const { operation, timeoutMs } = spec;
  const progress: Progress = { connected: false, requestSent: false, status: undefined, reusedSocket: false };
  const failure = (error: unknown): SmsServiceError =>
    transportError(error, progress, { operation, hostname: config.hostname, redact });

  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    const settle = (error: SmsServiceError | undefined, response?: RawResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === undefined && response !== undefined) return resolve(response);
      // A failed exchange must not leave its socket in the agent half-read.
      request?.destroy();
      reject(error);
    };
    const timer = setTimeout(() => {
      // connect: DNS, TCP or TLS not done, so not one byte of the request was sent; request: the
      // last byte was not handed to the OS yet; response: the whole request was sent.
      const phase = !progress.connected ? 'connect' : progress.requestSent ? 'response' : 'request';
      settle(
        new SmsServiceError(`SMS ${operation} request timed out after ${timeoutMs} ms in the ${phase} phase`, {
          operation,
          code: SmsErrorCode.TIMEOUT,
          delivery: sendCertaintyOf(operation, progress.requestSent, progress.status),
          status: progress.status,
          systemCode: 'ETIMEDOUT',
        }),
      );
    }, timeoutMs);

    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': config.userAgent,
      ...spec.headers,
    };
    if (spec.body !== undefined) {
      headers['Content-Type'] = spec.contentType ?? 'application/json';
      // Explicit length framing is what makes "not fully written → not sent" hold (see sendCertaintyOf).
      headers['Content-Length'] = String(Buffer.byteLength(spec.body));
    }

    try {
      request = (config.tls ? https : http).request({
        method: spec.method,
        hostname: config.hostname,
        port: config.port,
        path: `${config.pathPrefix}${spec.path}`,
        headers,
        agent,
        ...(config.lookup === undefined ? {} : { lookup: config.lookup }),
      });
    } catch (error) {
      settle(failure(error));
      return;
    }
    const req = request;

    req.on('socket', (socket) => {
      progress.reusedSocket = req.reusedSocket;
      if (req.reusedSocket || (!config.tls && !socket.connecting)) {
        progress.connected = true;
        return;
      }
      // For TLS, "connected" means the handshake is done: before it, no request byte can leave.
      socket.once(config.tls ? 'secureConnect' : 'connect', () => {
        progress.connected = true;
      });
    });
    req.on('finish', () => {
      progress.requestSent = true;
    });
    req.on('error', (error) => settle(failure(error)));
    req.on('response', (response) => {
      progress.status = response.statusCode;
      const retryAfter = response.headers['retry-after'];
      const answered = (body: Buffer | undefined): RawResponse => ({
        status: response.statusCode ?? 0,
        body,
        ...(retryAfter === undefined ? {} : { retryAfter }),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let oversized = false;
      response.on('data', (chunk: Buffer) => {
        if (oversized) return;
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          oversized = true;
          chunks.length = 0;
          // Nothing more is needed from this answer; the socket is not worth keeping.
          settle(undefined, answered(undefined));
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => settle(undefined, answered(Buffer.concat(chunks))));
      response.on('error', (error) => settle(failure(error)));
      response.on('close', () => {
        if (!response.complete) settle(failure(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
      });
    });
    req.end(spec.body);
  });
}
