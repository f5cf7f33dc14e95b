import { coalesce } from '../core/coalesce';
import { CIRCUIT, SEND_MARGIN_MS } from '../core/defaults';
import { DeliveryPolicy } from '../core/config/policies';
import { SmsErrorCode, SmsServiceError } from '../core/provider';
import { type CircuitState, type MessageStore, MessageState } from '../store';
import { RelayMetric, type RelayContext } from './ports';
import { sendsThroughChain } from './provider-scope';
import type { RelayConfigView } from '../core/config/view';

/** What the SMS service's circuit uses of the store (the record only to pick a send as the probe). */
export type CircuitStore = Pick<MessageStore, 'getCircuit' | 'circuit' | 'getMessage'>;

/**
 * The SMS service's circuit, as the relay operations use it (the state is one item in the table,
 * see `functions/store/circuit.ts`; the numbers are `CIRCUIT` in `functions/core/defaults.ts`):
 * - a send that fails in a way that says the service is unreachable counts one failure in a row
 *   ({@link noteServiceFailure}); `CIRCUIT.failuresToOpen` of them open the circuit. A failure
 *   counted after a message was settled SENT starts the count again (the store looks for one), so
 *   failures of different processes with successes between them never add up to an outage. A send
 *   that goes through writes to the circuit only when its process knows of failures, probes or a
 *   probation ({@link noteSendWentThrough}): then it resets the shared count (one conditional
 *   write, shared by the sends of a process that go through while one is under way);
 * - while it is open no send starts ({@link enterCircuit}): messages stay PENDING without spending
 *   an attempt, and one process at a time probes the free balance endpoint when its backoff is due
 *   ({@link probeIfDue}, from every send that waits and every sweep); after
 *   `CIRCUIT.balanceProbesBeforeSendProbe` failed probes, the probe is one real send of an
 *   at-least-once or notice record;
 * - a send that goes through, or any answer (a 400, 401 or 402), closes the circuit
 *   ({@link noteServiceAnswered}); the waiting messages go out, oldest first. A balance probe closes
 *   it on probation: exactly one send at a time (the trial) may go until one goes through, and the
 *   first that fails re-opens it, so a service whose balance endpoint answers while its sends fail
 *   costs one maybe-sent message per probe;
 * - a 429 says nothing about an outage: it neither counts nor closes (the send waits its
 *   `Retry-After`, see the sender);
 * - an operator may open it for a while or close it (`sms-relay circuit`).
 *
 * Each process keeps the state it read for `CIRCUIT.knownMs`, so a send costs no read of the
 * table while nothing changes; the state it writes it knows at once.
 */

/** What a failed call says about the service. */
export const ServiceSignal = {
  /** Nothing came back, or a 5xx or an undocumented status: counts towards opening the circuit. */
  Unreachable: 'unreachable',
  /** The service answered (400, 401, 402): it is up, whatever it thought of the request. */
  Answered: 'answered',
  /** A 429: the service (or what is in front of it) asks to slow down. Neither an outage nor proof that sends go through. */
  Throttled: 'throttled',
  /** Decided before any request (validation, no client): says nothing about the service. */
  None: 'none',
} as const;
export type ServiceSignal = (typeof ServiceSignal)[keyof typeof ServiceSignal];

const ANSWERED: ReadonlySet<string> = new Set([
  SmsErrorCode.BAD_REQUEST,
  SmsErrorCode.UNAUTHORIZED,
  SmsErrorCode.INSUFFICIENT_BALANCE,
]);
const BEFORE_ANY_REQUEST: ReadonlySet<string> = new Set([
  SmsErrorCode.VALIDATION,
  SmsErrorCode.CLIENT_CLOSED,
  SmsErrorCode.CLIENT_UNAVAILABLE,
]);

/**
 * What a failure of a call to the service says about the service. Anything that is not the SMS
 * client's error (a bug, the store failing) says nothing.
 *
 * @example
 * ```ts
 * serviceSignal(error); // 'unreachable' for a refused connection, a time-out, a reset, a 503; 'throttled' for a 429
 * ```
 */
