import { describe, expect, it } from 'vitest';
import { CountMemo } from '../../../src/context/token-pool.js';

describe('the memory of token counts', () => {
  it('answers a text counted before, and nothing for a text it has not seen', () => {
    const memo = new CountMemo();
    memo.set('the system prompt', 4);
    expect(memo.get('the system prompt')).toBe(4);
    // Equal text built separately is the same key.
    expect(memo.get(['the', 'system', 'prompt'].join(' '))).toBe(4);
    expect(memo.get('an incident never seen')).toBeUndefined();
  });

  it('forgets the least recently used text once it holds more texts than its bound', () => {
    const memo = new CountMemo(2, 1000);
    memo.set('a', 1);
    memo.set('b', 2);
    expect(memo.get('a')).toBe(1); // a is now the most recent
    memo.set('c', 3);
    expect(memo.get('b')).toBeUndefined();
    expect(memo.get('a')).toBe(1);
    expect(memo.get('c')).toBe(3);
    expect(memo.size).toBe(2);
  });

  it('forgets the oldest texts once the characters it holds pass its bound, and never keeps one text over a quarter of it', () => {
    const memo = new CountMemo(100, 40);
    memo.set('x'.repeat(11), 1);
    expect(memo.get('x'.repeat(11))).toBeUndefined();
    memo.set('a'.repeat(10), 1);
    memo.set('b'.repeat(10), 2);
    memo.set('c'.repeat(10), 3);
    memo.set('d'.repeat(10), 4);
    expect(memo.size).toBe(4);
    memo.set('e'.repeat(10), 5);
    expect(memo.get('a'.repeat(10))).toBeUndefined();
    expect(memo.get('e'.repeat(10))).toBe(5);
    expect(memo.size).toBe(4);
  });
});
