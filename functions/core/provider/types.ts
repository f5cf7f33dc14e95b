import type { LookupFunction } from 'node:net';
import type { PROVIDER_TIMEOUT_MS } from '../defaults';

/**
 * Whether an SMS can have gone out (and been charged) despite a failure.
 *
 * - `not-sent`: certain. The request never reached the service complete, or the service said it
 *   refused it (400/401/402). Safe to fix and send again.
 * - `maybe-sent`: the service may have sent and charged it. Sending again risks a duplicate; check
 *   the dashboard's history first.
 *
 * @example
 * ```ts
 * if (error instanceof SmsServiceError && error.delivery === SendCertainty.NOT_SENT) await retryLater();
 * ```
 */
export const SendCertainty = {
  NOT_SENT: 'not-sent',
  MAYBE_SENT: 'maybe-sent',
} as const;

export type SendCertainty = (typeof SendCertainty)[keyof typeof SendCertainty];

/** Which client call failed; carried by every error so logs tell a charged call from a free one. */
export const SmsOperation = {
  BALANCE: 'balance',
  SEND: 'send',
} as const;

export type SmsOperation = (typeof SmsOperation)[keyof typeof SmsOperation];

/**
 * `GET /v1/account/balance`, as the service answered it (extra fields dropped).
 *
 * @example
 * ```ts
 * const { balance, smsRate } = await client.getBalance();
 * const smsLeft = Math.floor(balance / smsRate);
 * ```
 */
export interface Balance {
  readonly success: true;
  /** Current SMS balance. */
  readonly balance: number;
  /** Currency code of the account, e.g. `TZS`. */
  readonly currency: string;
  /** Price of one SMS, in `currency`. */
  readonly smsRate: number;
}

/**
 * What to send. Checked locally before any round trip (`SmsServiceError` with code `validation`, nothing sent).
 *
 * @example
 * ```ts
 * const request: SendRequest = { phoneNumbers: ['255712345678', '255687654321'], message: 'Order 42 shipped', senderId: 'ACME' };
 * ```
 */
export interface SendRequest {
  /**
   * `255` followed by nine digits, no `+`. A single string is one recipient; it goes on the wire as
   * a one-element array, which the service treats the same (docs/sms-service.md, Send).
   */
  readonly phoneNumbers: string | readonly string[];
  /** 1–160 UTF-16 code units (JavaScript `length`), see `MAX_MESSAGE_LENGTH`. */
  readonly message: string;
  /** An approved sender ID. Omitted from the request body when `undefined`, so the service's default applies. */
  readonly senderId?: string;
}

/**
 * `POST /v1/sms/send`, as the service answered it (extra fields dropped).
 *
 * @example
 * ```ts
 * const { deducted, remainingBalance, recipients } = await client.send(request);
 * ```
 */
export interface SendResult {
  readonly success: true;
  /** The service's status text for the request. */
  readonly message: string;
  /** The sender ID the service used (its default when none was given). */
  readonly senderId: string;
  /** Exactly as the service returned them: the element shape is not documented. */
  readonly recipients: readonly unknown[];
  /** Amount taken from the balance by this request. */
  readonly deducted: number;
  readonly remainingBalance: number;
}

/**
 * Per-call settings.
 *
 * @example
 * ```ts
 * await client.send(request, { timeoutMs: context.getRemainingTimeInMillis() - 1_000 });
 * ```
 */
export interface SmsCallOptions {
  /** Overrides the client's `timeoutMs` for this call. */
  readonly timeoutMs?: number;
}

/**
 * Options of `createSmsClient`; only `baseUrl` and `apiKey` are required.
 *
 * @example
 * ```ts
 * const options: SmsClientOptions = { baseUrl: 'https://sms.example/api/', apiKey, timeoutMs: 5_000 };
 * ```
 */
export interface SmsClientOptions {
  /**
   * The service's `{base_url}`: `http:` or `https:`, optionally with a path prefix; a trailing
   * slash is ignored. No credentials, query or fragment.
   */
  readonly baseUrl: string;
  /** Sent as `X-API-Key` on every request; never copied onto errors. */
  readonly apiKey: string;
  /**
   * Deadline for a whole call: DNS, connect, TLS, writing the request and reading the full answer.
   * @default {@link PROVIDER_TIMEOUT_MS}
   */
  readonly timeoutMs?: number;
  /**
   * Sent as `User-Agent`: some CDNs in front of APIs reject requests without one.
   * @default 'sms-relay'
   */
  readonly userAgent?: string;
  /** Custom DNS resolution, as `net.connect`'s `lookup`. @default dns.lookup */
  readonly lookup?: LookupFunction;
  /** Trusted CA certificates (PEM) for an `https:` base URL; replaces Node's bundled roots. */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /**
   * Longest a kept-alive connection may sit idle and still carry a request; lowered to the
   * service's `Keep-Alive: timeout` less one second when it announces one.
   * @default 4_000
   */
  readonly keepAliveMs?: number;
}

/**
 * The SMS service's programmatic interface. Holds its own keep-alive sockets, closed after
 * `keepAliveMs` idle whatever happened in between (a Lambda freeze included): on Lambda, create
 * one per container, at module level, so warm invocations reuse its connection and TLS session.
 *
 * @example
 * ```ts
 * const sms = createSmsClient({ baseUrl, apiKey });
 * export const handler = async () => await sms.send({ phoneNumbers: '255712345678', message: 'Hi' });
 * ```
 */
export interface SmsClient {
  /** Free: never sends or charges, so its errors are always `not-sent`. */
  getBalance(options?: SmsCallOptions): Promise<Balance>;
  /** Charged. Never retried internally: a failure says whether the SMS may have gone out. */
  send(request: SendRequest, options?: SmsCallOptions): Promise<SendResult>;
  /**
   * Destroys every socket; later calls fail with an `SmsServiceError` with code `client-closed`. Idempotent. A call still
   * in flight fails like a reset connection (a send whose request was out: `maybe-sent`).
   */
  close(): void;
}
