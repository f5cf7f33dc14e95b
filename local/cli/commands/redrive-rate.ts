import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { localPath } from '../../shared/settings';

/**
 * `redrive --rate`: how many records a redrive re-queues a second at most, so a redrive of
 * thousands of parked orders after a top-up does not hand the sender a backlog all at once. Each
 * re-queued record is sent in its own lane (an order in the bulk one), and the bulk lane never takes
 * more than its share of `provider.maxPerSecond`; the default rate leaves the provider half its rate
 * besides: half the config's `provider.maxPerSecond`, else `fallback` a second.
 */
export const REDRIVE_RATE = {
  /** Without `provider.maxPerSecond` (or a config to read it from): a rate any SMS service we know takes with room to spare. */
  fallback: 10,
  /** The part of `provider.maxPerSecond` a redrive takes by default. */
  share: 0.5,
  /** The highest `--rate`: above it the store's writes, not the pacing, are the limit. */
  max: 10_000,
} as const;

/** `--rate <n>`: requeues a second, a number above 0 (fractions allowed: 0.5 is one every 2 s). */
export function parseRate(value: string): number {
  const rate = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(rate > 0) || rate > REDRIVE_RATE.max)
    throw new InvalidArgumentError(`Expected requeues per second, above 0 and at most ${REDRIVE_RATE.max}.`);
  return rate;
}

/**
 * The default `--rate`: half the `provider.maxPerSecond` of the relay's config (`config/<env>.yaml`
 * with `--env`, else the local runtime's), at least 1; {@link REDRIVE_RATE}`.fallback` when it sets
 * none or cannot be read (a redrive must not fail on a config it only reads a default from).
 *
 * @example
 * ```ts
 * await defaultRedriveRate({ env: 'prod' }); // 10 with provider.maxPerSecond: 20
 * ```
 */
export async function defaultRedriveRate({ env }: { readonly env?: string | undefined }): Promise<number> {
  const path = env === undefined ? localPath('config', undefined) : resolve(`config/${env}.yaml`);
  let maxPerSecond: number | undefined;
  try {
    // The config's compiler loads only for a redrive that needs the default rate.
    const { loadConfigFile } = await import('../../../functions/core/config/load');
    maxPerSecond = existsSync(path) ? loadConfigFile(path).settings.provider.maxPerSecond : undefined;
  } catch {
    maxPerSecond = undefined;
  }
  return maxPerSecond === undefined
    ? REDRIVE_RATE.fallback
    : Math.max(1, Math.floor(maxPerSecond * REDRIVE_RATE.share));
}

/**
 * Paces `rate` items a second: `take(n)` resolves once `n` more items may start, so that after
 * `t` seconds at most `rate × t` (rounded up to the first chunk) have started.
 */
export function pacer(rate: number, now: () => number = Date.now): (count: number) => Promise<void> {
  const startedAt = now();
  let taken = 0;
  return async (count) => {
    const startAt = startedAt + (taken / rate) * 1_000;
    taken += count;
    const waitMs = startAt - now();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  };
}
