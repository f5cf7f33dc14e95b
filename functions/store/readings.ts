import { randomBytes } from 'node:crypto';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { compact, ItemReader, num, str } from './attributes';
import type { StoreTable } from './store-table';
import { StoreError } from './errors';
import { BALANCE_READINGS_PK, epochSeconds, ItemKind, MONTHLY_RETENTION_SECONDS, readingKey } from './keys';
import { queryAll } from './range';
import { TABLE } from './table';

/** What `recordBalanceReading` keeps. */
export interface BalanceReadingInput {
  /** The balance the SMS service reported. */
  readonly balance: number;
  /** The account's currency, e.g. `TZS`. */
  readonly currency?: string;
  readonly now?: Date;
}

/** One balance reading as kept. */
export interface RecordedBalanceReading {
  readonly at: string;
  readonly balance: number;
  readonly currency?: string;
}

/** Which readings `listBalanceReadings` returns. */
export interface BalanceReadingsOptions {
  /** The earliest reading to return (inclusive). */
  readonly since: Date;
  /** The latest (inclusive); readings past their retention are left out. */
  readonly now?: Date;
}

/**
 * Keeps one reading of the balance, for the console's balance chart: one item per reading, kept
 * {@link MONTHLY_RETENTION_SECONDS}. Meant for the balance watch's reads of the service; a send's
 * `remainingBalance` is already on its `SENT` record. The sort key is the time plus a random
 * suffix, so readings taken in the same millisecond are all kept.
 *
 * @example
 * ```typescript
 * const { balance, currency } = await sms.getBalance();
 * await store.recordBalanceReading({ balance, currency });
 * ```
 */
export const recordBalanceReading = async (
  table: StoreTable,
  { balance, currency, now = table.clock() }: BalanceReadingInput,
): Promise<void> => {
  if (!Number.isFinite(balance)) throw new StoreError(`balance must be a finite number, got ${balance}`);
  const at = now.toISOString();
  await table.client.send(
    new PutItemCommand({
      TableName: table.tableName,
      Item: compact({
        ...readingKey(at, randomBytes(4).toString('hex')),
        kind: str(ItemKind.BalanceReading),
        at: str(at),
        balance: num(balance),
        currency: currency === undefined ? undefined : str(currency),
        [TABLE.timeToLive]: num(epochSeconds(now) + MONTHLY_RETENTION_SECONDS),
      }),
    }),
  );
};

/**
 * The balance readings from `since` to `now`, oldest first, every page read.
 *
 * @example
 * ```typescript
 * const week = await store.listBalanceReadings({ since: new Date(Date.now() - 7 * 86_400_000) });
 * ```
 */
export const listBalanceReadings = async (
  table: StoreTable,
  { since, now = table.clock() }: BalanceReadingsOptions,
): Promise<RecordedBalanceReading[]> => {
  // `~` sorts after the suffix's hex digits, so readings at exactly `now` are included.
  const items = await queryAll(table, BALANCE_READINGS_PK, since.toISOString(), `${now.toISOString()}#~`, {
    // TTL deletes some time after expiry; a reading past it is gone as far as callers go.
    expression: '#expiresAt > :now',
    names: { '#expiresAt': TABLE.timeToLive },
    values: { ':now': num(epochSeconds(now)) },
  });
  return items.map((item) => {
    const read = new ItemReader(item, BALANCE_READINGS_PK);
    const currency = read.optStr('currency');
    return { at: read.str('at'), balance: read.num('balance'), ...(currency === undefined ? {} : { currency }) };
  });
};

/**
 * Balance readings for the chart: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const readingOperations = (table: StoreTable) => ({
  /**
   * Keeps one balance read from the SMS service for 35 days, for the console's balance chart. The
   * balance watch calls it; sends do not (their `remainingBalance` is on the `SENT` record).
   * See {@link recordBalanceReading}.
   */
  recordBalanceReading: async (input: BalanceReadingInput): Promise<void> => await recordBalanceReading(table, input),
  /**
   * The balance readings from `since` to `now`, oldest first (all pages).
   *
   * @example
   * ```typescript
   * const points = await store.listBalanceReadings({ since: new Date(Date.now() - 7 * 86_400_000) });
   * ```
   */
  listBalanceReadings: async (options: BalanceReadingsOptions): Promise<RecordedBalanceReading[]> =>
    await listBalanceReadings(table, options),
});
