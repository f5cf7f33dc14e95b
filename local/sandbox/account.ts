import { HttpError } from '../http';
import { InvalidSandboxOptionsError } from './errors';
import { fromMoneyUnits, toMoneyUnits, type MoneyUnits } from './money';

/** What `GET /_sandbox/account` shows. */
export interface AccountSnapshot {
  readonly balance: number;
  readonly currency: string;
  readonly smsRate: number;
  readonly senderIds: readonly string[];
  readonly defaultSenderId: string;
}

export interface Charge {
  readonly deducted: number;
  readonly remainingBalance: number;
}

/**
 * The prepaid account behind the sandbox: balance, price per SMS and the sender IDs it may use.
 *
 * @example
 * const account = new SandboxAccount({ balanceUnits: 10_000, priceUnits: 1_000, currency: 'TZS', senderIds: ['ACME'], defaultSenderId: 'ACME' });
 * account.charge(3); // { deducted: 0.3, remainingBalance: 0.7 }
 */
export class SandboxAccount {
  readonly #currency: string;
  readonly #priceUnits: MoneyUnits;
  readonly #senderIds: readonly string[];
  readonly #defaultSenderId: string;
  #balanceUnits: MoneyUnits;

  public constructor({
    balanceUnits,
    priceUnits,
    currency,
    senderIds,
    defaultSenderId,
  }: {
    balanceUnits: MoneyUnits;
    priceUnits: MoneyUnits;
    currency: string;
    senderIds: readonly string[];
    defaultSenderId: string;
  }) {
    this.#balanceUnits = balanceUnits;
    this.#priceUnits = priceUnits;
    this.#currency = currency;
    this.#senderIds = senderIds;
    this.#defaultSenderId = defaultSenderId;
  }

  public get balance(): number {
    return fromMoneyUnits(this.#balanceUnits);
  }

  public get currency(): string {
    return this.#currency;
  }

  public get smsRate(): number {
    return fromMoneyUnits(this.#priceUnits);
  }

  public get defaultSenderId(): string {
    return this.#defaultSenderId;
  }

  /** The service's own sender name is always usable, as it is what an omitted senderId becomes. */
  public isApprovedSenderId(senderId: string): boolean {
    return senderId === this.#defaultSenderId || this.#senderIds.includes(senderId);
  }

  /** A top-up (or a drain): sets the balance outright. */
  public setBalance(balance: number): void {
    const units = toMoneyUnits(balance);
    if (units === undefined) {
      throw new InvalidSandboxOptionsError(
        `balance must be a finite number ≥ 0 with at most 4 decimals, got ${String(balance)}`,
      );
    }
    this.#balanceUnits = units;
  }

  /**
   * Takes recipients × rate from the balance, or throws a 402 `HttpError` and leaves it
   * untouched. Runs synchronously, so two concurrent sends can never both spend the same money.
   */
  public charge(recipientCount: number): Charge {
    const costUnits = recipientCount * this.#priceUnits;
    if (costUnits > this.#balanceUnits) {
      throw new HttpError(
        402,
        `Insufficient balance: ${recipientCount} recipient(s) × ${this.smsRate} ${this.#currency} = ` +
          `${fromMoneyUnits(costUnits)} ${this.#currency}, balance is ${this.balance} ${this.#currency}`,
      );
    }
    this.#balanceUnits -= costUnits;
    return { deducted: fromMoneyUnits(costUnits), remainingBalance: this.balance };
  }

  public snapshot(): AccountSnapshot {
    return {
      balance: this.balance,
      currency: this.#currency,
      smsRate: this.smsRate,
      senderIds: [...this.#senderIds],
      defaultSenderId: this.#defaultSenderId,
    };
  }
}
