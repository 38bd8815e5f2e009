import { describe, expect, it } from 'vitest';
import { allEnded } from '../../../src/util/promises.js';

describe('allEnded', () => {
  it('throws the first failure only once every promise has ended', async () => {
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const first = new Error('first');
    let ended = false;
    const all = allEnded([
      Promise.reject(first),
      slow,
      Promise.reject(new Error('second')),
      undefined,
    ]).finally(() => (ended = true));
    await new Promise((r) => setImmediate(r));
    expect(ended).toBe(false);
    release();
    await expect(all).rejects.toBe(first);
  });

  it('resolves when every promise resolved (undefined ones count as done)', async () => {
    await expect(allEnded([Promise.resolve(1), undefined])).resolves.toBeUndefined();
  });
});