export function serviceSignal(error: unknown): ServiceSignal {
  if (!(error instanceof SmsServiceError) || BEFORE_ANY_REQUEST.has(error.code)) return ServiceSignal.None;
  if (error.code === SmsErrorCode.RATE_LIMITED) return ServiceSignal.Throttled;
  return ANSWERED.has(error.code) ? ServiceSignal.Answered : ServiceSignal.Unreachable;
}

/** The closed circuit with no failures: what a table without the item holds. */
const CLOSED: CircuitState = { failures: 0, probes: 0 };

let known = new WeakMap<object, { readonly state: CircuitState; readonly until: number }>();

/**
 * Forgets the circuit this process knows, so its next send reads the store: the local runtime calls
 * it when an operator opens or closes the circuit through it (`sms-relay circuit`), whose change
 * must hold from the next send, not `CIRCUIT.knownMs` later.
 */
export function forgetKnownCircuits(): void {
  known = new WeakMap();
}

function remember(context: RelayContext<RelayConfigView, CircuitStore>, state: CircuitState): CircuitState {
  known.set(context.store, { state, until: context.clock().getTime() + CIRCUIT.knownMs });
  return state;
}

/**
 * The circuit as this process knows it: the state read or written within `CIRCUIT.knownMs`, else
 * read again (strongly consistent).
 */
export async function readCircuit(
  context: RelayContext<RelayConfigView, CircuitStore>,
  { fresh = false }: { readonly fresh?: boolean } = {},
): Promise<CircuitState> {
  const cached = known.get(context.store);
  if (!fresh && cached !== undefined && context.clock().getTime() < cached.until) return cached.state;
  return remember(context, await context.store.getCircuit());
}

/** How a send passes the circuit. */
export const PassageRole = {
  /** The circuit is closed: an ordinary send. */
  Send: 'send',
  /** The circuit is on probation: this send is the one trial under way. */
  Trial: 'trial',
  /** The circuit is open and its probe due: this send is the probe. */
  Probe: 'probe',
} as const;
export type PassageRole = (typeof PassageRole)[keyof typeof PassageRole];

/**
 * A send the circuit let through. Exactly one of its outcomes is told: `answered`, `failed`, or
 * `release` when no request was made (the claim lost, the credit gate held it, the store failed).
 */
export interface CircuitPassage {
  readonly role: PassageRole;
  /** The send went through. */
  answered(): Promise<void>;
  /** The send failed: what the failure says about the service moves the circuit. */
  failed(error: unknown): Promise<void>;
  /** Nothing was asked of the service: a trial or a probe is given back for another send. No-op once told. */
  release(): Promise<void>;
}

/**
 * Whether the send of record `id` may start: a passage when it may (an ordinary send, the one trial
 * of a probation, or the probe of an open circuit), `undefined` when it must wait PENDING. Makes the
 * balance probe when one is due.
 */
export async function enterCircuit(
  context: RelayContext<RelayConfigView, CircuitStore>,
  id: string,
): Promise<CircuitPassage | undefined> {
  let state = await readCircuit(context);
  if (state.openedAt !== undefined) {
    if (sendProbeDue(state, context.clock()) && probeWorthy(await context.store.getMessage(id)))
      return await probeBySend(context);
    state = await probeIfDue(context, state);
    if (state.openedAt !== undefined) return undefined;
  }
  if (state.probationSince === undefined) return ordinaryPassage(context);
  const now = context.clock();
  const leaseUntil = new Date(now.getTime() + sendLeaseMs(context));
  if (await context.store.circuit.claimTrial({ leaseUntil, now })) return trialPassage(context, leaseUntil);
  // Another's trial is under way, or it ended: what the table says now decides.
  const fresh = await readCircuit(context, { fresh: true });
  return fresh.openedAt === undefined && fresh.probationSince === undefined ? ordinaryPassage(context) : undefined;
}

