import { vi } from 'vitest';

/** How long and how often to check; the bound only stops a hung test, it is never what a test asserts. */
export interface WaitOptions {
  /** @default 20_000 */
  readonly timeoutMs?: number;
  /** @default 50 */
  readonly intervalMs?: number;
  /** What was still missing, added to the failure once the bound passes. */
  readonly describe?: () => Promise<string> | string;
}

/**
 * Waits (with `vi.waitFor`) until `condition` holds; fails naming `what` (and `describe()`'s detail)
 * once `timeoutMs` passes.
 *
 * @example
 * await waitUntil('the server to close every stalled connection', () => stalled.closed() === 5);
 */
export async function waitUntil(
  what: string,
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 20_000, intervalMs = 50, describe }: WaitOptions = {},
): Promise<void> {
  await eventually(async () => ((await condition()) ? true : undefined), { what, timeoutMs, intervalMs, describe });
}

/**
 * Waits (with `vi.waitFor`) until `probe` returns a value other than `undefined`, and returns it. A
 * probe that throws is tried again; its last error is in the failure.
 *
 * @example
 * const record = await eventually(async () => (await get(id))?.state === 'SENT' ? record : undefined);
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 60_000, intervalMs = 200, what = 'condition', describe }: WaitOptions & { readonly what?: string } = {},
): Promise<T> {
  return await vi.waitFor(
    async () => {
      const value = await probe();
      if (value !== undefined) return value;
      const detail = describe === undefined ? '' : `\n${await describe()}`;
      throw new Error(`${what} not reached within ${timeoutMs} ms${detail}`);
    },
    { timeout: timeoutMs, interval: intervalMs },
  );
}
