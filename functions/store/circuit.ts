import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { type Item, ItemReader, num, str } from './attributes';
import { buildUpdate, type UpdateSpec } from './expressions';
import { CIRCUIT_PK, circuitKey, ItemKind, MAIN_PROVIDER } from './keys';
import type { StoreTable } from './store-table';
import { writeIf } from './write';
import { queryIndexed } from './record-reads';
import { MessageState, TABLE } from './table';

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
  /** When the last failure was counted. */
  readonly lastFailureAt?: string;
  /**
   * Set while closed on probation: a probe found the service answering, and one send at a time (the
   * trial) may go until one goes through; the first that fails re-opens it.
   */
  readonly probationSince?: string;
  /** While on probation: the lease of the one trial send under way (another may start once it has passed). */
  readonly trialUntil?: string;
  /** Set when an operator opened it (`sms-relay circuit open`, the console): who. Sends answering do not close it; its probe does, when due. */
  readonly openedBy?: string;
}

const CLOSED: CircuitState = { failures: 0, probes: 0 };

const stateOf = (item: Item | undefined): CircuitState => {
  if (item === undefined || Object.keys(item).length === 0) return CLOSED;
  const read = new ItemReader(item, CIRCUIT_PK);
  const openedAt = read.optStr('openedAt');
  const nextProbeAt = read.optStr('nextProbeAt');
  const optional = Object.fromEntries(
    OPTIONAL_TEXTS.map((name) => [name, read.optStr(name)] as const).filter(([, value]) => value !== undefined),
  );
  return {
    failures: read.optNum('failures') ?? 0,
    probes: read.optNum('probes') ?? 0,
    ...(openedAt === undefined ? {} : { openedAt }),
    ...(nextProbeAt === undefined ? {} : { nextProbeAt }),
    ...optional,
  };
};

const OPTIONAL_TEXTS = ['lastError', 'lastFailureAt', 'probationSince', 'trialUntil', 'openedBy'] as const;

/** What an opening, a re-opening or a close ends: the probation and its trial. */
const PROBATION = ['probationSince', 'trialUntil'] as const;

/** Names the provider whose circuit an operation is about; absent: `main`. */
export interface ProviderScope {
  /** @default 'main' */
  readonly provider?: string;
}

const update = async (
  table: StoreTable,
  spec: UpdateSpec,
  returnValues: 'ALL_NEW' | 'ALL_OLD' = 'ALL_NEW',
  provider: string = MAIN_PROVIDER,
) =>
  await writeIf(table, {
    Key: circuitKey(provider),
    ReturnValues: returnValues,
    ...buildUpdate({ ...spec, set: { kind: str(ItemKind.Circuit), ...spec.set } }),
  });

/** A provider's circuit, strongly consistent. */
export const getCircuit = async (table: StoreTable, provider: string = MAIN_PROVIDER): Promise<CircuitState> =>
  stateOf(
    (
      await table.client.send(
        new GetItemCommand({ TableName: table.tableName, Key: circuitKey(provider), ConsistentRead: true }),
      )
    ).Item,
  );

/** Input of {@link recordCircuitFailure}. */
export interface CircuitFailureInput extends ProviderScope {
  /** Failures in a row that open the circuit. */
  readonly threshold: number;
  /** When the first probe may start should this failure open it, given the probes that failed before (see `probes`). */
  readonly firstProbeAt: (probes: number) => Date;
  /** What failed, as `code` or `code status`. */
  readonly error: string;
  readonly now?: Date;
  /**
   * Whether every message settled SENT went out through this provider (one provider sends them
   * all), so a SENT record since the last failure proves this provider answered. With several
   * providers it proves nothing about this one: the count then adds, and each send that goes
   * through resets it (`noteSendWentThrough`).
   * @default true
   */
  readonly sentRecordsAreItsSuccesses?: boolean;
}

/**
 * Counts one more failure in a row, and opens the circuit when the count reaches `threshold`: the
 * opening is a conditional write that exactly one of several failing senders wins (`opened: true`),
 * so the opening is announced once.
 *
 * A send that goes through writes nothing to the circuit while its process knows of no failure
 * (see `noteSendWentThrough` in `functions/relay/circuit.ts`): its settle is the success's record.
 * So the failure side asks: was any message settled SENT since the last failure counted? If so the
 * count starts again at 1 instead of adding, and failures of different processes with successes
 * between them never add up to an outage. Failures are rare; this costs a read and one query of the
 * state index per failure, where the success side cost a write per send.
 */
