import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { bool, ItemReader, num, str } from './attributes';
import type { StoreTable } from './store-table';
import { writeIf } from './write';
import { StoreError } from './errors';
import { buildUpdate, type UpdateSpec } from './expressions';
import { balanceKey, ItemKind, MAIN_PROVIDER } from './keys';
import type { BalanceState } from './types';
import { PRICE_KNOWN_MS } from '../core/defaults';

/** One balance reading for `updateBalanceState`. */
export interface BalanceObservation {
  /** The provider whose balance this is. @default 'main' */
  readonly provider?: string;
  /** The balance just observed (a send's `remainingBalance` or a balance check). */
  readonly balance: number;
  /** Below this the alert SMS goes out, once, until the balance is back at or above it. */
  readonly threshold: number;
  readonly now?: Date;
  /**
   * Whether a balance below `threshold` may disarm the alert:
   * - absent: whenever it is armed (a caller that records no notice);
   * - a number: only while it is armed with this `alerts` count, the one read (`getBalanceState`)
   *   before the caller recorded the crossing's notice under it, so the notice is stored before the
   *   disarm and a caller that read an earlier crossing cannot disarm a later one;
   * - `false`: never (the caller saw it disarmed and recorded no notice): the observation only.
   */
  readonly disarm?: number | false;
  /**
   * The balance watch's forecast of credits spent a day, kept for notices recorded by sends:
   * a number is kept, `null` removes the one kept (no forecast could be made), absent leaves it.
   */
  readonly spendPerDay?: number | null;
}

/** What `updateBalanceState` decided. */
export interface BalanceUpdate {
  /** This caller won the right to send the one low-balance alert SMS. */
  readonly alert: boolean;
  /**
   * The observation was older than the one already stored and was ignored, so a slow sender
   * reporting an old, higher balance cannot re-arm the alert.
   */
  readonly stale: boolean;
}

/** Newer-or-equal observations only; equal times are concurrent senders, all of them current. */
const CURRENT = '(attribute_not_exists(#lastCheckedAt) OR #lastCheckedAt <= :now)';

const update = async (table: StoreTable, spec: UpdateSpec, provider: string = MAIN_PROVIDER): Promise<boolean> =>
  (await writeIf(table, { Key: balanceKey(provider), ...buildUpdate(spec) })).applied;

/**
 * Records a balance observation and runs the low-balance alert's state machine: armed (the
 * initial state) → disarmed when a balance below `threshold` is seen, by one conditional update
 * that also counts the alert (`alerts`), so of concurrent callers exactly one gets `alert: true` →
 * re-armed when a balance at or above `threshold` is seen. A caller that sends a notice records it
 * first, keyed by `alerts`, and disarms after (see `disarm`): a crash between the two leaves the
 * alert armed, and the next observation's notice under the same key is a repeat.
 *
 * @example
 * ```typescript
 * const { alert } = await store.updateBalanceState({ balance: result.remainingBalance, threshold: 100 });
 * if (alert) await sendAlert(`SMS balance low: ${result.remainingBalance} credits`);
 * ```
 */
export const updateBalanceState = async (
  table: StoreTable,
  { balance, threshold, now = table.clock(), disarm, spendPerDay, provider }: BalanceObservation,
): Promise<BalanceUpdate> => {
  if (!Number.isFinite(balance) || !Number.isFinite(threshold)) {
    throw new StoreError(`balance and threshold must be finite numbers, got ${balance} and ${threshold}`);
  }
  if (spendPerDay !== undefined && spendPerDay !== null && !Number.isFinite(spendPerDay)) {
    throw new StoreError(`spendPerDay must be a finite number, got ${spendPerDay}`);
  }
  const at = now.toISOString();
  const observed = {
    kind: str(ItemKind.Balance),
    lastBalance: num(balance),
    lastCheckedAt: str(at),
    ...(spendPerDay === undefined || spendPerDay === null ? {} : { spendPerDay: num(spendPerDay) }),
  };
  const remove = spendPerDay === null ? ['spendPerDay'] : [];
  const firstSeen = { firstObservedAt: str(at) };
  const values = { ':now': str(at) };

  if (balance >= threshold) {
    const current = await update(
      table,
      { set: { ...observed, armed: bool(true) }, setIfAbsent: firstSeen, remove, condition: CURRENT, values },
      provider,
    );
    return { alert: false, stale: !current };
  }
  const sameCrossing =
    disarm === undefined
      ? ''
      : disarm === 0
        ? ' AND (attribute_not_exists(#alerts) OR #alerts = :alerts)'
        : ' AND #alerts = :alerts';
  const won =
    disarm !== false &&
    (await update(
      table,
      {
        set: { ...observed, armed: bool(false), lastAlertAt: str(at) },
        setIfAbsent: firstSeen,
        remove,
        add: { alerts: num(1) },
        condition: `(attribute_not_exists(#armed) OR #armed = :true) AND ${CURRENT}${sameCrossing}`,
        values: { ...values, ':true': bool(true), ...(disarm === undefined ? {} : { ':alerts': num(disarm) }) },
      },
      provider,
    ));
  if (won) return { alert: true, stale: false };
  // Already disarmed (or stale): still record the observation if it is current.
  const current = await update(
    table,
    { set: observed, setIfAbsent: firstSeen, remove, condition: CURRENT, values },
    provider,
  );
  return { alert: false, stale: !current };
};

