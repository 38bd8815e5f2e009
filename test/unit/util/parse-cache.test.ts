import { describe, expect, it } from 'vitest';
import { ParseCache } from '../../../src/util/parse-cache.js';

describe('ParseCache', () => {
  it('parses the same text of the same file once and returns the same result', () => {
    const cache = new ParseCache<{ n: number }>();
    let calls = 0;
    const parse = () => ({ n: ++calls });
    const first = cache.get('a.yml', 'x: 1', parse);
    expect(cache.get('a.yml', 'x: 1', parse)).toBe(first);
    expect(calls).toBe(1);
  });

  it('parses again when the text or the file differs', () => {
    const cache = new ParseCache<string>();
    expect(cache.get('a.yml', 'x: 1', () => 'one')).toBe('one');
    expect(cache.get('a.yml', 'x: 2', () => 'two')).toBe('two');
    expect(cache.get('b.yml', 'x: 1', () => 'other file')).toBe('other file');
  });

  it('does not cache a failed parse: the error is thrown every time', () => {
    const cache = new ParseCache<string>();
    let calls = 0;
    const bad = () => {
      calls++;
      throw new Error('bad yaml');
    };
    expect(() => cache.get('a.yml', '{', bad)).toThrow('bad yaml');
    expect(() => cache.get('a.yml', '{', bad)).toThrow('bad yaml');
    expect(calls).toBe(2);
  });

  it('drops the oldest entry when full', () => {
    const cache = new ParseCache<number>(2);
    let calls = 0;
    const parse = () => ++calls;
    cache.get('f', '1', parse);
    cache.get('f', '2', parse);
    cache.get('f', '3', parse);
    expect(cache.get('f', '1', parse)).toBe(4);
    expect(cache.get('f', '3', parse)).toBe(3);
  });
});
