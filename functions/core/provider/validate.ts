import type { LookupFunction } from 'node:net';
import { MAX_MESSAGE_LENGTH, PHONE_NUMBER_PATTERN, PROVIDER_KEEP_ALIVE_MS, PROVIDER_TIMEOUT_MS } from '../defaults';
import { SmsClientConfigError, validationError } from './errors';
import type { Balance, SendResult, SmsClientOptions, SmsOperation } from './types';

// The service's limit is counted as JavaScript `length` (UTF-16 code units), which is never less
// than a count of code points or of GSM-7 characters, so nothing this client accepts can be over
// the service's limit however the service counts.
export { MAX_MESSAGE_LENGTH, PHONE_NUMBER_PATTERN };

const MAX_TIMER_MS = 2_147_483_647;
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
// Matches only unpaired surrogates in `u` mode: JSON would carry them as `\udxxx` escapes that the
// service may reject or render as garbage after charging for them.
const LONE_SURROGATE = /\p{Surrogate}/u;

/** A send request that passed every local rule, in the shape it goes on the wire. */
export interface NormalizedSend {
  readonly phoneNumbers: readonly string[];
  readonly message: string;
  readonly senderId: string | undefined;
}

/** Client options checked and resolved to what the transport needs. */
export interface ResolvedClientOptions {
  readonly tls: boolean;
  readonly hostname: string;
  readonly port: number;
  /** The base URL's path without trailing slashes: `''` or e.g. `/api`. */
  readonly pathPrefix: string;
  readonly apiKey: string;
  readonly timeoutMs: number;
  readonly userAgent: string;
  readonly lookup: LookupFunction | undefined;
  readonly ca: SmsClientOptions['ca'];
  readonly keepAliveMs: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function timeoutProblem(name: string, value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
    return `${name} must be a number of milliseconds between 1 and ${MAX_TIMER_MS}`;
  }
  return undefined;
}

/**
 * Checks a send request without touching the network, collecting every problem. Problems name
 * the field, never its value: numbers and texts are personal data and end up in logs.
 *
 * @example
 * ```ts
 * validateSendRequest({ phoneNumbers: '255712345678', message: 'Hi' });
 * // { phoneNumbers: ['255712345678'], message: 'Hi', senderId: undefined }
 * ```
 * @throws SmsServiceError with code `validation`
 */
export function validateSendRequest(request: unknown): NormalizedSend {
  if (!isRecord(request)) throw validationError(['request must be an object']);
  const issues: string[] = [];
  const { phoneNumbers, message, senderId } = request;

  let numbers: readonly unknown[] = [];
  if (typeof phoneNumbers === 'string') {
    if (!PHONE_NUMBER_PATTERN.test(phoneNumbers)) issues.push('phoneNumbers must be 255 followed by nine digits');
    numbers = [phoneNumbers];
  } else if (Array.isArray(phoneNumbers)) {
    numbers = phoneNumbers;
    if (numbers.length === 0) issues.push('phoneNumbers must list at least one recipient');
    const firstIndex = new Map<string, number>();
    numbers.forEach((number, index) => {
      if (typeof number !== 'string' || !PHONE_NUMBER_PATTERN.test(number)) {
        issues.push(`phoneNumbers[${index}] must be 255 followed by nine digits`);
        return;
      }
      const first = firstIndex.get(number);
      // The service would text (and charge for) the same person twice.
      if (first !== undefined) issues.push(`phoneNumbers[${index}] repeats phoneNumbers[${first}]`);
      else firstIndex.set(number, index);
    });
  } else {
    issues.push('phoneNumbers must be a string or an array of strings');
  }

  if (typeof message !== 'string') {
    issues.push('message must be a string');
  } else if (message.trim() === '') {
    issues.push('message must not be empty or blank');
  } else if (message.length > MAX_MESSAGE_LENGTH) {
    issues.push(`message is ${message.length} UTF-16 code units long, at most ${MAX_MESSAGE_LENGTH} are allowed`);
  } else if (LONE_SURROGATE.test(message)) {
    issues.push('message contains an unpaired UTF-16 surrogate');
  }

  if (senderId !== undefined && (typeof senderId !== 'string' || senderId.trim() === '')) {
    issues.push('senderId must be a non-blank string when given');
  }

  if (issues.length > 0) throw validationError(issues);
  return {
    phoneNumbers: numbers as readonly string[],
    message: message as string,
    senderId: senderId as string | undefined,
  };
}

/**
 * Checks a per-call time-out.
 *
 * @example
 * ```ts
 * validateCallTimeout(500, 'send'); // 500
 * ```
 * @throws SmsServiceError with code `validation`
 */
export function validateCallTimeout(timeoutMs: unknown, operation: SmsOperation): number {
  const problem = timeoutProblem('timeoutMs', timeoutMs);
  if (problem !== undefined) throw validationError([problem], operation);
  return timeoutMs as number;
}

