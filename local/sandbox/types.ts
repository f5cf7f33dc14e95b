/**
 * Contract of the sandbox SMS service: a faithful local stand-in for the bulk SMS service
 * described in docs/sms-service.md (Balance: `GET /v1/account/balance`; Send: `POST /v1/sms/send`).
 *
 * Outside `/v1` the sandbox exposes control endpoints for tests and people (all JSON, no API key,
 * loopback only, same-site only; a POST body must be sent as `application/json`):
 * - `GET    /_sandbox/messages`        → `{ messages: DeliveredMessage[] }` (every accepted send, oldest first)
 * - `DELETE /_sandbox/messages`        → clears the inbox, `{ cleared: n }`
 * - `GET    /_sandbox/account`         → `{ balance, currency, smsRate, senderIds, defaultSenderId }`
 * - `POST   /_sandbox/balance`         → body `{ balance: number }` sets it (a top-up), answers the account
 * - `POST   /_sandbox/faults`          → body `SandboxFault` queues a fault for the next `count` sends, `{ queued: n }`
 * - `GET    /_sandbox/faults`          → `{ queued: n }` sends still to be faulted
 * - `DELETE /_sandbox/faults`          → clears queued faults, `{ cleared: n }`
 * - `POST   /_sandbox/outage`          → body `SandboxOutage`: from now on every `/v1` request (balance reads too) fails that way, `{ down: true, since, … }`
 * - `GET    /_sandbox/outage`          → `{ down: false }` or `{ down: true, since, kind, status }`
 * - `DELETE /_sandbox/outage`          → the service answers again, `{ down: false }`
 * - `POST   /_sandbox/rate-limit`      → body `SandboxRateLimit`: sends past `maxPerSecond` in a second answer 429, `{ maxPerSecond }`
 * - `DELETE /_sandbox/rate-limit`      → no rate limit again, `{ maxPerSecond: null }`
 * - `GET    /_sandbox/requests`        → `{ requests: RecordedRequest[] }` every request to `/v1` (headers minus the key)
 * - `DELETE /_sandbox/requests`        → clears the request log, `{ cleared: n }`
 */
export interface SandboxOptions {
  /** @default 0 (a free port chosen by the OS) */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
  readonly apiKey: string;
  /** @default 10000 */
  readonly balance?: number;
  /** @default 'TZS' */
  readonly currency?: string;
  /** Cost of one SMS to one recipient. @default 20 */
  readonly rate?: number;
  /** Approved sender IDs; a send with another senderId gets 400. @default ['SANDBOX'] */
  readonly senderIds?: readonly string[];
  /** Used when a send omits senderId. @default first of senderIds */
  readonly defaultSenderId?: string;
  /** Called after each accepted send (the CLI prints a line). A throwing observer never changes the API's answer. */
  readonly onDelivered?: (message: DeliveredMessage) => void;
}

/** One element of the send result's `recipients` (its shape is "not shown" in the seed: this is the sandbox's choice). */
export interface SendRecipient {
  readonly phoneNumber: string;
  readonly status: 'queued';
  readonly messageId: string;
}

export interface DeliveredMessage {
  readonly id: string;
  readonly phoneNumbers: readonly string[];
  readonly recipients: readonly SendRecipient[];
  readonly message: string;
  readonly senderId: string;
  readonly deducted: number;
  readonly remainingBalance: number;
  /** ISO-8601 */
  readonly at: string;
}

export type SandboxFault =
  /** Answer the next `count` sends with this status and error body; nothing is delivered or charged unless `deliver` is true (a 5xx after the SMS went out). */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly count?: number;
      readonly deliver?: boolean;
      readonly error?: string;
      /** Seconds sent as the answer's `Retry-After` header (a 429 that names its wait). */
      readonly retryAfter?: number;
    }
  /** Hold the next `count` sends for `ms` before handling them normally (they are delivered and charged). */
  | { readonly kind: 'delay'; readonly ms: number; readonly count?: number }
  /** Destroy the connection of the next `count` sends; with `deliver` true the SMS was delivered and charged first. */
  | { readonly kind: 'reset'; readonly count?: number; readonly deliver?: boolean };

/**
 * The whole service down, until ended: every `/v1` request, whatever its key, path or body, is
 * answered with `status` (a 5xx, default 503) or, with `kind: 'reset'`, has its connection reset.
 * Nothing is delivered or charged. Unlike a fault, it also fails the balance endpoint.
 */
export interface SandboxOutage {
  readonly kind: 'status' | 'reset';
  readonly status: number;
  /** Only this endpoint is down (a balance endpoint failing while sends work); absent: both. */
  readonly only?: 'balance' | 'send';
}

/** The service's own rate limit: sends past `maxPerSecond` in one second are answered 429 with `Retry-After: 1`, nothing sent. */
export interface SandboxRateLimit {
  readonly maxPerSecond: number;
}

export interface RecordedRequest {
  readonly method: string;
  /** Without the query string. */
  readonly path: string;
  /** `0` when no response was sent (a `reset` fault, or the client went away first). */
  readonly status: number;
  /** When the request arrived, ISO-8601. The log is in completion order. */
  readonly at: string;
  /** The connection that carried it: 1 for the first one a `/v1` request came on, 2 for the next… */
  readonly connection: number;
  /** Lower-cased names; `x-api-key` and `authorization` are never recorded. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface RunningSandbox {
  /** e.g. `http://127.0.0.1:40123` — the service's {base_url} */
  readonly baseUrl: string;
  readonly port: number;
  messages(): readonly DeliveredMessage[];
  clearMessages(): void;
  balance(): number;
  setBalance(balance: number): void;
  injectFault(fault: SandboxFault): void;
  clearFaults(): void;
  requests(): readonly RecordedRequest[];
  clearRequests(): void;
  close(): Promise<void>;
}
