import { randomUUID } from 'node:crypto';
import { SandboxAccount } from './account';
import { FaultQueue } from './faults';
import type { ResolvedSandboxOptions } from './options';
import type { SendRequest } from './send-request';
import type { DeliveredMessage, RecordedRequest, SandboxOutage, SandboxRateLimit, SendRecipient } from './types';

/** Caps on the inbox and request log, so a sandbox left running for days does not grow without bound; oldest go first. */
export const MAX_KEPT_MESSAGES = 10_000;
export const MAX_KEPT_REQUESTS = 10_000;

/**
 * Everything the sandbox remembers: the account, the inbox of accepted sends, queued faults and
 * the request log. One instance per running sandbox.
 *
 * @example
 * const state = new SandboxState(resolveSandboxOptions({ apiKey: 'k' }));
 * state.deliver({ phoneNumbers: ['255712345678'], message: 'Hi', senderId: undefined });
 */
export class SandboxState {
  public readonly account: SandboxAccount;
  public readonly faults = new FaultQueue();
  /** While set, every `/v1` request (balance reads included) fails this way: the service is down. */
  public outage: (SandboxOutage & { readonly since: string }) | undefined;
  /** While set, sends past `maxPerSecond` in one second are answered 429. */
  public rateLimit: SandboxRateLimit | undefined;
  #second = { epoch: 0, sends: 0 };
  readonly #messages: DeliveredMessage[] = [];
  readonly #requests: RecordedRequest[] = [];
  readonly #onDelivered: ((message: DeliveredMessage) => void) | undefined;

  public constructor({
    balanceUnits,
    priceUnits,
    currency,
    senderIds,
    defaultSenderId,
    onDelivered,
  }: ResolvedSandboxOptions) {
    this.account = new SandboxAccount({ balanceUnits, priceUnits, currency, senderIds, defaultSenderId });
    this.#onDelivered = onDelivered;
  }

  /** Counts a send against the rate limit: `false` when this second already had `maxPerSecond` of them. */
  public admitSend(now: number = Date.now()): boolean {
    if (this.rateLimit === undefined) return true;
    const epoch = Math.floor(now / 1_000);
    if (this.#second.epoch !== epoch) this.#second = { epoch, sends: 0 };
    if (this.#second.sends >= this.rateLimit.maxPerSecond) return false;
    this.#second.sends += 1;
    return true;
  }

  /**
   * Charges the account and puts the send in the inbox; throws a 402 `HttpError` with
   * nothing charged or delivered when the balance is short.
   */
  public deliver(
    { phoneNumbers, message, senderId }: SendRequest,
    {
      units = phoneNumbers.length,
      messageId = randomUUID,
    }: {
      /** SMS charged at the account's rate: one per recipient unless a provider bills per segment. */
      readonly units?: number;
      /** The id a provider gives each recipient's message. */
      readonly messageId?: () => string;
    } = {},
  ): DeliveredMessage {
    const { deducted, remainingBalance } = this.account.charge(units);
    const recipients: SendRecipient[] = phoneNumbers.map((phoneNumber) =>
      Object.freeze({ phoneNumber, status: 'queued' as const, messageId: messageId() }),
    );
    const delivered: DeliveredMessage = Object.freeze({
      id: randomUUID(),
      phoneNumbers: Object.freeze([...phoneNumbers]),
      recipients: Object.freeze(recipients),
      message,
      senderId: senderId ?? this.account.defaultSenderId,
      deducted,
      remainingBalance,
      at: new Date().toISOString(),
    });
    pushCapped(this.#messages, delivered, MAX_KEPT_MESSAGES);
    this.#notify(delivered);
    return delivered;
  }

  public messages(): readonly DeliveredMessage[] {
    return [...this.#messages];
  }

  /** @returns how many messages were cleared */
  public clearMessages(): number {
    return this.#messages.splice(0).length;
  }

  public record(request: RecordedRequest): void {
    pushCapped(this.#requests, Object.freeze(request), MAX_KEPT_REQUESTS);
  }

  public requests(): readonly RecordedRequest[] {
    return [...this.#requests];
  }

  /** @returns how many entries were cleared */
  public clearRequests(): number {
    return this.#requests.splice(0).length;
  }

  #notify(delivered: DeliveredMessage): void {
    try {
      this.#onDelivered?.(delivered);
    } catch (error) {
      // The SMS went out and was charged: a broken observer must not turn that into an error answer.
      process.emitWarning(`sandbox onDelivered observer threw: ${String(error)}`);
    }
  }
}

function pushCapped<T>(items: T[], item: T, cap: number): void {
  items.push(item);
  if (items.length > cap) items.splice(0, items.length - cap);
}
