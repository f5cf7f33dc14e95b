import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { type Item, ItemReader, num, str } from './attributes';
import { buildUpdate, type UpdateSpec } from './expressions';
import { CIRCUIT_PK, circuitKey, ItemKind } from './keys';
import type { StoreTable } from './store-table';
import { writeIf } from './write';

/**
 * The SMS service's circuit as the table holds it: one item shared by every sender, sweeper and
 * local runtime. Closed (no `openedAt`): sends go ahead. Open: sends wait, and one process at a
 * time probes the service (see `claimCircuitProbe`).
 */
export interface CircuitState {
  /** Sends that failed in a row in a way that says the service is unreachable (refused, 5xx, time-outs, resets). */
  readonly failures: number;
  /** Set while open: when the failures reached the threshold. */
  readonly openedAt?: string;
  /** While open: when the next probe may start (a probe under way holds it as its lease). */
  readonly nextProbeAt?: string;
  /** While open: probes that failed since it opened (the probe backoff doubles with each). */
  readonly probes: number;
  /** The last failure, as `code` or `code status` (never a message text, which may carry anything). */
  readonly lastError?: string;
}

const CLOSED: CircuitState = { failures: 0, probes: 0 };

const stateOf = (item: Item | undefined): CircuitState => {
  if (item === undefined || Object.keys(item).length === 0) return CLOSED;
  const read = new ItemReader(item, CIRCUIT_PK);
  const openedAt = read.optStr('openedAt');
  const nextProbeAt = read.optStr('nextProbeAt');
  const lastError = read.optStr('lastError');
  return {
    failures: read.optNum('failures') ?? 0,
    probes: read.optNum('probes') ?? 0,
    ...(openedAt === undefined ? {} : { openedAt }),
    ...(nextProbeAt === undefined ? {} : { nextProbeAt }),
    ...(lastError === undefined ? {} : { lastError }),
  };
};

const update = async (table: StoreTable, spec: UpdateSpec, returnValues: 'ALL_NEW' | 'ALL_OLD' = 'ALL_NEW') =>
  await writeIf(table, {
    Key: circuitKey(),
    ReturnValues: returnValues,
    ...buildUpdate({ ...spec, set: { kind: str(ItemKind.Circuit), ...spec.set } }),
  });

/** The circuit, strongly consistent. */
export const getCircuit = async (table: StoreTable): Promise<CircuitState> =>
  stateOf(
    (
      await table.client.send(
        new GetItemCommand({ TableName: table.tableName, Key: circuitKey(), ConsistentRead: true }),
      )
    ).Item,
  );

/** Input of {@link recordCircuitFailure}. */
export interface CircuitFailureInput {
  /** Failures in a row that open the circuit. */
  readonly threshold: number;
  /** When the first probe may start should this failure open it, given the probes that failed before (see `probes`). */
  readonly firstProbeAt: (probes: number) => Date;
  /** What failed, as `code` or `code status`. */
  readonly error: string;
  readonly now?: Date;
}

/**
 * Counts one more failure in a row, and opens the circuit when the count reaches `threshold`: the
 * opening is a conditional write that exactly one of several failing senders wins (`opened: true`),
 * so the opening is announced once.
 */
export const recordCircuitFailure = async (
  table: StoreTable,
  { threshold, firstProbeAt, error, now = table.clock() }: CircuitFailureInput,
): Promise<{ readonly state: CircuitState; readonly opened: boolean }> => {
  const counted = await update(table, {
    set: { lastError: str(error), lastFailureAt: str(now.toISOString()) },
    add: { failures: num(1) },
  });
  const state = stateOf(counted.applied ? counted.item : undefined);
  if (state.openedAt !== undefined || state.failures < threshold) return { state, opened: false };
  const opening = await update(table, {
    set: { openedAt: str(now.toISOString()), nextProbeAt: str(firstProbeAt(state.probes).toISOString()) },
    condition: 'attribute_not_exists(#openedAt) AND #failures >= :threshold',
    values: { ':threshold': num(threshold) },
  });
  return opening.applied
    ? { state: stateOf(opening.item), opened: true }
    : { state: await getCircuit(table), opened: false };
};

/**
 * The service answered: an open circuit closes, and exactly one caller learns it closed it
 * (`closed`, with the state it had). A send that went through ends the failures in a row and
 * forgets the probes. A probe only proves the balance endpoint answers: with `probation` the
 * circuit closes with that many failures counted and its probes kept (this one counted too), so the
 * first send that fails again re-opens it (at the probe backoff it had reached, doubled) instead of costing `threshold` more
 * maybe-sent messages each time.
 */
export const recordCircuitSuccess = async (
  table: StoreTable,
  { probation }: { readonly probation?: number } = {},
): Promise<{ readonly closed?: CircuitState }> => {
  const outcome = await update(
    table,
    probation === undefined
      ? {
          set: { failures: num(0) },
          remove: ['openedAt', 'nextProbeAt', 'probes'],
          condition: '#failures > :zero OR attribute_exists(#openedAt) OR attribute_exists(#probes)',
          values: { ':zero': num(0) },
        }
      : {
          set: { failures: num(probation) },
          add: { probes: num(1) },
          remove: ['openedAt', 'nextProbeAt'],
          condition: 'attribute_exists(#openedAt)',
        },
    'ALL_OLD',
  );
  if (!outcome.applied) return {};
  const before = stateOf(outcome.item);
  return before.openedAt === undefined ? {} : { closed: before };
};

/**
 * Takes the right to probe an open circuit whose probe is due, for one caller: `nextProbeAt` moves
 * to `leaseUntil`, so no other process probes meanwhile, and a prober that stops lets another probe
 * once the lease has passed. `undefined`: closed, not due, or another caller took it.
 */
export const claimCircuitProbe = async (
  table: StoreTable,
  { leaseUntil, now = table.clock() }: { readonly leaseUntil: Date; readonly now?: Date },
): Promise<CircuitState | undefined> => {
  const outcome = await update(table, {
    set: { nextProbeAt: str(leaseUntil.toISOString()) },
    condition: 'attribute_exists(#openedAt) AND #nextProbeAt <= :now',
    values: { ':now': str(now.toISOString()) },
  });
  return outcome.applied ? stateOf(outcome.item) : undefined;
};

/** A probe failed: the next one may start at `nextProbeAt`. Only for the opening `openedAt` (a closed or re-opened circuit is left alone). */
export const recordCircuitProbeFailure = async (
  table: StoreTable,
  { openedAt, nextProbeAt, error }: { readonly openedAt: string; readonly nextProbeAt: Date; readonly error: string },
): Promise<boolean> =>
  (
    await update(table, {
      set: { nextProbeAt: str(nextProbeAt.toISOString()), lastError: str(error) },
      add: { probes: num(1) },
      condition: '#openedAt = :openedAt',
      values: { ':openedAt': str(openedAt) },
    })
  ).applied;
