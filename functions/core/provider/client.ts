import { createKeepAliveAgent } from './agent';
import { SmsErrorCode, SmsServiceError } from './errors';
import {
  sendCertaintyOf,
  exchange,
  MAX_RESPONSE_BYTES,
  redactor,
  type ExchangeSpec,
  type RawResponse,
} from './transport';
import {
  SendCertainty,
  SmsOperation,
  type Balance,
  type SendRequest,
  type SendResult,
  type SmsCallOptions,
  type SmsClient,
  type SmsClientOptions,
} from './types';
import {
  parseBalance,
  parseSendResult,
  resolveClientOptions,
  serviceErrorText,
  validateCallTimeout,
  validateSendRequest,
} from './validate';

const BALANCE_PATH = '/v1/account/balance';
const SEND_PATH = '/v1/sms/send';
/** The service's error text lands in logs and messages; a runaway one should not flood them. */
const MAX_SERVICE_ERROR_LENGTH = 500;

/** The wait a 429 asks for when it names none. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;
/** The longest wait a 429 is taken at its word for: a clock-skewed date or a typo must not park a message for a day. */
export const MAX_RETRY_AFTER_MS = 300_000;

/**
 * A 429's `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3),
 * `DEFAULT_RETRY_AFTER_MS` when absent or unreadable, at most `MAX_RETRY_AFTER_MS`.
 *
 * @example
 * ```ts
 * retryAfterMs('2'); // 2000
 * retryAfterMs(undefined); // 1000
 * ```
 */