/** How long a send's trial or probe is held: the provider's time-out and the margin a send is given. */
function sendLeaseMs(context: RelayContext<RelayConfigView, CircuitStore>): number {
  return context.config.settings.provider.timeoutMs + SEND_MARGIN_MS;
}

/** After `CIRCUIT.balanceProbesBeforeSendProbe` failed probes, a due probe is kept for a send. */
function sendProbeDue(state: CircuitState, now: Date): boolean {
  return state.probes >= CIRCUIT.balanceProbesBeforeSendProbe && probeDue(state, now);
}

function probeDue(state: CircuitState, now: Date): boolean {
  return state.nextProbeAt === undefined || Date.parse(state.nextProbeAt) <= now.getTime();
}

/** A record that may be the probe: one whose duplicate costs little (at-least-once) or the relay's own notice. */
function probeWorthy(record: Awaited<ReturnType<MessageStore['getMessage']>>): boolean {
  return (
    record?.state === MessageState.Pending &&
    (record.delivery === DeliveryPolicy.AtLeastOnce || record.notice !== undefined)
  );
}

function ordinaryPassage(context: RelayContext<RelayConfigView, CircuitStore>): CircuitPassage {
  return {
    role: PassageRole.Send,
    answered: async () => await noteSendWentThrough(context),
    failed: async (error) => await noteServiceFailure(context, error),
    release: async () => undefined,
  };
}

/** Tells one outcome at most: the first of `answered`, `failed` and `release` wins. */
function once(role: PassageRole, outcomes: Omit<CircuitPassage, 'role'>): CircuitPassage {
  let told = false;
  const tell =
    <A extends unknown[]>(outcome: (...args: A) => Promise<void>) =>
    async (...args: A): Promise<void> => {
      if (told) return;
      told = true;
      await outcome(...args);
    };
  return { role, answered: tell(outcomes.answered), failed: tell(outcomes.failed), release: tell(outcomes.release) };
}

function trialPassage(context: RelayContext<RelayConfigView, CircuitStore>, leaseUntil: Date): CircuitPassage {
  const release = async (): Promise<void> => {
    await context.store.circuit.releaseTrial({ leaseUntil });
    remember(context, await context.store.getCircuit());
  };
  return once(PassageRole.Trial, {
    answered: async () => await noteServiceAnswered(context),
    failed: async (error) => {
      const signal = serviceSignal(error);
      if (signal === ServiceSignal.Unreachable) return await noteServiceFailure(context, error);
      if (signal === ServiceSignal.Answered) return await noteServiceAnswered(context);
      await release();
    },
    release,
  });
}

/** Takes the due probe for this send; `undefined` (the send waits) when another process took it. */
async function probeBySend(context: RelayContext<RelayConfigView, CircuitStore>): Promise<CircuitPassage | undefined> {
  const now = context.clock();
  const leaseUntil = new Date(now.getTime() + sendLeaseMs(context));
  const claimed = await context.store.circuit.claimProbe({ leaseUntil, now });
  if (claimed === undefined) {
    remember(context, await context.store.getCircuit());
    return undefined;
  }
  remember(context, claimed);
  context.logger.info('circuit probe by a send', { since: claimed.openedAt, probes: claimed.probes });
  const closed = async (): Promise<void> => {
    const was = await context.store.circuit.close();
    remember(context, CLOSED);
    if (was.openedAt !== undefined) announceClosed(context, was);
  };
  return once(PassageRole.Probe, {
    answered: closed,
    failed: async (error) => {
      const signal = serviceSignal(error);
      if (signal === ServiceSignal.Answered) return await closed();
      if (signal === ServiceSignal.Throttled) await closeOnProbation(context);
      else if (signal === ServiceSignal.None)
        await context.store.circuit.releaseProbe({ leaseUntil, now: context.clock() });
      else await probeFailed(context, claimed, error);
    },
    release: async () => {
      await context.store.circuit.releaseProbe({ leaseUntil, now: context.clock() });
    },
  });
}

