// The one per-key serial queue: one batch per key at a time, in order; what arrives meanwhile is the
// next batch; keys are independent; a failed batch rejects only its own items.
import { describe, expect, it } from 'vitest';
import { KeyedQueue } from '../../../src/util/keyed-queue.js';

const deferred = () => {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return { gate, open };
};

describe('KeyedQueue', () => {
  it('runs one batch per key at a time, batching what arrives while it runs, in order', async () => {
    const batches: string[][] = [];
    const first = deferred();
    const queue = new KeyedQueue<string, string>(async (key, items) => {
      batches.push(items);
      if (items[0] === 'a') await first.gate;
      return items.map((i) => `${key}:${i}`);
    });
    const a = queue.submit('k', 'a');
    await Promise.resolve();
    await Promise.resolve();
    const rest = [queue.submit('k', 'b'), queue.submit('k', 'c')];
    expect(queue.has('k')).toBe(true);
    first.open();
    expect(await Promise.all([a, ...rest])).toEqual(['k:a', 'k:b', 'k:c']);
    expect(batches).toEqual([['a'], ['b', 'c']]);
    expect(queue.has('k')).toBe(false);
  });

  it('keeps batches of at most maxBatch items', async () => {
    const batches: number[][] = [];
    const queue = new KeyedQueue<number, number>(async (_key, items) => {
      batches.push(items);
      return items;
    }, 1);
    await Promise.all([1, 2, 3].map((n) => queue.submit('k', n)));
    expect(batches).toEqual([[1], [2], [3]]);
  });

  it('runs other keys while one key is busy', async () => {
    const held = deferred();
    const queue = new KeyedQueue<string, string>(async (key, items) => {
      if (key === 'slow') await held.gate;
      return items;
    });
    const slow = queue.submit('slow', 'x');
    await expect(queue.submit('fast', 'y')).resolves.toBe('y');
    held.open();
    await expect(slow).resolves.toBe('x');
  });

  it('a failed batch rejects its own items and the next batch still runs', async () => {
    const queue = new KeyedQueue<string, string>(async (_key, items) => {
      if (items.includes('bad')) throw new Error('disk full');
      return items;
    }, 1);
    const bad = queue.submit('k', 'bad');
    const good = queue.submit('k', 'good');
    await expect(bad).rejects.toThrow('disk full');
    await expect(good).resolves.toBe('good');
  });
});
