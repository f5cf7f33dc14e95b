import { num, str } from './attributes';
import { buildUpdate } from './expressions';
import { ItemKind, rateWindowKey } from './keys';
import type { StoreTable } from './store-table';
import { TABLE } from './table';
import { writeIf } from './write';

/** How long a second's count is kept before DynamoDB's TTL removes it: long enough to read back after an incident. */
const RATE_WINDOW_KEPT_SECONDS = 3_600;

/**
 * Takes one of the `maxPerSecond` sends of the second `epochSecond`, shared by every sender, sweeper
 * and local runtime: one conditional increment of that second's counter, which refuses past the
 * maximum. Returns the slot's number in its second (1 to `maxPerSecond`), or `undefined` when the
 * second is full.
 *
 * @example
 * ```ts
 * const slot = await takeRateSlot(table, { epochSecond: 1_764_806_400, maxPerSecond: 20 }); // 1
 * ```
 */
export const takeRateSlot = async (
  table: StoreTable,
  {
    epochSecond,
    maxPerSecond,
    provider,
  }: { readonly epochSecond: number; readonly maxPerSecond: number; readonly provider?: string },
): Promise<number | undefined> => {
  const outcome = await writeIf(table, {
    Key: rateWindowKey(epochSecond, provider),
    ReturnValues: 'UPDATED_NEW',
    ...buildUpdate({
      set: {
        kind: str(ItemKind.RateWindow),
        [TABLE.timeToLive]: num(epochSecond + RATE_WINDOW_KEPT_SECONDS),
      },
      add: { sends: num(1) },
      condition: 'attribute_not_exists(#sends) OR #sends < :max',
      values: { ':max': num(maxPerSecond) },
    }),
  });
  return outcome.applied ? Number(outcome.item['sends']?.N) : undefined;
};

/**
 * Moves the second `epochSecond`'s count up to `slot` when it is below it, for a send whose slot
 * number fell behind the clock (no send took the slots of the part of the second already gone):
 * one conditional write, refused when the count is at `slot` or past it (another send moved it).
 * Returns whether the count is now `slot`, taken by the caller.
 *
 * @example
 * ```ts
 * await takeRateSlot(table, { epochSecond, maxPerSecond: 15 }); // 1, 600 ms into the second
 * await raiseRateSlot(table, { epochSecond, slot: 13 }); // true: slot 13 is the caller's
 * ```
 */
export const raiseRateSlot = async (
  table: StoreTable,
  { epochSecond, slot, provider }: { readonly epochSecond: number; readonly slot: number; readonly provider?: string },
): Promise<boolean> => {
  const outcome = await writeIf(table, {
    Key: rateWindowKey(epochSecond, provider),
    ...buildUpdate({
      set: {
        kind: str(ItemKind.RateWindow),
        [TABLE.timeToLive]: num(epochSecond + RATE_WINDOW_KEPT_SECONDS),
        sends: num(slot),
      },
      condition: 'attribute_not_exists(#sends) OR #sends < :slot',
      values: { ':slot': num(slot) },
    }),
  });
  return outcome.applied;
};

/**
 * The provider's rate, shared by every sender: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const rateOperations = (table: StoreTable) => ({
  /** One send of the second `epochSecond` under `provider.maxPerSecond`, shared by every sender: its number in the second, `undefined` when the second is full. See {@link takeRateSlot}. */
  takeRateSlot: async (input: {
    readonly epochSecond: number;
    readonly maxPerSecond: number;
    readonly provider?: string;
  }): Promise<number | undefined> => await takeRateSlot(table, input),
  /** Moves the second's count up to `slot`, when below it: whether `slot` is the caller's. See {@link raiseRateSlot}. */
  raiseRateSlot: async (input: {
    readonly epochSecond: number;
    readonly slot: number;
    readonly provider?: string;
  }): Promise<boolean> => await raiseRateSlot(table, input),
});
