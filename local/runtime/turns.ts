import { setTimeout as sleep } from 'node:timers/promises';

/** Runs tasks one at a time, each within a share of the time (see {@link takeTurns}). */
export interface Turns {
  /** Waits for this task's turn, then runs it; resolves or rejects as the task does. */
  run<T>(task: () => Promise<T>): Promise<T>;
}

export interface TurnsOptions {
  /**
   * At most this share of the time goes to these tasks: after a task of `d` ms the next starts at
   * least `d × (1 − share) / share` later.
   */
  readonly maxShare: number;
  /**
   * Whether other work is using what the tasks share now: a task whose turn comes while it is not
   * starts at once, since its pause would leave the time to nobody.
   * @default () => true
   */
  readonly contended?: () => boolean;
}

/**
 * Queues tasks that compete with the runtime's own work for the local store: the listings of
 * `/_relay/records` and the console read the whole table through the one dynalite, and
 * back-to-back they would leave the sender almost no time. One at a time, each followed by a pause
 * in proportion to its length, they take at most `maxShare` of the time; a poller then gets slower
 * answers instead of stalling the sends. While nothing else uses the store (`contended`), a turn
 * waits for no pause: a person paging through the console of an idle relay is not slowed down.
 *
 * @example
 * ```ts
 * const listings = takeTurns({ maxShare: 0.25 });
 * const records = await listings.run(() => queryRecords(store, { route: 'alerts' }));
 * ```
 */
export function takeTurns({ maxShare, contended = () => true }: TurnsOptions): Turns {
  let queue: Promise<void> = Promise.resolve();
  let notBefore = 0;
  return {
    run: <T>(task: () => Promise<T>): Promise<T> => {
      const turn = queue.then(async () => {
        const wait = notBefore - performance.now();
        if (wait > 0 && contended()) await sleep(wait);
        const started = performance.now();
        try {
          return await task();
        } finally {
          const took = performance.now() - started;
          notBefore = performance.now() + (took * (1 - maxShare)) / maxShare;
        }
      });
      queue = turn.then(
        () => undefined,
        () => undefined,
      );
      return turn;
    },
  };
}