function parseBaseUrl(
  baseUrl: unknown,
  problems: string[],
): Pick<ResolvedClientOptions, 'tls' | 'hostname' | 'port' | 'pathPrefix'> | undefined {
  if (typeof baseUrl !== 'string' || baseUrl.trim() === '') {
    problems.push('baseUrl must be a non-empty string');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    // The parser's own error carries the input, which may hold credentials: report without it.
    problems.push('baseUrl is not a valid absolute URL');
    return undefined;
  }
  const before = problems.length;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push('baseUrl must use http: or https:');
  if (url.username !== '' || url.password !== '') problems.push('baseUrl must not contain credentials');
  if (url.search !== '' || url.hash !== '') problems.push('baseUrl must not have a query or fragment');
  if (problems.length > before) return undefined;
  const tls = url.protocol === 'https:';
  return {
    tls,
    // WHATWG keeps the brackets of an IPv6 literal; node:http wants the bare address.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (tls ? 443 : 80) : Number(url.port),
    pathPrefix: url.pathname.replace(/\/+$/, ''),
  };
}

/** Where a provider's requests go: scheme, host, port and path prefix of its URL. */
export type Endpoint = Pick<ResolvedClientOptions, 'tls' | 'hostname' | 'port' | 'pathPrefix'>;

/**
 * Reads a provider's URL (no credentials, query or fragment), collecting problems that name `field`.
 *
 * @example
 * ```ts
 * parseEndpoint('https://gw.example/api/send', 'url', problems)?.pathPrefix; // '/api/send'
 * ```
 */
export function parseEndpoint(url: unknown, field: string, problems: string[]): Endpoint | undefined {
  const own: string[] = [];
  const endpoint = parseBaseUrl(url, own);
  problems.push(...own.map((problem) => problem.replace(/^baseUrl\b/, field)));
  return endpoint;
}

/**
 * Checks client options and applies defaults, collecting every problem. Never puts the API key
 * into a problem.
 *
 * @example
 * ```ts
 * resolveClientOptions({ baseUrl: 'https://sms.example/api/', apiKey }).pathPrefix; // '/api'
 * ```
 * @throws SmsClientConfigError
 */
export function resolveClientOptions(options: SmsClientOptions): ResolvedClientOptions {
  if (!isRecord(options)) throw new SmsClientConfigError(['options must be an object']);
  const {
    baseUrl,
    apiKey,
    timeoutMs = PROVIDER_TIMEOUT_MS,
    userAgent = 'sms-relay',
    lookup,
    ca,
    keepAliveMs = PROVIDER_KEEP_ALIVE_MS,
  } = options;
  const problems: string[] = [];
  const url = parseBaseUrl(baseUrl, problems);
  if (typeof apiKey !== 'string' || !HEADER_VALUE.test(apiKey)) {
    problems.push('apiKey must be a non-empty string of printable ASCII without surrounding spaces');
  }
  const timeout = timeoutProblem('timeoutMs', timeoutMs);
  if (timeout !== undefined) problems.push(timeout);
  const keepAlive = timeoutProblem('keepAliveMs', keepAliveMs);
  if (keepAlive !== undefined) problems.push(keepAlive);
  if (typeof userAgent !== 'string' || !HEADER_VALUE.test(userAgent)) {
    problems.push('userAgent must be a non-empty string of printable ASCII');
  }
  if (lookup !== undefined && typeof lookup !== 'function') problems.push('lookup must be a function');
  if (problems.length > 0 || url === undefined) throw new SmsClientConfigError(problems);
  return { ...url, apiKey, timeoutMs, userAgent, lookup, ca, keepAliveMs };
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/**
 * Reads a balance body. Returns the typed balance, or a problem naming what was missing.
 *
 * @example
 * ```ts
 * parseBalance({ success: true, balance: 10, currency: 'TZS', smsRate: 1 }); // a Balance
 * ```
 */
export function parseBalance(body: unknown): Balance | string {
  if (!isRecord(body)) return 'body is not a JSON object';
  if (body.success !== true) return 'success is not true';
  if (!isFiniteNumber(body.balance)) return 'balance is not a number';
  if (typeof body.currency !== 'string') return 'currency is not a string';
  if (!isFiniteNumber(body.smsRate)) return 'smsRate is not a number';
  return { success: true, balance: body.balance, currency: body.currency, smsRate: body.smsRate };
}

/**
 * Reads a send body. Returns the typed result with `recipients` as received, or a problem.
 *
 * @example
 * ```ts
 * parseSendResult({ success: true, message: 'ok', senderId: 'X', recipients: [], deducted: 1, remainingBalance: 9 });
 * ```
 */
export function parseSendResult(body: unknown): SendResult | string {
  if (!isRecord(body)) return 'body is not a JSON object';
  if (body.success !== true) return 'success is not true';
  if (typeof body.message !== 'string') return 'message is not a string';
  if (typeof body.senderId !== 'string') return 'senderId is not a string';
  if (!Array.isArray(body.recipients)) return 'recipients is not an array';
  if (!isFiniteNumber(body.deducted)) return 'deducted is not a number';
  if (!isFiniteNumber(body.remainingBalance)) return 'remainingBalance is not a number';
  return {
    success: true,
    message: body.message,
    senderId: body.senderId,
    recipients: body.recipients as unknown[],
    deducted: body.deducted,
    remainingBalance: body.remainingBalance,
  };
}

/**
 * The `error` text of an error body, if the body is one.
 *
 * @example
 * ```ts
 * serviceErrorText({ success: false, error: 'Invalid API key' }); // 'Invalid API key'
 * ```
 */
export function serviceErrorText(body: unknown): string | undefined {
  return isRecord(body) && typeof body.error === 'string' ? body.error : undefined;
}
