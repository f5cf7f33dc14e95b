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
