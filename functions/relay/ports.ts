import { RETRY } from '../core/defaults';
import type { LoadedConfig } from '../core/config/compile';
import type { RelayConfigView } from '../core/config/view';
import type { SmsClient } from '../core/provider';
import type { MessageStore } from '../store';
import type { SourceFetch } from '../core/sources/types';
import type { ProviderRouting } from '../core/config/routing';
import type { SmsProvider } from '../core/provider/outcome';

/**
 * Where secret values come from: Secrets Manager on AWS, a JSON file locally. Values are looked
 * up by name (`providerApiKey`, each route's `secret`).
 */
export interface SecretSource {
  /** The value named `name`, or `undefined` when the secret has no such value. */
  get(name: string): Promise<string | undefined>;
  /** Drops any cached copy, so the next `get` reads the current values (a rotated key). */
  refresh(): Promise<void>;
}

/** The subset of Powertools' `Logger` the relay uses; phone numbers are masked by the adapter. */
export interface RelayLogger {
  debug(message: string, attributes?: Record<string, unknown>): void;
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}

export { RelayMetric } from '../core/metrics';
import type { RelayMetric } from '../core/metrics';

/** Counts and gauges; the Lambda adapter turns them into EMF lines through Powertools Metrics. */
export interface RelayMetrics {
  /**
   * Adds `value` to a metric, once for the service, once for `route` when given, and once for
   * `provider` when given (the per-send metrics of a provider, `PER_PROVIDER_METRICS`).
   */
  add(name: RelayMetric, value: number, route?: string, provider?: string): void;
}

/**
 * Everything the relay's operations need, built once per process by the handler adapters. Ingest
 * needs the compiled config (`LoadedConfig`, the default); the sender, the sweeper and the balance
 * watch take any {@link RelayConfigView} (`RelayContext<RelayConfigView>`), which a compiled
 * config is too.
 *
 * Each operation names the part of the store it uses (its port, e.g. `SenderStore` beside
 * `sendMessage`): `RelayContext<RelayConfigView, SenderStore>`. The whole store satisfies every port.
 */
export interface RelayContext<Config extends RelayConfigView = LoadedConfig, Store = MessageStore> {
  readonly config: Config;
  readonly store: Store;
  readonly secrets: SecretSource;
  /** Creates (or reuses) the SMS client with the current API key; `refresh` forces a new key. */
  readonly sms: SmsClientSource;
  /**
   * The configured providers (docs/providers.md). Given, a config with a second provider or a first
   * that is not the SMS service sends through each number's provider chain, with failover; a config
   * of one `sms-service` provider sends through `sms` as before.
   */
  readonly providers?: ProviderSource;
  /**
   * Set on the context of one provider of a config that sends through several (see
   * `providerScope`): the provider its balance, credit and low-balance notice are about.
   */
  readonly provider?: string;
  readonly logger: RelayLogger;
  readonly metrics: RelayMetrics;
  readonly clock: () => Date;
  readonly policy: RetryPolicy;
  /**
   * The network access of source packs that need it (SNS: its signing certificates and
   * subscription confirmations). Defaults to `defaultSourceFetch` (HTTPS only, short time-out, no
   * redirects); tests inject their own, which is the only way a test certificate is ever trusted.
   */
  readonly fetch?: SourceFetch;
  /**
   * The relay's own public origin (the HTTP API's URL on AWS, the runtime's URL locally): the
   * acknowledge link's origin on a route whose `ack` names no `baseUrl`. Absent: such a route's
   * SMS go out without a link (and a warning is logged).
   */
  readonly publicUrl?: string;
}

/**
 * The configured providers of a process, built once from the registry with their keys from the
 * provider secret (docs/providers.md). Absent from a context: the relay sends through `sms` alone.
 */
export interface ProviderSource {
  /** `compileProviderRouting` of the config: the chain of each number. */
  readonly routing: ProviderRouting;
  /** The provider named `name`, created on first use. */
  get(name: string): Promise<SmsProvider>;
  /** Reads the provider secret again (after a refused key) and answers the provider built with it. */
  refresh(name: string): Promise<SmsProvider>;
}

export interface SmsClientSource {
  client(): Promise<SmsClient>;
  /** Re-reads the API key (after a 401) and returns a client using it. */
  refresh(): Promise<SmsClient>;
}

/** How the sender retries failures that certainly did not send (and ambiguous ones on at-least-once routes). */
export interface RetryPolicy {
  /**
   * Attempts per message, the first included.
   * @default 5
   */
  readonly maxAttempts: number;
  /**
   * Delay before the second attempt; doubles each time.
   * @default 5000
   */
  readonly baseDelayMs: number;
  /**
   * Longest delay between two attempts.
   * @default 300000
   */
  readonly maxDelayMs: number;
  /**
   * A record in SENDING for longer than this is taken to belong to a sender that died.
   * @default 120000
   */
  readonly staleSendingMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ ...RETRY });

/**
 * The sender's retry policy from the environment's numbers (`RETRY_MAX_ATTEMPTS`,
 * `RETRY_BASE_DELAY_MS`, `STALE_SENDING_MS`, read by `readNumericEnv`): one reading for Lambda and
 * the local runtime.
 *
 * @example
 * ```ts
 * const { values } = readNumericEnv(process.env, ['retryMaxAttempts', 'retryBaseDelayMs', 'staleSendingMs']);
 * retryPolicyOf(values).maxDelayMs; // 300000, the default
 * ```
 */
export function retryPolicyOf(values: {
  readonly retryMaxAttempts: number;
  readonly retryBaseDelayMs: number;
  readonly staleSendingMs: number;
}): RetryPolicy {
  return {
    ...DEFAULT_RETRY_POLICY,
    maxAttempts: values.retryMaxAttempts,
    baseDelayMs: values.retryBaseDelayMs,
    staleSendingMs: values.staleSendingMs,
  };
}

/**
 * Why a stale-SENDING age cannot be used with this SMS service time-out, or `undefined`: a send
 * still waiting for its answer must never be taken for the send of a dead sender (an at-least-once
 * route would send it again).
 *
 * @example
 * ```ts
 * staleSendingProblem(60_000, 90_000); // 'STALE_SENDING_MS (60000) must be above provider.timeoutMs (90000) …'
 * ```
 */
export function staleSendingProblem(staleSendingMs: number, providerTimeoutMs: number): string | undefined {
  if (staleSendingMs > providerTimeoutMs) return undefined;
  return `STALE_SENDING_MS (${staleSendingMs}) must be above provider.timeoutMs (${providerTimeoutMs}): a send still waiting for its answer would be taken for a stale one`;
}

/** When attempt number `attempts` (1-based) failed, the next one is due after this delay. */
export function backoffMs(policy: RetryPolicy, attempts: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempts - 1));
}

/**
 * Resolves once the clock has reached `at`: a timer may fire a millisecond early, and a claim made
 * before `nextAttemptAt` would skip the record.
 *
 * @example
 * ```ts
 * await sleepUntil(new Date(record.nextAttemptAt));
 * ```
 */
export async function sleepUntil(at: Date, now: () => number = Date.now): Promise<void> {
  for (let wait = at.getTime() - now(); wait >= 0; wait = at.getTime() - now()) {
    await new Promise((resolve) => setTimeout(resolve, wait + 1));
  }
}

/** The route name under which the relay records its own notices that belong to no route (low balance). */
export const NOTICE_ROUTE = '_relay';
