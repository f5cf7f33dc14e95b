import { CIRCUIT } from '../core/defaults';
import { SmsErrorCode, SmsServiceError } from '../core/provider';
import type { CircuitState, MessageStore } from '../store';
import { RelayMetric, type RelayContext } from './ports';
import type { RelayConfigView } from '../core/config/view';

/** What the SMS service's circuit uses of the store. */
export type CircuitStore = Pick<MessageStore, 'getCircuit' | 'circuit'>;

/**
 * The SMS service's circuit, as the relay operations use it (the state is one item in the table,
 * see `functions/store/circuit.ts`; the numbers are `CIRCUIT` in `functions/core/defaults.ts`):
 * - a send that fails in a way that says the service is unreachable counts one failure in a row
 *   ({@link noteServiceFailure}); `CIRCUIT.failuresToOpen` of them open the circuit;
 * - while it is open no send starts ({@link sendsMustWait}): messages stay PENDING without spending
 *   an attempt, and one process at a time probes the free balance endpoint when its backoff is due
 *   ({@link probeIfDue}, from every send that waits and every sweep);
 * - any answer from the service (a send, a probe, even a 400 or 402) closes the circuit
 *   ({@link noteServiceAnswered}); the waiting messages go out, oldest first. A probe closes it on
 *   probation: the first send that fails re-opens it, so a service whose balance endpoint answers
 *   while its sends fail costs one maybe-sent message per probe, not `failuresToOpen`.
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
 * serviceSignal(error); // 'unreachable' for a refused connection, a time-out, a reset, a 503, a 429
 * ```
 */
export function serviceSignal(error: unknown): ServiceSignal {
  if (!(error instanceof SmsServiceError) || BEFORE_ANY_REQUEST.has(error.code)) return ServiceSignal.None;
  return ANSWERED.has(error.code) ? ServiceSignal.Answered : ServiceSignal.Unreachable;
}

/** The closed circuit with no failures: what a table without the item holds. */
const CLOSED: CircuitState = { failures: 0, probes: 0 };

const known = new WeakMap<object, { readonly state: CircuitState; readonly until: number }>();

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

/**
 * Whether sends must wait: the circuit is open and a probe (made here when one is due) did not
 * close it. Returns the open state, or `undefined` when a send may start.
 */
export async function sendsMustWait(
  context: RelayContext<RelayConfigView, CircuitStore>,
): Promise<CircuitState | undefined> {
  const state = await readCircuit(context);
  if (state.openedAt === undefined) return undefined;
  const after = await probeIfDue(context, state);
  return after.openedAt === undefined ? undefined : after;
}

/** Counts a failed call to the service: one more failure in a row (opening the circuit at the threshold), or an answer. */
export async function noteServiceFailure(
  context: RelayContext<RelayConfigView, CircuitStore>,
  error: unknown,
): Promise<void> {
  const signal = serviceSignal(error);
  if (signal === ServiceSignal.Answered) return await noteServiceAnswered(context);
  if (signal === ServiceSignal.None) return;
  const now = context.clock();
  const { state, opened } = await context.store.circuit.failed({
    threshold: CIRCUIT.failuresToOpen,
    firstProbeAt: (probes) => new Date(now.getTime() + probeDelayMs(probes)),
    error: failureText(error),
    now,
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
 * The service answered: the failures in a row end and an open circuit closes. Costs a write only
 * when this process knows of failures or an open circuit.
 */
export async function noteServiceAnswered(context: RelayContext<RelayConfigView, CircuitStore>): Promise<void> {
  const state = await readCircuit(context);
  if (state.failures === 0 && state.openedAt === undefined && state.probes === 0) return;
  const { closed } = await context.store.circuit.succeeded();
  remember(context, CLOSED);
  if (closed !== undefined) announceClosed(context, closed);
}

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
  if (current.nextProbeAt !== undefined && Date.parse(current.nextProbeAt) > now.getTime()) return current;
  const claimed = await context.store.circuit.claimProbe({
    leaseUntil: new Date(now.getTime() + CIRCUIT.probeLeaseMs),
    now,
  });
  if (claimed === undefined) return remember(context, await context.store.getCircuit());
  try {
    await (await context.sms.client()).getBalance({ timeoutMs: CIRCUIT.probeTimeoutMs });
  } catch (error) {
    if (serviceSignal(error) !== ServiceSignal.Answered) {
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
  }
  const probation = CIRCUIT.failuresToOpen - 1;
  const { closed } = await context.store.circuit.succeeded({ probation });
  if (closed !== undefined) announceClosed(context, closed);
  return remember(context, { failures: probation, probes: claimed.probes + 1 });
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
