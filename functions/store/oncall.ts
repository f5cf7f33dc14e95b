import { ONCALL } from '../core/defaults';
import type { OnCallOverride } from '../core/oncall/resolve';
import { type Item, ItemReader, num, str } from './attributes';
import { StoreError } from './errors';
import { newId } from './ids';
import { epochSeconds, ItemKind, onCallPk, overrideKey, overrideSk } from './keys';
import { queryAll } from './range';
import type { StoreTable } from './store-table';
import { TABLE } from './table';
import { writeIf } from './write';

/** What `overrideOnCall` sets. */
export interface OverrideInput {
  readonly schedule: string;
  /** A name of the config's `people`: the caller checks it (the store holds no config). */
  readonly person: string;
  /** How long from `now`, in seconds (1 to `ONCALL.maxOverrideSeconds`). */
  readonly forSeconds: number;
  readonly reason: string;
  readonly now?: Date;
}

/**
 * Puts `person` on call for `schedule` from `now` for `forSeconds`, whatever the rotation says. Each
 * override is an item of its own (the schedule's partition, sorted by when it was set), written by
 * a conditional put that never replaces one: the newest in force wins (see `onCallAt`), and the
 * ones it covers are kept, so the history of who covered stays readable until the TTL.
 *
 * @throws {StoreError} a length or reason out of bounds
 *
 * @example
 * ```typescript
 * await store.overrideOnCall({ schedule: 'ops', person: 'baraka', forSeconds: 8 * 3600, reason: 'asha travels' });
 * ```
 */
export const overrideOnCall = async (
  table: StoreTable,
  { schedule, person, forSeconds, reason, now = table.clock() }: OverrideInput,
): Promise<OnCallOverride> => {
  if (!Number.isInteger(forSeconds) || forSeconds < 1 || forSeconds > ONCALL.maxOverrideSeconds) {
    throw new StoreError(
      `an override lasts from 1 s to ${ONCALL.maxOverrideSeconds / 86_400} days, got ${forSeconds} s`,
    );
  }
  const trimmed = reason.trim();
  if (trimmed.length > ONCALL.maxReasonChars)
    throw new StoreError(`an override's reason is at most ${ONCALL.maxReasonChars} characters, got ${trimmed.length}`);
  const until = new Date(now.getTime() + forSeconds * 1000);
  const override: OnCallOverride = {
    id: newId(now),
    schedule,
    person,
    from: now.toISOString(),
    until: until.toISOString(),
    reason: trimmed,
    createdAt: now.toISOString(),
  };
  const outcome = await writeIf(table, {
    Item: {
      ...overrideKey(schedule, override.createdAt, override.id),
      kind: str(ItemKind.OnCallOverride),
      id: str(override.id),
      schedule: str(schedule),
      person: str(person),
      from: str(override.from),
      until: str(override.until),
      reason: str(override.reason),
      createdAt: str(override.createdAt),
      [TABLE.timeToLive]: num(epochSeconds(until) + ONCALL.keptSeconds),
    },
    ConditionExpression: 'attribute_not_exists(#pk)',
    ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
  });
  // A fresh id in its own key: only a clash of random ids could refuse it.
  if (!outcome.applied) throw new StoreError(`override ${override.id} of ${schedule} exists already; set it again`);
  return override;
};

const readOverride = (item: Item): OnCallOverride => {
  const read = new ItemReader(item, 'on-call override');
  return {
    id: read.str('id'),
    schedule: read.str('schedule'),
    person: read.str('person'),
    from: read.str('from'),
    until: read.str('until'),
    reason: read.optStr('reason') ?? '',
    createdAt: read.str('createdAt'),
  };
};

/**
 * The overrides of these schedules still in force at `now` or later (one Query per schedule, side
 * by side), oldest first: what `oncall:` recipients and `sms-relay oncall` resolve with.
 *
 * @example
 * ```typescript
 * const overrides = await store.activeOverrides({ schedules: ['ops'] });
 * onCallAt(ops, overrides, people, new Date());
 * ```
 */
export const activeOverrides = async (
  table: StoreTable,
  { schedules, now = table.clock() }: { readonly schedules: readonly string[]; readonly now?: Date },
): Promise<OnCallOverride[]> => {
  const each = await Promise.all(
    [...new Set(schedules)].map(
      async (schedule) =>
        await queryAll(table, onCallPk(schedule), overrideSk('', ''), overrideSk('\uffff', ''), {
          expression: '#until > :now',
          names: { '#until': 'until' },
          values: { ':now': str(now.toISOString()) },
        }),
    ),
  );
  return each.flat().map(readOverride);
};

/**
 * On-call overrides: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const onCallOperations = (table: StoreTable) => ({
  /** Puts a person on call for a schedule for a while, over the rotation. See {@link overrideOnCall}. */
  overrideOnCall: async (input: OverrideInput): Promise<OnCallOverride> => await overrideOnCall(table, input),
  /** The overrides of these schedules in force now or later. See {@link activeOverrides}. */
  activeOverrides: async (input: {
    readonly schedules: readonly string[];
    readonly now?: Date;
  }): Promise<OnCallOverride[]> => await activeOverrides(table, input),
});
