/**
 * The SMS service's circuit as `sms-relay circuit`, the runtime's `/_relay/circuit` and the
 * console show it and act on it: one view of the store's item, and the one request that opens or
 * closes it by hand.
 */
import { z } from 'zod';
import type { CircuitState, MessageStore } from '../../functions/store';

/** The longest `sms-relay circuit open --for`: a day; past it the probes decide again. */
export const MAX_CIRCUIT_OPEN_SECONDS = 86_400;

/** Who opened the circuit by hand, as the item and every view say it. */
export const OpenedBy = {
  Cli: 'sms-relay circuit open',
  Console: 'the console',
} as const;

/** Where the circuit stands. */
export const CircuitPosition = {
  /** Sends go out. */
  Closed: 'closed',
  /** A probe found the service answering: one send at a time until one goes through. */
  Probation: 'probation',
  /** Sends wait PENDING; the service is probed at a backoff (or, opened by hand, from `nextProbeAt`). */
  Open: 'open',
} as const;
export type CircuitPosition = (typeof CircuitPosition)[keyof typeof CircuitPosition];

/** The circuit as JSON (`sms-relay circuit --json`, `GET /_relay/circuit`, the console). */
export interface CircuitView {
  readonly state: CircuitPosition;
  /** Since when it is open, or on probation; `null` when closed. */
  readonly since: string | null;
  /** Sends that failed in a row, counted towards opening it (3 open it). */
  readonly failures: number;
  /** Probes that failed since it opened. */
  readonly probes: number;
  /** While open: when the next probe may start (opened by hand: when it ends). */
  readonly nextProbeAt: string | null;
  /** The last failure, `code` or `code status` (`server-error 503`, `timeout`). */
  readonly lastError: string | null;
  readonly lastFailureAt: string | null;
  /** Who opened it by hand (`sms-relay circuit open`, `the console`); `null` when the failures did. */
  readonly openedBy: string | null;
}

/**
 * The view of the store's circuit item.
 *
 * @example
 * ```ts
 * circuitView({ failures: 0, probes: 0 }); // { state: 'closed', since: null, failures: 0, … }
 * ```
 */
export function circuitView(state: CircuitState): CircuitView {
  const position =
    state.openedAt !== undefined
      ? CircuitPosition.Open
      : state.probationSince !== undefined
        ? CircuitPosition.Probation
        : CircuitPosition.Closed;
  return {
    state: position,
    since: state.openedAt ?? state.probationSince ?? null,
    failures: state.failures,
    probes: state.probes,
    nextProbeAt: state.openedAt === undefined ? null : (state.nextProbeAt ?? null),
    lastError: state.lastError ?? null,
    lastFailureAt: state.lastFailureAt ?? null,
    openedBy: state.openedBy ?? null,
  };
}

/** `POST /_relay/circuit`: open it by hand for `forSeconds`, or close it. */
export const CircuitRequest = z.discriminatedUnion('action', [
  z.object({ action: z.literal('close') }),
  z.object({ action: z.literal('open'), forSeconds: z.number().int().min(1).max(MAX_CIRCUIT_OPEN_SECONDS) }),
]);
export type CircuitRequest = z.output<typeof CircuitRequest>;

/** What an action on the circuit answers: the circuit before and after it. */
export interface CircuitChange {
  readonly before: CircuitView;
  readonly circuit: CircuitView;
}

/**
 * Opens the circuit by hand for `forSeconds` (no send starts until then; then it is probed as after
 * any opening) or closes it (sends start at once, failures and probes forgotten).
 *
 * @example
 * ```ts
 * await changeCircuit(store, { action: 'open', forSeconds: 1800 }, OpenedBy.Cli);
 * ```
 */
export async function changeCircuit(
  store: Pick<MessageStore, 'getCircuit' | 'circuit'>,
  request: CircuitRequest,
  by: string,
  now: Date = new Date(),
): Promise<CircuitChange> {
  if (request.action === 'close') {
    const before = await store.circuit.close();
    return { before: circuitView(before), circuit: circuitView(await store.getCircuit()) };
  }
  const before = await store.getCircuit();
  const after = await store.circuit.open({ until: new Date(now.getTime() + request.forSeconds * 1_000), by, now });
  return { before: circuitView(before), circuit: circuitView(after) };
}
