import type { SmsErrorCode } from './errors';
import type { SendCertainty } from './types';

/**
 * The one interface every SMS provider type implements (docs/providers.md): send one SMS to one
 * number, and say for certain whether it went out, certainly did not (and why), or may have.
 * A provider never throws for a failed send: the outcome is the answer, so the caller cannot
 * mistake an unexpected error for "not sent".
 */

/** The provider types the config's `providers.<name>.type` takes. */
export const ProviderType = {
  SmsService: 'sms-service',
  AfricasTalking: 'africastalking',
  Http: 'http',
} as const;

export type ProviderType = (typeof ProviderType)[keyof typeof ProviderType];

/**
 * Why a send certainly did not go out. The first four are the provider's fault (another provider
 * may succeed: `failover.on` picks which of them move a send on); the last two are the message's
 * or the number's, so no other provider would do better and the message ends FAILED.
 */
export const NotSentReason = {
  /** The request never reached the provider complete: refused, DNS, TLS, a time-out before the last byte. */
  Unreachable: 'unreachable',
  /** The provider refused the key (or the account) before looking at the message. */
  RefusedKey: 'refused-key',
  /** The account's credit does not cover the send (HTTP 402, Africa's Talking's InsufficientBalance). */
  InsufficientCredit: 'insufficient-credit',
  /** The provider asked to slow down (HTTP 429 where the type documents it as a refusal). */
  RateLimited: 'rate-limited',
  /** The number itself: invalid, of a type that cannot receive SMS, blacklisted. */
  InvalidNumber: 'invalid-number',
  /** The request was refused for what it carries (sender ID, parameters, a risk hold). */
  Rejected: 'rejected',
} as const;

export type NotSentReason = (typeof NotSentReason)[keyof typeof NotSentReason];

/** The reasons that are the number's or the message's: another provider would not do better. */
export const FINAL_NOT_SENT_REASONS: ReadonlySet<NotSentReason> = new Set([
  NotSentReason.InvalidNumber,
  NotSentReason.Rejected,
]);

/** The reasons `failover.on` may name. */
export const FAILOVER_REASONS = [
  NotSentReason.Unreachable,
  NotSentReason.InsufficientCredit,
  NotSentReason.RefusedKey,
  NotSentReason.RateLimited,
] as const;

export type FailoverReason = (typeof FAILOVER_REASONS)[number];

/** `failover.on` when the config sets none. */
export const DEFAULT_FAILOVER_ON: readonly FailoverReason[] = [
  NotSentReason.Unreachable,
  NotSentReason.InsufficientCredit,
];

/** What a send cost, as the provider reported it. */
export interface SendCost {
  readonly amount: number;
  /** ISO 4217, when the provider names it. */
  readonly currency?: string;
}

export interface SentOutcome {
  readonly status: 'sent';
  /** The provider's id of the message, when it gives one. */
  readonly messageId?: string;
  readonly cost?: SendCost;
  /** The balance after the send, when the answer carries it. */
  readonly remainingBalance?: number;
  /** Segments billed, when the provider says. */
  readonly segments?: number;
}

export interface NotSentOutcome {
  readonly status: typeof SendCertainty.NOT_SENT;
  readonly reason: NotSentReason;
  /** Safe for logs: statuses, codes and the provider's redacted text; never the key or the number. */
  readonly detail: string;
  /** For `rate-limited`: how long the provider asked to wait. */
  readonly retryAfterMs?: number;
}

export interface MaybeSentOutcome {
  readonly status: typeof SendCertainty.MAYBE_SENT;
  /** Safe for logs, as `NotSentOutcome.detail`. */
  readonly detail: string;
  /**
   * What left the send in doubt, as the SMS client names it (`timeout`, `server-error`, `reset`…),
   * so the record and the terminal say "timeout" rather than a generic unexpected answer. Absent:
   * an answer that could not be read.
   */
  readonly code?: SmsErrorCode;
}

/**
 * The answer to one send. `maybe-sent` is never sent again by another provider for an
 * at-most-once message: the SMS may already be on the recipient's phone.
 *
 * @example
 * ```ts
 * const outcome = await provider.send({ to: '+254712345678', text: 'Disk full' });
 * if (outcome.status === 'not-sent' && shouldFailOver(outcome, ['unreachable'])) await next.send(sms);
 * ```
 */
export type SendOutcome = SentOutcome | NotSentOutcome | MaybeSentOutcome;

/** One SMS to one number: routing is per number, so a message to several numbers is several sends. */
export interface ProviderSms {
  /** E.164, `+` and digits. */
  readonly to: string;
  readonly text: string;
  /** The sender ID to show; absent: the provider's configured default. */
  readonly senderId?: string;
}

export interface ProviderCallOptions {
  /** Overrides the provider's `timeoutMs` for this call. */
  readonly timeoutMs?: number;
}

/** A balance read: the amount and its currency, and the price of one SMS where the API says it. */
export type BalanceOutcome =
  | { readonly ok: true; readonly balance: number; readonly currency: string; readonly pricePerSms?: number }
  | { readonly ok: false; readonly detail: string };

/**
 * One configured provider, ready to send. Created by `createProvider` (registry.ts).
 *
 * @example
 * ```ts
 * const at = createProvider('at', { type: 'africastalking', username: 'acme', baseUrl }, { secret: (name) => keys[name] });
 * await at.send({ to: '+254712345678', text: 'Order 42 shipped' });
 * at.close();
 * ```
 */
export interface SmsProvider {
  readonly name: string;
  readonly type: ProviderType;
  /** Whether the provider can send to this E.164 number at all (`sms-service`: `+255` only). */
  covers(e164: string): boolean;
  /** Never rejects: every failure is an outcome. */
  send(sms: ProviderSms, options?: ProviderCallOptions): Promise<SendOutcome>;
  /** Absent where the provider's API has no balance (the `http` type). */
  readonly balance?: (options?: ProviderCallOptions) => Promise<BalanceOutcome>;
  /** Destroys its sockets; idempotent. */
  close(): void;
}

/**
 * Whether a send that ended `outcome` may go to the next provider: only a certain "not sent"
 * whose reason `failover.on` names. `maybe-sent` never: the SMS may be out already.
 *
 * @example
 * ```ts
 * shouldFailOver({ status: 'not-sent', reason: 'insufficient-credit', detail: 'HTTP 402' }, DEFAULT_FAILOVER_ON); // true
 * shouldFailOver({ status: 'maybe-sent', detail: 'time-out' }, DEFAULT_FAILOVER_ON); // false
 * ```
 */
export function shouldFailOver(outcome: SendOutcome, on: readonly FailoverReason[]): boolean {
  return outcome.status === 'not-sent' && (on as readonly NotSentReason[]).includes(outcome.reason);
}