export function retryAfterMs(header: string | undefined, now: number = Date.now()): number {
  const text = header?.trim() ?? '';
  // An HTTP date names its weekday and month: anything else that is not digits is unreadable.
  const ms = /^\d+$/.test(text) ? Number(text) * 1_000 : /^[A-Za-z]{3}, /.test(text) ? Date.parse(text) - now : NaN;
  if (!Number.isFinite(ms)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/** Turns a complete answer into the parsed success or the error its status calls for. */
function interpret<T>(
  raw: RawResponse,
  operation: SmsOperation,
  redact: (text: string) => string,
  parse: (body: unknown) => T | string,
): T {
  const { status } = raw;
  let json: unknown;
  let isJson = false;
  if (raw.body !== undefined) {
    try {
      json = JSON.parse(raw.body.toString('utf8'));
      isJson = true;
    } catch {
      // Not JSON: decided by status below.
    }
  }
  const text = isJson ? serviceErrorText(json) : undefined;
  const serviceError = text === undefined ? undefined : redact(text).slice(0, MAX_SERVICE_ERROR_LENGTH);
  const delivery = sendCertaintyOf(operation, true, status);
  const details = { operation, status, serviceError, delivery };
  const unexpected = (text: string): SmsServiceError =>
    new SmsServiceError(text, { ...details, code: SmsErrorCode.UNEXPECTED_ANSWER });

  if (status === 200) {
    if (raw.body === undefined)
      throw unexpected(
        `SMS service answered HTTP 200 with an unexpected body (body larger than ${MAX_RESPONSE_BYTES} bytes)`,
      );
    if (!isJson) throw unexpected('SMS service answered HTTP 200 with a body that is not JSON');
    const parsed = parse(json);
    if (typeof parsed === 'string')
      throw unexpected(`SMS service answered HTTP 200 with an unexpected body (${parsed})`);
    return parsed;
  }
  // The documented refusals: `sendCertaintyOf` has made them `not-sent`.
  if (status === 400)
    throw new SmsServiceError(`SMS service rejected the ${operation} request (HTTP 400)`, {
      ...details,
      code: SmsErrorCode.BAD_REQUEST,
    });
  if (status === 401)
    throw new SmsServiceError('SMS service refused the API key (HTTP 401)', {
      ...details,
      code: SmsErrorCode.UNAUTHORIZED,
    });
  if (status === 402)
    throw new SmsServiceError('SMS balance is insufficient (HTTP 402)', {
      ...details,
      code: SmsErrorCode.INSUFFICIENT_BALANCE,
    });
  if (status === 429)
    throw new SmsServiceError('SMS service asked to slow down (HTTP 429)', {
      ...details,
      code: SmsErrorCode.RATE_LIMITED,
      retryAfterMs: retryAfterMs(raw.retryAfter),
    });
  if (status >= 500 && status <= 599)
    throw new SmsServiceError(`SMS service failed (HTTP ${status})`, { ...details, code: SmsErrorCode.SERVER_ERROR });
  throw unexpected(`SMS service answered with unexpected HTTP ${status}`);
}

/**
 * Creates a client of the bulk SMS service (`GET /v1/account/balance`, `POST /v1/sms/send`).
 *
 * A factory rather than a class so the API key lives only in a closure: no field of the client
 * can be logged, inspected or serialised into it. Every failure is an `SmsServiceError` whose
 * `delivery` says whether the SMS may have gone out; sends are never retried internally.
 *
 * The client keeps its sockets alive between calls, each for at most `keepAliveMs` idle (checked
 * by the clock before every call, so a Lambda freeze cannot stretch it), until `close()`. So a send
 * never goes out on a socket a server keeping idle connections for longer than that (5 s and more
 * is common) has closed, whose reset would be a "maybe sent" that never was. On Lambda, keep one
 * client per container across invocations.
 *
 * @example
 * ```ts
 * const sms = createSmsClient({ baseUrl: 'https://sms.example/api', apiKey: process.env.SMS_API_KEY!, timeoutMs: 5_000 });
 * const { remainingBalance } = await sms.send({ phoneNumbers: ['255712345678'], message: 'Order shipped' });
 * const { balance, currency } = await sms.getBalance();
 * sms.close();
 * ```
 * @throws SmsClientConfigError when the options are unusable.
 */
export function createSmsClient(options: SmsClientOptions): SmsClient {
  const config = resolveClientOptions(options);
  const pool = createKeepAliveAgent({ tls: config.tls, ca: config.ca, idleMs: config.keepAliveMs });
  const redact = redactor([config.apiKey]);
  let closed = false;

  const prepare = (operation: SmsOperation, callOptions: SmsCallOptions | undefined): number => {
    if (closed) {
      throw new SmsServiceError('SMS client is closed', {
        operation,
        code: SmsErrorCode.CLIENT_CLOSED,
        delivery: SendCertainty.NOT_SENT,
      });
    }
    const timeoutMs = callOptions?.timeoutMs;
    return timeoutMs === undefined ? config.timeoutMs : validateCallTimeout(timeoutMs, operation);
  };
  const run = async (spec: ExchangeSpec): Promise<RawResponse> => {
    await pool.discardStale();
    return await exchange(config, pool.agent, redact, { ...spec, headers: { 'X-API-Key': config.apiKey } });
  };

  return Object.freeze({
    async getBalance(callOptions?: SmsCallOptions): Promise<Balance> {
      const operation = SmsOperation.BALANCE;
      const timeoutMs = prepare(operation, callOptions);
      const raw = await run({ operation, method: 'GET', path: BALANCE_PATH, timeoutMs });
      return interpret(raw, operation, redact, parseBalance);
    },

    async send(request: SendRequest, callOptions?: SmsCallOptions): Promise<SendResult> {
      const operation = SmsOperation.SEND;
      const timeoutMs = prepare(operation, callOptions);
      const { phoneNumbers, message, senderId } = validateSendRequest(request);
      // Omitting senderId (rather than sending null or '') is what lets the service apply its default.
      const body = JSON.stringify(
        senderId === undefined ? { phoneNumbers, message } : { phoneNumbers, message, senderId },
      );
      const raw = await run({ operation, method: 'POST', path: SEND_PATH, body, timeoutMs });
      return interpret(raw, operation, redact, parseSendResult);
    },

    close(): void {
      closed = true;
      pool.agent.destroy();
    },
  });
}
