import { Lane } from '../../functions/core/lanes';

/** What the local sender does with the ids of new records. */
export interface SendQueue {
  /**
   * Queues ids to send in `lane` (ingest's new records, a redrive's, the sweeper's due ones); each
   * lane is sent in order, a few at a time, and the critical lane first. An id already queued or
   * being sent is not queued again.
   */
  feed(ids: readonly string[], lane: Lane): void;
  /**
   * Feeds `id` once the clock reaches `at`: a retry sent at its backoff, not at the next sweep
   * (which stays the safety net, and is skipped by the queue if it feeds the id first).
   */
  feedAt(id: string, at: Date, lane: Lane): void;
  /** Starts nothing new; queued and timed ids stay PENDING in the store for the sweeper or the next start. */
  stop(): void;
  /** Resolves when nothing fed so far is queued or being sent. */
  idle(): Promise<void>;
  /** Ids queued or being sent now (not those waiting for a retry's time): whether the sender has work. */
  pending(): number;
}

export interface SendQueueOptions {
  /** Sends one record (the relay's `sendMessage`, which claims it first, so a repeat never sends twice). */
  readonly send: (id: string) => Promise<unknown>;
  /** Sends in flight at once in each lane (as each of the deployed sender's two stream mappings has its own). */
  readonly concurrency: number;
  /** Told about a send that threw (the store failing); the record stays for the sweeper. */
  readonly onError: (id: string, error: unknown) => void;
  /**
   * The clock a retry's time is read on (the relay's clock, in milliseconds).
   * @default Date.now
   */
  readonly now?: () => number;
}

/**
 * The local stand-in for the table's stream: the ids of each 202 go straight to `send`, a few at a
 * time. Nothing is read back first: the claim inside `sendMessage` skips anything that is no
 * longer PENDING, and whatever a crash leaves behind the sweeper finds in the table.
 *
 * Two lanes, as the deployed sender's two stream mappings: each has its queue and `concurrency`
 * sends in flight of its own, and the critical lane's queue is served first, so an alert never
 * waits behind 2,000 orders (`provider.maxPerSecond` is shared by both, see `takeSendSlot`).
 *
 * @example
 * ```ts
 * const queue = createSendQueue({ send: (id) => sendMessage(context, id), concurrency: 4, onError });
 * queue.feed(['01J…'], 'critical');
 * ```
 */
export function createSendQueue({ send, concurrency, onError, now = Date.now }: SendQueueOptions): SendQueue {
  const queues: Record<Lane, string[]> = { [Lane.Critical]: [], [Lane.Bulk]: [] };
  const inFlight: Record<Lane, Set<Promise<void>>> = { [Lane.Critical]: new Set(), [Lane.Bulk]: new Set() };
  // The sweeper feeds every due record each pass: a backlog longer than one pass must not pile up twice.
  const known = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const pumpLane = (lane: Lane): void => {
    const queue = queues[lane];
    const sends = inFlight[lane];
    while (!stopped && sends.size < concurrency && queue.length > 0) {
      const id = queue.shift()!;
      const sending: Promise<void> = send(id)
        .then(
          () => undefined,
          (error: unknown) => onError(id, error),
        )
        .finally(() => {
          sends.delete(sending);
          known.delete(id);
          pumpLane(lane);
        });
      sends.add(sending);
    }
  };
  const pump = (): void => {
    pumpLane(Lane.Critical);
    pumpLane(Lane.Bulk);
  };

  const feed = (ids: readonly string[], lane: Lane): void => {
    if (stopped) return;
    for (const id of ids) {
      if (known.has(id)) continue;
      known.add(id);
      queues[lane].push(id);
    }
    pump();
  };

  const feedAt = (id: string, at: Date, lane: Lane): void => {
    if (stopped) return;
    // A timer may fire a millisecond early, and a claim before `nextAttemptAt` skips the record.
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (now() < at.getTime()) feedAt(id, at, lane);
        else feed([id], lane);
      },
      Math.max(0, at.getTime() - now()) + 1,
    );
    // A pending retry must not keep the process alive: the record waits in the table.
    timer.unref();
    timers.add(timer);
  };

  return {
    feed,
    feedAt,
    stop: () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const queue of Object.values(queues)) {
        for (const id of queue) known.delete(id);
        queue.length = 0;
      }
    },
    pending: () => known.size,
    idle: async () => {
      const all = (): Promise<void>[] => [...inFlight[Lane.Critical], ...inFlight[Lane.Bulk]];
      while (all().length > 0) await Promise.allSettled(all());
    },
  };
}
