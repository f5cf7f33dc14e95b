/**
 * One write for what many callers ask at once: `coalesce(write)` returns an `add` that gathers the
 * items added while a write is under way, and writes them together in the next one, started when
 * the one under way ends (at most one write under way, one gathering). Each `add` resolves (or
 * rejects) with the write that included its item.
 *
 * The promise that matters: the write an item waits for always starts after the item was added,
 * never before. So a write that says "this happened" (a send went through, credits were spent) is
 * never taken for one made before it happened, while a burst of concurrent callers costs about one
 * write per write's time instead of one each. Alone, an item waits for no one: it is written at once
 * (in a microtask, so the items added in the same turn share it).
 *
 * @example
 * ```ts
 * const count = coalesce(async (amounts: readonly number[]) => await addToCounter(sum(amounts)));
 * await Promise.all([count(1), count(2), count(3)]); // one write of 6
 * ```
 */
export function coalesce<T, R>(write: (items: readonly T[]) => Promise<R>): (item: T) => Promise<R> {
  let previous: Promise<unknown> = Promise.resolve();
  let gathering: { readonly items: T[]; readonly written: Promise<R> } | undefined;
  return (item) => {
    if (gathering === undefined) {
      const items: T[] = [];
      const written = previous.then(() => {
        // Items added from here on wait for the next write: this one may already have read its state.
        gathering = undefined;
        return write(items);
      });
      gathering = { items, written };
      previous = written.catch(() => undefined);
    }
    gathering.items.push(item);
    return gathering.written;
  };
}

/** What `coalesceInWindows` returns: add items to the window open, and write it before its time. */
export interface WindowedWrites<T> {
  /** Adds an item to the window open (opening one if none is); resolves (or rejects) with the write that included it. */
  readonly add: (item: T) => Promise<void>;
  /**
   * Writes the window open now, without waiting for its time, and resolves when every write of an
   * item added before this call has ended; rejects with the first of them that failed.
   */
  readonly flush: () => Promise<void>;
  /** Whether an item added is not written yet (a window open, or its write under way). */
  readonly unwritten: () => boolean;
}

/**
 * `coalesce` over a window of time: the items added within `windowMs` of the first one go in one
 * write, started when the window ends (or at `flush`), and after the write before it ended. Where
 * `coalesce` writes an item alone at once, this makes a trickle cost one write per window instead of
 * one per item, at the price of the items' writes coming up to `windowMs` later: whoever must see
 * them written (a process about to stop or freeze, a read of what they add to) calls `flush` first.
 *
 * The same promise as `coalesce`: a write always starts after each of its items was added (items
 * added while a window's write waits for the one before still join it; added once it started, they
 * open the next window). At most one write under way.
 *
 * @example
 * ```ts
 * const spend = coalesceInWindows(async (amounts: readonly number[]) => await addToCounter(sum(amounts)), 1_000);
 * void spend.add(3).catch(logLost); // written within a second, with whatever else came
 * await spend.flush(); // before the process stops
 * ```
 */
export function coalesceInWindows<T>(
  write: (items: readonly T[]) => Promise<void>,
  windowMs: number,
): WindowedWrites<T> {
  let previous: Promise<unknown> = Promise.resolve();
  let open: { readonly items: T[]; readonly written: Promise<void>; readonly close: () => void } | undefined;
  const underWay = new Set<Promise<void>>();

  const openWindow = (): NonNullable<typeof open> => {
    const items: T[] = [];
    let close!: () => void;
    const closed = new Promise<void>((resolve) => (close = resolve));
    const timer = setTimeout(close, windowMs);
    const before = previous;
    const written = closed
      .then(async () => await before)
      .then(async () => {
        // Items added from here on open the next window: this write may already have read its state.
        if (open?.items === items) open = undefined;
        await write(items);
      });
    const settled = written.catch(() => undefined);
    previous = settled;
    underWay.add(written);
    void settled.then(() => underWay.delete(written));
    return {
      items,
      written,
      close: () => {
        clearTimeout(timer);
        close();
      },
    };
  };

  return {
    add: (item) => {
      open ??= openWindow();
      open.items.push(item);
      return open.written;
    },
    flush: async () => {
      open?.close();
      const outcomes = await Promise.allSettled([...underWay]);
      const failed = outcomes.find((outcome) => outcome.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    },
    unwritten: () => underWay.size > 0,
  };
}
