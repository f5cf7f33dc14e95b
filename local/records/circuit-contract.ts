/**
 * The SMS service's circuit as JSON and the requests that act on it: what `sms-relay circuit`,
 * the runtime's `/_relay/circuit` and the console share (no store here, so the console's page can
 * import it).
 */
import { z } from 'zod';
import { MAX_CIRCUIT_OPEN_SECONDS, type CircuitView } from './circuit-view';

export * from './circuit-view';

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