/** One price for `recordPrice`. */
export interface PriceObservation {
  /** Credits per recipient and segment: a send's `deducted` over its units, or the service's `smsRate`. */
  readonly creditsPerUnit: number;
  readonly now?: Date;
  /** @default 'main' */
  readonly provider?: string;
}

/** The price each store last wrote or read, and when: a send at the same price need not write it again. */
const knownPrices = new WeakMap<StoreTable, Map<string, { readonly creditsPerUnit: number; readonly at: number }>>();

const pricesOf = (table: StoreTable): Map<string, { readonly creditsPerUnit: number; readonly at: number }> => {
  let prices = knownPrices.get(table);
  if (prices === undefined) knownPrices.set(table, (prices = new Map()));
  return prices;
};

const knowPrice = (table: StoreTable, provider: string, creditsPerUnit: number | undefined): void => {
  if (creditsPerUnit !== undefined) pricesOf(table).set(provider, { creditsPerUnit, at: Date.now() });
};

/**
 * Keeps the price of one SMS to one recipient, so that every process estimates a send's cost the
 * same way from its first send on (a cold start has no price of its own). The last recorded price
 * wins. A price this store wrote or read within {@link PRICE_KNOWN_MS} is not written again: the
 * item is written when the price changes, not on every send.
 *
 * @example
 * ```typescript
 * await store.recordPrice({ creditsPerUnit: result.deducted / (record.to.length * record.segments) });
 * ```
 */
export const recordPrice = async (
  table: StoreTable,
  { creditsPerUnit, now = table.clock(), provider = MAIN_PROVIDER }: PriceObservation,
): Promise<void> => {
  if (!Number.isFinite(creditsPerUnit) || creditsPerUnit <= 0) {
    throw new StoreError(`creditsPerUnit must be a number > 0, got ${creditsPerUnit}`);
  }
  const known = pricesOf(table).get(provider);
  if (known !== undefined && known.creditsPerUnit === creditsPerUnit && Date.now() - known.at < PRICE_KNOWN_MS) return;
  await update(
    table,
    {
      set: {
        kind: str(ItemKind.Balance),
        creditsPerUnit: num(creditsPerUnit),
        priceRecordedAt: str(now.toISOString()),
      },
    },
    provider,
  );
  knowPrice(table, provider, creditsPerUnit);
};

/**
 * Reads the balance watch's state; before any observation it is armed with nothing recorded.
 *
 * @example
 * ```typescript
 * const { armed, lastBalance } = await store.getBalanceState();
 * ```
 */
export const getBalanceState = async (table: StoreTable, provider: string = MAIN_PROVIDER): Promise<BalanceState> => {
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: balanceKey(provider), ConsistentRead: true }),
  );
  if (item === undefined) return { armed: true };
  const read = new ItemReader(item, 'BALANCE');
  const lastBalance = read.optNum('lastBalance');
  const lastCheckedAt = read.optStr('lastCheckedAt');
  const lastAlertAt = read.optStr('lastAlertAt');
  const firstObservedAt = read.optStr('firstObservedAt');
  const creditsPerUnit = read.optNum('creditsPerUnit');
  knowPrice(table, provider, creditsPerUnit);
  const projected = read.optNum('projected');
  const charged = read.optNum('charged');
  const rebasedAt = read.optStr('rebasedAt');
  const alerts = read.optNum('alerts');
  const spendPerDay = read.optNum('spendPerDay');
  return {
    armed: read.optBool('armed') ?? true,
    ...(alerts === undefined ? {} : { alerts }),
    ...(lastBalance === undefined ? {} : { lastBalance }),
    ...(lastCheckedAt === undefined ? {} : { lastCheckedAt }),
    ...(lastAlertAt === undefined ? {} : { lastAlertAt }),
    ...(firstObservedAt === undefined ? {} : { firstObservedAt }),
    ...(creditsPerUnit === undefined ? {} : { creditsPerUnit }),
    ...(projected === undefined ? {} : { projected }),
    ...(charged === undefined ? {} : { charged }),
    ...(rebasedAt === undefined ? {} : { rebasedAt }),
    ...(spendPerDay === undefined ? {} : { spendPerDay }),
  };
};

/**
 * The balance watch's state and the price: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const balanceOperations = (table: StoreTable) => ({
  /** Records a balance; `alert: true` for exactly one caller per drop below the threshold. */
  updateBalanceState: async (observation: BalanceObservation): Promise<BalanceUpdate> =>
    await updateBalanceState(table, observation),
  /** The balance watch's state, with the last known balance and price. */
  getBalanceState: async (provider?: string): Promise<BalanceState> => await getBalanceState(table, provider),
  /** Keeps the price of one SMS to one recipient, for every process's cost estimates. */
  recordPrice: async (observation: PriceObservation): Promise<void> => await recordPrice(table, observation),
});