export const recordCircuitFailure = async (
  table: StoreTable,
  {
    threshold,
    firstProbeAt,
    error,
    now = table.clock(),
    provider,
    sentRecordsAreItsSuccesses = true,
  }: CircuitFailureInput,
): Promise<{ readonly state: CircuitState; readonly opened: boolean }> => {
  const counted = sentRecordsAreItsSuccesses
    ? await countFailure(table, error, now, provider)
    : await update(
        table,
        { set: { lastError: str(error), lastFailureAt: str(now.toISOString()) }, add: { failures: num(1) } },
        'ALL_NEW',
        provider,
      );
  const state = stateOf(counted.applied ? counted.item : undefined);
  if (state.openedAt !== undefined || state.failures < threshold) return { state, opened: false };
  const opening = await update(
    table,
    {
      set: { openedAt: str(now.toISOString()), nextProbeAt: str(firstProbeAt(state.probes).toISOString()) },
      remove: [...PROBATION],
      condition: 'attribute_not_exists(#openedAt) AND #failures >= :threshold',
      values: { ':threshold': num(threshold) },
    },
    'ALL_NEW',
    provider,
  );
  return opening.applied
    ? { state: stateOf(opening.item), opened: true }
    : { state: await getCircuit(table, provider), opened: false };
};

/** Attempts at counting a failure against the circuit as read, before adding to whatever is stored. */
const COUNT_ATTEMPTS = 3;

/**
 * One more failure: added to the count when the failures stored are still in a row, else the count
 * restarts at 1. Written only if the item still holds the count and last failure it was read with
 * (another process counting at the same time makes it read again); after `COUNT_ATTEMPTS` such
 * races it adds, as a failure always did.
 */
const countFailure = async (table: StoreTable, error: string, now: Date, provider: string | undefined) => {
  for (let attempt = 1; ; attempt += 1) {
    const seen = await getCircuit(table, provider);
    const inARow =
      seen.failures > 0 && (seen.lastFailureAt === undefined || !(await sentSince(table, seen.lastFailureAt)));
    const last = attempt === COUNT_ATTEMPTS;
    const counted = await update(
      table,
      {
        set: { lastError: str(error), lastFailureAt: str(now.toISOString()), ...(inARow ? {} : { failures: num(1) }) },
        ...(inARow ? { add: { failures: num(1) } } : {}),
        ...(last ? {} : unchangedSince(seen)),
      },
      'ALL_NEW',
      provider,
    );
    if (counted.applied || last) return counted;
  }
};

/** The condition that the circuit's count and last failure are still those of `seen`. */
const unchangedSince = (seen: CircuitState): Pick<UpdateSpec, 'condition' | 'values'> => ({
  condition: [
    seen.failures === 0
      ? '(attribute_not_exists(#failures) OR #failures = :seenFailures)'
      : '#failures = :seenFailures',
    seen.lastFailureAt === undefined ? 'attribute_not_exists(#lastFailureAt)' : '#lastFailureAt = :seenFailureAt',
  ].join(' AND '),
  values: {
    ':seenFailures': num(seen.failures),
    ...(seen.lastFailureAt === undefined ? {} : { ':seenFailureAt': str(seen.lastFailureAt) }),
  },
});

/**
 * Whether any message was settled SENT at or after `since`: one entry of the state index, read in
 * both runtimes (a success is a proof the service answered; an entry the index has not caught up
 * with yet, on AWS a fraction of a second, only lets one more failure count, as it would have
 * before). A send settled in the same millisecond as the last failure counts as after it: which
 * came first cannot be told, and in an outage no send is settled SENT at all.
 */
const sentSince = async (table: StoreTable, since: string): Promise<boolean> => {
  const { byState } = TABLE.indexes;
  const answer = await queryIndexed(table, {
    TableName: table.tableName,
    IndexName: byState.name,
    KeyConditionExpression: '#state = :sent AND #at >= :since',
    ExpressionAttributeNames: { '#state': byState.partitionKey, '#at': byState.sortKey },
    ExpressionAttributeValues: { ':sent': str(MessageState.Sent), ':since': str(since) },
    Select: 'COUNT',
    Limit: 1,
  });
  return (answer.Count ?? 0) > 0;
};