/** Counts a failed call to the service: one more failure in a row (opening the circuit at the threshold), or an answer. */
export async function noteServiceFailure(
  context: RelayContext<RelayConfigView, CircuitStore>,
  error: unknown,
): Promise<void> {
  const signal = serviceSignal(error);
  if (signal === ServiceSignal.Answered) return await noteServiceAnswered(context);
  if (signal !== ServiceSignal.Unreachable) return;
  const now = context.clock();
  const { state, opened } = await context.store.circuit.failed({
    threshold: CIRCUIT.failuresToOpen,
    firstProbeAt: (probes) => new Date(now.getTime() + probeDelayMs(probes)),
    error: failureText(error),
    now,
    sentRecordsAreItsSuccesses: !sendsThroughChain(context.config.settings),
  });
  remember(context, state);
  if (!opened) return;
  context.metrics.add(RelayMetric.SmsServiceUnreachable, 1);
  context.logger.error('circuit', {
    circuit: 'open',
    since: state.openedAt,
    failures: state.failures,
    lastError: state.lastError,
    nextProbeAt: state.nextProbeAt,
  });
}

/**
 * A send went through: the failures in a row end and an open circuit closes. Writes nothing while
 * this process knows the circuit (read or written within `CIRCUIT.knownMs`) closed with no failure,
 * probe or probation: the send's record, settled SENT, is what tells failures counted later by
 * other processes that they are not in a row with those before it (`recordCircuitFailure` looks for
 * one). Otherwise it resets as {@link noteServiceAnswered} does. A circuit another process opened
 * after this one last read it is closed by its probe, or by this process's next send once it has
 * read it again. With several providers every success is written, as a SENT record does not say
 * which provider answered.
 */
export async function noteSendWentThrough(context: RelayContext<RelayConfigView, CircuitStore>): Promise<void> {
  const cached = known.get(context.store);
  // With several providers a SENT record does not say which one answered: each success is written.
  const quiet = cached !== undefined && context.clock().getTime() < cached.until && isQuiet(cached.state);
  if (quiet && !sendsThroughChain(context.config.settings)) return;
  await noteServiceAnswered(context);
}

/** Closed, with no failure, probe or probation: nothing a success would change. */
const isQuiet = (state: CircuitState): boolean =>
  state.failures === 0 && state.probes === 0 && state.openedAt === undefined && state.probationSince === undefined;

/**
 * The service answered: the failures in a row end and an open circuit closes. One conditional
 * write, made whatever this process knows: failures counted by other processes since it last read
 * the circuit are failures no longer in a row, and only this write tells them so (a write that finds
 * nothing to reset changes nothing).
 *
 * The sends of one process that go through while its reset is under way share the next one (see
 * `coalesce`): each waits for a reset that started after it went through, so a failure another
 * process counted before it is reset all the same, and a burst costs about one write per write's
 * time, not one per SMS.
 */
export async function noteServiceAnswered(context: RelayContext<RelayConfigView, CircuitStore>): Promise<void> {
  let reset = resets.get(context.store);
  if (reset === undefined) {
    reset = coalesce(async (answered: readonly RelayContext<RelayConfigView, CircuitStore>[]) => {
      // Every context here is of this one store: the first one speaks for all.
      const first = answered[0]!;
      const { closed } = await first.store.circuit.succeeded();
      remember(first, CLOSED);
      if (closed !== undefined) announceClosed(first, closed);
    });
    resets.set(context.store, reset);
  }
  await reset(context);
}

/** Each store's shared success reset (see {@link noteServiceAnswered}). */
const resets = new WeakMap<object, (context: RelayContext<RelayConfigView, CircuitStore>) => Promise<void>>();

/**
 * Probes the service when the circuit is open and its probe is due: one balance read, made by the
 * one process that wins the probe's conditional write. Success closes the circuit; failure moves
 * the next probe out by a doubling backoff capped at `CIRCUIT.maxProbeMs`.
 *
 * @returns the circuit as it stands after the probe (or without one).
 */
