import { afterEach, describe, expect, it, vi } from 'vitest';
import { coalesce, coalesceInWindows } from '../../../functions/core/coalesce';

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

describe('coalesceInWindows', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes the items added within a window together when it ends, not before', async () => {
    vi.useFakeTimers();
    const { batches, releases, write } = heldWrites();
    const windowed = coalesceInWindows(async (items: readonly number[]) => void (await write(items)), 1_000);
    const written = [windowed.add(1), windowed.add(2)];
    await vi.advanceTimersByTimeAsync(999);
    windowed.add(3).catch(() => undefined);
    expect(batches).toEqual([]);
    expect(windowed.unwritten()).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([[1, 2, 3]]);
    releases[0]!();
    await Promise.all(written);
    expect(windowed.unwritten()).toBe(false);
  });

  it('writes the open window at a flush, which resolves once every item added before it is written', async () => {
    const { batches, releases, write } = heldWrites();
    const windowed = coalesceInWindows(async (items: readonly number[]) => void (await write(items)), 60_000);
    const first = windowed.add(1);
    let flushed = false;
    const flushing = windowed.flush().then(() => (flushed = true));
    await vi.waitFor(() => expect(batches).toEqual([[1]]));
    expect(flushed).toBe(false);
    releases[0]!();
    await flushing;
    await first;
    expect(flushed).toBe(true);
    // Nothing open: a flush writes nothing.
    await windowed.flush();
    expect(batches).toEqual([[1]]);
  });

  it('never answers an item with a write that started before it was added: an item added while a write is under way opens the next window', async () => {
    const { batches, releases, write } = heldWrites();
    const windowed = coalesceInWindows(async (items: readonly number[]) => void (await write(items)), 60_000);
    const first = windowed.add(1);
    const flushing = windowed.flush();
    await vi.waitFor(() => expect(batches).toHaveLength(1));
    let laterDone = false;
    const later = windowed.add(2).then(() => (laterDone = true));
    releases[0]!();
    await Promise.all([first, flushing]);
    expect(laterDone).toBe(false);
    expect(batches).toEqual([[1]]);
    const second = windowed.flush();
    await vi.waitFor(() => expect(batches).toEqual([[1], [2]]));
    releases[1]!();
    await Promise.all([second, later]);
  });

  it("joins items added while the window's write waits for the one before, and rejects the flush and the items of a write that failed", async () => {
    const { batches, releases, write } = heldWrites();
    const windowed = coalesceInWindows(async (items: readonly number[]) => void (await write(items)), 60_000);
    const first = windowed.add(1);
    void windowed.flush().catch(() => undefined);
    await vi.waitFor(() => expect(batches).toHaveLength(1));
    const second = windowed.add(2);
    const flushing = windowed.flush();
    // The second window is closed but waits for the first write: an item added now still joins it.
    const third = windowed.add(3);
    releases[0]!(new Error('store unavailable'));
    await expect(first).rejects.toThrow('store unavailable');
    await vi.waitFor(() => expect(batches).toEqual([[1], [2, 3]]));
    releases[1]!();
    await Promise.all([second, third]);
    // The flush waited for both writes of items added before it, and tells of the one that failed.
    await expect(flushing).rejects.toThrow('store unavailable');
    const failing = windowed.add(4);
    const failedFlush = windowed.flush();
    await vi.waitFor(() => expect(batches).toHaveLength(3));
    releases[2]!(new Error('throttled'));
    await expect(failing).rejects.toThrow('throttled');
    await expect(failedFlush).rejects.toThrow('throttled');
  });
});