/**
 * The service answered: an open circuit closes, and exactly one caller learns it closed it
 * (`closed`, with the state it had). A send that went through ends the failures in a row, the
 * probation and the probes; it does not close a circuit an operator opened (`openedBy`: only its
 * probe, once due, or `sms-relay circuit close` do). A probe only proves the service answers: with
 * `probation` the circuit closes on probation, with that many failures counted and its probes kept
 * (this one counted too), so one trial send at a time may go (see {@link claimCircuitTrial}) and the
 * first that fails re-opens it (at the probe backoff it had reached, doubled) instead of costing
 * more maybe-sent messages each time.
 */
export const recordCircuitSuccess = async (
  table: StoreTable,
  {
    probation,
    now = table.clock(),
    provider,
  }: { readonly probation?: number; readonly now?: Date } & ProviderScope = {},
): Promise<{ readonly closed?: CircuitState }> => {
  const outcome = await update(
    table,
    probation === undefined
      ? {
          set: { failures: num(0) },
          remove: ['openedAt', 'nextProbeAt', 'probes', ...PROBATION],
          condition:
            'attribute_not_exists(#openedBy) AND (#failures > :zero OR attribute_exists(#openedAt) OR attribute_exists(#probes) OR attribute_exists(#probationSince))',
          values: { ':zero': num(0) },
        }
      : {
          set: { failures: num(probation), probationSince: str(now.toISOString()) },
          add: { probes: num(1) },
          remove: ['openedAt', 'nextProbeAt', 'openedBy', 'trialUntil'],
          condition: 'attribute_exists(#openedAt)',
        },
    'ALL_OLD',
    provider,
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
  { leaseUntil, now = table.clock(), provider }: { readonly leaseUntil: Date; readonly now?: Date } & ProviderScope,
): Promise<CircuitState | undefined> => {
  const outcome = await update(
    table,
    {
      set: { nextProbeAt: str(leaseUntil.toISOString()) },
      condition: 'attribute_exists(#openedAt) AND #nextProbeAt <= :now',
      values: { ':now': str(now.toISOString()) },
    },
    'ALL_NEW',
    provider,
  );
  return outcome.applied ? stateOf(outcome.item) : undefined;
};

/**
 * Takes the one trial send of a circuit on probation, for one caller, until `leaseUntil` (a sender
 * that stops lets another try once it has passed). `false`: not on probation, open, or another
 * caller's trial is under way.
 */
export const claimCircuitTrial = async (
  table: StoreTable,
  { leaseUntil, now = table.clock(), provider }: { readonly leaseUntil: Date; readonly now?: Date } & ProviderScope,
): Promise<boolean> =>
  (
    await update(
      table,
      {
        set: { trialUntil: str(leaseUntil.toISOString()) },
        condition:
          'attribute_exists(#probationSince) AND attribute_not_exists(#openedAt) AND (attribute_not_exists(#trialUntil) OR #trialUntil <= :now)',
        values: { ':now': str(now.toISOString()) },
      },
      'ALL_NEW',
      provider,
    )
  ).applied;

/** Gives back a trial that said nothing about the service (it was never sent, or a 429): the next send may be the trial. */
export const releaseCircuitTrial = async (
  table: StoreTable,
  { leaseUntil, provider }: { readonly leaseUntil: Date } & ProviderScope,
): Promise<boolean> =>
  (
    await update(
      table,
      {
        remove: ['trialUntil'],
        condition: '#trialUntil = :lease',
        values: { ':lease': str(leaseUntil.toISOString()) },
      },
      'ALL_NEW',
      provider,
    )
  ).applied;

/** Gives back a probe lease that probed nothing (its send was never made): the probe is due again at `now`. */
export const releaseCircuitProbe = async (
  table: StoreTable,
  { leaseUntil, now = table.clock(), provider }: { readonly leaseUntil: Date; readonly now?: Date } & ProviderScope,
): Promise<boolean> =>
  (
    await update(
      table,
      {
        set: { nextProbeAt: str(now.toISOString()) },
        condition: 'attribute_exists(#openedAt) AND #nextProbeAt = :lease',
        values: { ':lease': str(leaseUntil.toISOString()) },
      },
      'ALL_NEW',
      provider,
    )
  ).applied;

/**
 * An operator opens the circuit (`sms-relay circuit open --for 30m`, the console): no send starts
 * until `until`, when the probes start again as after any opening. An open circuit keeps its
 * `openedAt` and gets the new `until`.
 */
export const openCircuitByHand = async (
  table: StoreTable,
  {
    until,
    by,
    now = table.clock(),
    provider,
  }: { readonly until: Date; readonly by: string; readonly now?: Date } & ProviderScope,
): Promise<CircuitState> => {
  const outcome = await update(
    table,
    {
      set: { nextProbeAt: str(until.toISOString()), openedBy: str(by) },
      setIfAbsent: { openedAt: str(now.toISOString()) },
      remove: [...PROBATION],
    },
    'ALL_NEW',
    provider,
  );
  return stateOf(outcome.applied ? outcome.item : undefined);
};

/** An operator closes the circuit (`sms-relay circuit close`): sends start at once, failures and probes forgotten. Returns the state it had. */
export const closeCircuitByHand = async (
  table: StoreTable,
  provider: string = MAIN_PROVIDER,
): Promise<CircuitState> => {
  const outcome = await update(
    table,
    { set: { failures: num(0) }, remove: ['openedAt', 'nextProbeAt', 'probes', 'openedBy', ...PROBATION] },
    'ALL_OLD',
    provider,
  );
  return stateOf(outcome.applied ? outcome.item : undefined);
};

/** A probe failed: the next one may start at `nextProbeAt`. Only for the opening `openedAt` (a closed or re-opened circuit is left alone). */
export const recordCircuitProbeFailure = async (
  table: StoreTable,
  {
    openedAt,
    nextProbeAt,
    error,
    provider,
  }: { readonly openedAt: string; readonly nextProbeAt: Date; readonly error: string } & ProviderScope,
): Promise<boolean> =>
  (
    await update(
      table,
      {
        set: { nextProbeAt: str(nextProbeAt.toISOString()), lastError: str(error) },
        add: { probes: num(1) },
        condition: '#openedAt = :openedAt',
        values: { ':openedAt': str(openedAt) },
      },
      'ALL_NEW',
      provider,
    )
  ).applied;

/**
 * The SMS service's circuit: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const circuitOperations = (table: StoreTable) => ({
  /** The circuit's conditional changes; see `functions/store/circuit.ts`. */
  circuit: {
    /** One more failure in a row; opens the circuit at the threshold (`opened` for exactly one caller). See {@link recordCircuitFailure}. */
    failed: async (input: CircuitFailureInput): Promise<{ readonly state: CircuitState; readonly opened: boolean }> =>
      await recordCircuitFailure(table, input),
    /** A call succeeded: failures reset, an open circuit closes (`closed` for exactly one caller). See {@link recordCircuitSuccess}. */
    succeeded: async (
      input?: { readonly probation?: number; readonly now?: Date } & ProviderScope,
    ): Promise<{ readonly closed?: CircuitState }> => await recordCircuitSuccess(table, input),
    /** The right to probe an open circuit whose probe is due, for one caller. See {@link claimCircuitProbe}. */
    claimProbe: async (
      input: { readonly leaseUntil: Date; readonly now?: Date } & ProviderScope,
    ): Promise<CircuitState | undefined> => await claimCircuitProbe(table, input),
    /** A probe failed; the next may start at `nextProbeAt`. See {@link recordCircuitProbeFailure}. */
    probeFailed: async (
      input: { readonly openedAt: string; readonly nextProbeAt: Date; readonly error: string } & ProviderScope,
    ): Promise<boolean> => await recordCircuitProbeFailure(table, input),
    /** Gives back a probe lease whose send was never made. See {@link releaseCircuitProbe}. */
    releaseProbe: async (input: { readonly leaseUntil: Date; readonly now?: Date } & ProviderScope): Promise<boolean> =>
      await releaseCircuitProbe(table, input),
    /** The one trial send of a circuit on probation, for one caller. See {@link claimCircuitTrial}. */
    claimTrial: async (input: { readonly leaseUntil: Date; readonly now?: Date } & ProviderScope): Promise<boolean> =>
      await claimCircuitTrial(table, input),
    /** Gives back a trial that said nothing about the service. See {@link releaseCircuitTrial}. */
    releaseTrial: async (input: { readonly leaseUntil: Date } & ProviderScope): Promise<boolean> =>
      await releaseCircuitTrial(table, input),
    /** An operator opens it until `until`. See {@link openCircuitByHand}. */
    open: async (
      input: { readonly until: Date; readonly by: string; readonly now?: Date } & ProviderScope,
    ): Promise<CircuitState> => await openCircuitByHand(table, input),
    /** An operator closes it; returns the state it had. See {@link closeCircuitByHand}. */
    close: async (provider?: string): Promise<CircuitState> => await closeCircuitByHand(table, provider),
  },
  /** The SMS service's circuit, shared by every sender; strongly consistent. See {@link getCircuit}. */
  getCircuit: async (provider?: string): Promise<CircuitState> => await getCircuit(table, provider),
});
