import type { LookupFunction } from 'node:net';
import { PROVIDER_KEEP_ALIVE_MS, PROVIDER_TIMEOUT_MS } from '../../defaults';
import { createKeepAliveAgent } from '../agent';
import { SmsErrorCode, SmsServiceError } from '../errors';
import { NotSentReason, type ProviderCallOptions, type SendOutcome } from '../outcome';
import { exchange, type ExchangeSpec, type RawResponse } from '../transport';
import { SendCertainty } from '../types';
import type { Endpoint } from '../validate';

/** What every provider type is created with besides its own config. */
export interface ProviderContext {
  /**
   * A value of the provider secret by name (`providerApiKey`, `<name>-key`, an http type's
   * `secret.<name>`); `undefined` when the secret has none.
   */
  readonly secret: (name: string) => string | undefined;
  /** Custom DNS resolution, as `net.connect`'s `lookup` (tests). */
  readonly lookup?: LookupFunction;
  /** Trusted CA certificates (PEM) for an `https:` URL. */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** @default 'sms-relay' */
  readonly userAgent?: string;
}

/** A provider's config could not be turned into a client (a missing key, a bad URL). */
export class ProviderConfigError extends Error {
  public constructor(provider: string, problems: readonly string[]) {
    super(`provider ${provider}: ${problems.join('; ')}`);
    this.name = 'ProviderConfigError';
  }
}

/** The secret's name that holds a provider's key: `providerApiKey` for `main`, else `<name>-key`. */
export function providerKeyName(provider: string): string {
  return provider === 'main' ? 'providerApiKey' : `${provider}-key`;
}

/** One HTTP exchange at a time over a provider's own keep-alive sockets. */
export interface ProviderTransport {
  call(spec: Omit<ExchangeSpec, 'timeoutMs'>, options?: ProviderCallOptions): Promise<RawResponse>;
  close(): void;
}

/**
 * The transport the `sms-service` client uses, for the other types: the same deadline, keep-alive
 * rule and evidence of how far a request got (see transport.ts).
 */
export function createProviderTransport(
  endpoint: Endpoint,
  {
    timeoutMs = PROVIDER_TIMEOUT_MS,
    context,
    redact,
  }: { timeoutMs?: number; context: ProviderContext; redact: (text: string) => string },
): ProviderTransport {
  const pool = createKeepAliveAgent({ tls: endpoint.tls, ca: context.ca, idleMs: PROVIDER_KEEP_ALIVE_MS });
  const target = { ...endpoint, userAgent: context.userAgent ?? 'sms-relay', lookup: context.lookup };
  let closed = false;
  return {
    async call(spec, options) {
      if (closed)
        throw new SmsServiceError('SMS client is closed', {
          operation: spec.operation,
          code: SmsErrorCode.CLIENT_CLOSED,
          delivery: SendCertainty.NOT_SENT,
        });
      await pool.discardStale();
      return await exchange(target, pool.agent, redact, { ...spec, timeoutMs: options?.timeoutMs ?? timeoutMs });
    },
    close() {
      closed = true;
      pool.agent.destroy();
    },
  };
}

/**
 * The outcome of a send that failed before a complete answer: `not-sent` (unreachable) when the
 * request never left whole, else `maybe-sent`. Anything but an `SmsServiceError` is `maybe-sent`:
 * nothing proves otherwise.
 */
export function failedExchangeOutcome(error: unknown): SendOutcome {
  if (!(error instanceof SmsServiceError))
    return { status: 'maybe-sent', detail: `unexpected ${error instanceof Error ? error.name : typeof error}` };
  const detail = error.message;
  return error.delivery === SendCertainty.NOT_SENT
    ? { status: 'not-sent', reason: NotSentReason.Unreachable, detail }
    : { status: 'maybe-sent', detail, code: error.code };
}

/** What an uncertain status says happened: a 5xx is the provider's failure, a 408 a time-out. */
export function uncertainCode(status: number): SmsErrorCode {
  if (status >= 500) return SmsErrorCode.SERVER_ERROR;
  return status === 408 ? SmsErrorCode.TIMEOUT : SmsErrorCode.UNEXPECTED_ANSWER;
}

/** A response body as JSON, or `undefined` when it is none. */
export function jsonOf(raw: RawResponse): unknown {
  if (raw.body === undefined) return undefined;
  try {
    return JSON.parse(raw.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
