import { SENDER_CONCURRENCY, STREAM } from './defaults';

/**
 * How the relay's sending concurrency follows `provider.maxPerSecond`. The rate itself is held by
 * a per-second counter in the table that every sender takes a slot of before each send (see
 * `functions/relay/provider-rate.ts`); the concurrency only keeps enough sends in flight to reach
 * that rate without many senders waiting for a slot. The arithmetic: a send takes about
 * `assumedSendSeconds` (the sandbox and a healthy service answer in 0.1–0.5 s), so `maxPerSecond`
 * SMS/s need `maxPerSecond × assumedSendSeconds` sends in flight, rounded up.
 */
export const PROVIDER_RATE = {
  /** A send's time the arithmetic assumes: the slow end of a healthy service's answer. */
  assumedSendSeconds: 0.5,
  /** The most `parallelizationFactor` a DynamoDB stream mapping takes. */
  maxParallelization: 10,
  /** The highest `provider.maxPerSecond`: one second's counter item takes every send of that second, and an item takes at most 1,000 writes a second. */
  maxPerSecond: 500,
} as const;

/** Sends in flight across the relay that `maxPerSecond` needs: `⌈maxPerSecond × assumedSendSeconds⌉`, at least 1. */
export function sendsInFlight(maxPerSecond: number): number {
  return Math.max(1, Math.ceil(maxPerSecond * PROVIDER_RATE.assumedSendSeconds));
}

/**
 * The sender's stream mapping `parallelizationFactor`: without `maxPerSecond`, `STREAM.parallelizationFactor`;
 * with it, enough batches per shard (each `SENDER_CONCURRENCY` sends at once) for {@link sendsInFlight}, 1–10.
 *
 * @example
 * ```ts
 * streamParallelization(undefined); // 2
 * streamParallelization(5); // 1: 3 sends in flight, one batch of 4 covers them
 * streamParallelization(40); // 5: 20 sends in flight, 5 batches of 4
 * ```
 */
export function streamParallelization(maxPerSecond: number | undefined): number {
  if (maxPerSecond === undefined) return STREAM.parallelizationFactor;
  return Math.min(PROVIDER_RATE.maxParallelization, Math.ceil(sendsInFlight(maxPerSecond) / SENDER_CONCURRENCY));
}

/**
 * The local send queue's concurrency: the deployed sender's on one shard (its parallelization
 * times `SENDER_CONCURRENCY`), so the local runtime sends as the deployed relay does.
 *
 * @example
 * ```ts
 * localSendConcurrency(undefined); // 8
 * localSendConcurrency(5); // 4
 * ```
 */
export function localSendConcurrency(maxPerSecond: number | undefined): number {
  return streamParallelization(maxPerSecond) * SENDER_CONCURRENCY;
}
