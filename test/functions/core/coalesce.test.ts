import { describe, expect, it, vi } from 'vitest';
import { coalesce } from '../../../functions/core/coalesce';

/** A write that records what it was given and waits to be let go, one release per write. */
function heldWrites() {
  const batches: (readonly number[])[] = [];
  const releases: ((error?: Error) => void)[] = [];
  const write = (items: readonly number[]): Promise<number> => {
    batches.push([...items]);
    return new Promise<number>((resolve, reject) =>
      releases.push((error) => (error === undefined ? resolve(items.length) : reject(error))),
    );
  };
  return { batches, releases, write };
}

describe('coalesce', () => {
  it('writes the items added in one turn together, once', async () => {
    const write = vi.fn(async (items: readonly number[]) => items.reduce((sum, item) => sum + item, 0));
    const add = coalesce(write);
    expect(await Promise.all([add(1), add(2), add(3)])).toEqual([6, 6, 6]);
    expect(write).toHaveBeenCalledTimes(1);
    expect(write).toHaveBeenCalledWith([1, 2, 3]);
  });

  it('writes an item alone at once when nothing is under way', async () => {
    const { batches, releases, write } = heldWrites();
    const add = coalesce(write);
    const first = add(1);
    await vi.waitFor(() => expect(batches).toEqual([[1]]));
    releases[0]!();
    expect(await first).toBe(1);
    const second = add(2);
    await vi.waitFor(() => expect(batches).toEqual([[1], [2]]));
    releases[1]!();
    expect(await second).toBe(1);
  });

  it('never answers an item with a write that started before it was added: items added during a write wait for the next, one write under way at a time', async () => {
    const { batches, releases, write } = heldWrites();
    const add = coalesce(write);
    let firstDone = false;
    const first = add(1).then((count) => {
      firstDone = true;
      return count;
    });
    await vi.waitFor(() => expect(batches).toHaveLength(1));
    const laterDone: number[] = [];
    const later = [add(2), add(3), add(4)].map((written, index) => written.then(() => laterDone.push(index)));
    // The first write is under way: the later items are gathered, not written beside it.
    await Promise.resolve();
    expect(batches).toEqual([[1]]);
    releases[0]!();
    expect(await first).toBe(1);
    expect(firstDone).toBe(true);
    await vi.waitFor(() => expect(batches).toEqual([[1], [2, 3, 4]]));
    expect(laterDone).toEqual([]);
    releases[1]!();
    await Promise.all(later);
    expect(laterDone).toHaveLength(3);
  });

  it('rejects the items of a write that failed, and writes the next ones all the same', async () => {
    const { batches, releases, write } = heldWrites();
    const add = coalesce(write);
    const failing = add(1);
    await vi.waitFor(() => expect(batches).toHaveLength(1));
    const next = add(2);
    releases[0]!(new Error('store unavailable'));
    await expect(failing).rejects.toThrow('store unavailable');
    await vi.waitFor(() => expect(batches).toEqual([[1], [2]]));
    releases[1]!();
    expect(await next).toBe(1);
  });
});
