/**
 * The SMS service's circuit as JSON (`sms-relay circuit --json`, `GET /_relay/circuit`, the
 * console): no zod here, so that `sms-relay circuit` asking the running relay loads none of the
 * request schemas (`circuit-contract.ts`, which re-exports this module).
 */

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