export async function probeIfDue(
  context: RelayContext<RelayConfigView, CircuitStore>,
  state?: CircuitState,
): Promise<CircuitState> {
  const current = state ?? (await readCircuit(context));
  if (current.openedAt === undefined) return current;
  const now = context.clock();
  if (!probeDue(current, now)) return current;
  // Kept for a send (see `enterCircuit`) unless none has come for `CIRCUIT.sendProbeWaitMs`.
  if (
    current.probes >= CIRCUIT.balanceProbesBeforeSendProbe &&
    now.getTime() - Date.parse(current.nextProbeAt ?? '') < CIRCUIT.sendProbeWaitMs
  )
    return current;
  const claimed = await context.store.circuit.claimProbe({
    leaseUntil: new Date(now.getTime() + CIRCUIT.probeLeaseMs),
    now,
  });
  if (claimed === undefined) return remember(context, await context.store.getCircuit());
  try {
    await (await context.sms.client()).getBalance({ timeoutMs: CIRCUIT.probeTimeoutMs });
  } catch (error) {
    const signal = serviceSignal(error);
    if (signal !== ServiceSignal.Answered && signal !== ServiceSignal.Throttled)
      return await probeFailed(context, claimed, error);
  }
  return await closeOnProbation(context, claimed);
}

/** A probe failed: the next is due at the doubled backoff. */
async function probeFailed(
  context: RelayContext<RelayConfigView, CircuitStore>,
  claimed: CircuitState,
  error: unknown,
): Promise<CircuitState> {
  const failedAt = context.clock();
  const nextProbeAt = new Date(failedAt.getTime() + probeDelayMs(claimed.probes + 1));
  await context.store.circuit.probeFailed({ openedAt: claimed.openedAt!, nextProbeAt, error: failureText(error) });
  context.logger.info('circuit probe failed', {
    since: claimed.openedAt,
    probes: claimed.probes + 1,
    error: failureText(error),
    nextProbeAt: nextProbeAt.toISOString(),
  });
  return remember(context, {
    ...claimed,
    probes: claimed.probes + 1,
    nextProbeAt: nextProbeAt.toISOString(),
    lastError: failureText(error),
  });
}

/** A probe found the service answering: closed on probation, one trial send at a time until one goes through. */
async function closeOnProbation(
  context: RelayContext<RelayConfigView, CircuitStore>,
  claimed?: CircuitState,
): Promise<CircuitState> {
  const probation = CIRCUIT.failuresToOpen - 1;
  const now = context.clock();
  const { closed } = await context.store.circuit.succeeded({ probation, now });
  if (closed !== undefined) announceClosed(context, closed);
  if (closed === undefined && claimed === undefined) return remember(context, await context.store.getCircuit());
  return remember(context, {
    failures: probation,
    probes: (closed ?? claimed)!.probes + 1,
    probationSince: now.toISOString(),
  });
}

/** The wait before probe number `probes + 1`: `CIRCUIT.firstProbeMs` doubling, at most `CIRCUIT.maxProbeMs`. */
export function probeDelayMs(probes: number): number {
  return Math.min(CIRCUIT.maxProbeMs, CIRCUIT.firstProbeMs * 2 ** Math.max(0, probes));
}

function announceClosed(context: RelayContext<RelayConfigView, CircuitStore>, was: CircuitState): void {
  context.metrics.add(RelayMetric.SmsServiceUnreachable, 0);
  context.logger.warn('circuit', {
    circuit: 'closed',
    since: was.openedAt,
    closedAt: context.clock().toISOString(),
    probes: was.probes,
  });
}

/** A failure as the circuit keeps it: the client's code and the HTTP status, never a text. */
function failureText(error: unknown): string {
  if (!(error instanceof SmsServiceError)) return error instanceof Error ? error.name : typeof error;
  return error.status === undefined ? error.code : `${error.code} ${error.status}`;
}
