/**
 * Runs `work` over `items`, at most `concurrency` at a time, in order of start.
 *
 * @example
 * ```ts
 * await forEachConcurrently(records, 4, async (record) => process(record));
 * ```
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
}
