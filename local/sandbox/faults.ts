import { z } from 'zod';
import { InvalidSandboxFaultError } from './errors';
import type { SandboxFault } from './types';

/** Long enough for any timeout test, short enough that a typo cannot wedge a run. */
export const MAX_FAULT_DELAY_MS = 120_000;

const count = z.number().int().min(1).max(10_000).optional();

const sandboxFaultSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('status'),
    // A fault is a failure: a 2xx/3xx "fault" would let a broken client pass.
    status: z.number().int().min(400).max(599),
    count,
    deliver: z.boolean().optional(),
    error: z.string().min(1).max(500).optional(),
    retryAfter: z.number().int().min(0).max(3_600).optional(),
  }),
  z.strictObject({ kind: z.literal('delay'), ms: z.number().int().min(0).max(MAX_FAULT_DELAY_MS), count }),
  z.strictObject({ kind: z.literal('reset'), count, deliver: z.boolean().optional() }),
]);

/**
 * Validates a fault from a test or from `POST /_sandbox/faults`.
 *
 * @example
 * parseSandboxFault({ kind: 'status', status: 503 }); // ok
 * parseSandboxFault({ kind: 'status', status: 200 }); // throws InvalidSandboxFaultError
 */
export function parseSandboxFault(value: unknown): SandboxFault {
  const result = sandboxFaultSchema.safeParse(value);
  if (!result.success) {
    throw new InvalidSandboxFaultError(`Invalid fault: ${z.prettifyError(result.error)}`, { cause: result.error });
  }
  return result.data;
}

/**
 * Faults waiting for the next sends, first in first out; each fault serves `count` sends (default 1)
 * before the next one in line takes over.
 *
 * @example
 * const queue = new FaultQueue();
 * queue.push({ kind: 'reset', count: 2 });
 * queue.take(); queue.take(); // the reset, twice
 * queue.take(); // undefined
 */
export class FaultQueue {
  readonly #pending: { fault: SandboxFault; remaining: number }[] = [];

  public push(fault: SandboxFault): void {
    this.#pending.push({ fault, remaining: fault.count ?? 1 });
  }

  /** The fault for the send being handled, consuming one use of it. */
  public take(): SandboxFault | undefined {
    const next = this.#pending[0];
    if (next === undefined) return undefined;
    next.remaining -= 1;
    if (next.remaining === 0) this.#pending.shift();
    return next.fault;
  }

  public clear(): void {
    this.#pending.length = 0;
  }

  public get size(): number {
    return this.#pending.reduce((total, { remaining }) => total + remaining, 0);
  }
}
