/**
 * The SMS service's circuit as `sms-relay circuit`, the runtime's `/_relay/circuit` and the
 * console show it and act on it: one view of the store's item, and the one request that opens or
 * closes it by hand.
 */
import { forgetKnownCircuits } from '../../functions/relay/circuit';
import type { CircuitState, MessageStore } from '../../functions/store';
import { type CircuitChange, CircuitPosition, type CircuitRequest, type CircuitView } from './circuit-contract';

export * from './circuit-contract';

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
  // A relay in this process (npm start, the console beside it) sends by the change from its next send.
  try {
    if (request.action === 'close') {
      const before = await store.circuit.close();
      return { before: circuitView(before), circuit: circuitView(await store.getCircuit()) };
    }
    const before = await store.getCircuit();
    const after = await store.circuit.open({ until: new Date(now.getTime() + request.forSeconds * 1_000), by, now });
    return { before: circuitView(before), circuit: circuitView(after) };
  } finally {
    forgetKnownCircuits();
  }
}
