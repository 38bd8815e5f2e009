// Random parts of names from a refilled pool: the right length and alphabet, and fresh bytes after
// each refill.
import { describe, expect, it } from 'vitest';
import { randomHex } from '../../../src/util/random.js';

describe('randomHex', () => {
  it('returns two lowercase hex characters per byte asked for', () => {
    for (const bytes of [1, 3, 4, 6, 32])
      expect(randomHex(bytes)).toMatch(new RegExp(`^[0-9a-f]{${bytes * 2}}$`));
  });

  it('keeps drawing fresh bytes once its pool is used up: values across several refills never repeat', () => {
    // 8 bytes each, 3,000 draws: about six refills of the 4 KiB pool. A pool that was not refilled
    // would hand out short strings or the same bytes again; 64-bit values collide by chance with
    // probability about 2^-41.
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const value = randomHex(8);
      expect(value).toHaveLength(16);
      seen.add(value);
    }
    expect(seen.size).toBe(3000);
  });

  it('draws a value larger than its pool directly, whole', () => {
    const big = randomHex(5000);
    expect(big).toMatch(/^[0-9a-f]{10000}$/);
  });
});
