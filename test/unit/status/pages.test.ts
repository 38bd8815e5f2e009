import { describe, expect, it } from 'vitest';
import type { IncidentState } from '../../../src/workspace/state.js';
import {
  compareEntries,
  decodeCursor,
  matchCount,
  pageOf,
  PageQueryError,
  type Sortable,
} from '../../../src/status/pages.js';

// Listing order and pagination of the status index: newest first, stable page boundaries.

const entry = (folder: string, sortKey: number, state: IncidentState = 'succeeded'): Sortable => ({
  folder,
  sortKey,
  state,
});

const sorted = (entries: Sortable[]) => [...entries].sort(compareEntries);

describe('status pages', () => {
  const all = sorted([
    entry('a', 100),
    entry('b', 300, 'failed'),
    entry('c', 200),
    entry('d', 300),
    entry('e', 50, 'failed'),
  ]);

  it('orders newest updatedAt first, then by folder name', () => {
    expect(all.map((e) => e.folder)).toEqual(['b', 'd', 'c', 'a', 'e']);
  });

  it('walks every incident exactly once by cursor, page after page', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = pageOf(all, { limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((e) => e.folder));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['b', 'd', 'c', 'a', 'e']);
  });

  it('keeps a page boundary when a newer incident arrives between pages (no repeat, no gap)', () => {
    const first = pageOf(all, { limit: 2 });
    const grown = sorted([...all, entry('z', 999)]);
    const second = pageOf(grown, { limit: 2, cursor: first.nextCursor as string });
    expect(second.items.map((e) => e.folder)).toEqual(['c', 'a']);
  });

  it('filters by state, with the cursor counting only matches', () => {
    const page = pageOf(all, { state: 'failed', limit: 1 });
    expect(page.items.map((e) => e.folder)).toEqual(['b']);
    const next = pageOf(all, { state: 'failed', limit: 1, cursor: page.nextCursor as string });
    expect(next.items.map((e) => e.folder)).toEqual(['e']);
    expect(next.nextCursor).toBeUndefined();
  });

  it('filters by cluster and state together, page after page, and counts what matched', () => {
    const clustered = all.map((e, i) => ({ ...e, cluster: i % 2 === 0 ? 'prod-eu-1' : 'prod-us-1' }));
    // b, c, e in prod-eu-1; b and e failed.
    const first = pageOf(clustered, { cluster: 'prod-eu-1', limit: 2 });
    expect(first.items.map((e) => e.folder)).toEqual(['b', 'c']);
    const rest = pageOf(clustered, { cluster: 'prod-eu-1', limit: 2, cursor: first.nextCursor as string });
    expect(rest.items.map((e) => e.folder)).toEqual(['e']);
    expect(rest.nextCursor).toBeUndefined();
    expect(pageOf(clustered, { cluster: 'prod-eu-1', state: 'failed' }).items.map((e) => e.folder)).toEqual([
      'b',
      'e',
    ]);
    expect(matchCount(clustered, { cluster: 'prod-us-1' })).toBe(2);
    expect(matchCount(clustered, { cluster: 'prod-eu-1', state: 'failed' })).toBe(2);
    expect(matchCount(all, { cluster: 'prod-eu-1' })).toBe(0);
  });

  it('skips `offset` matching incidents', () => {
    expect(pageOf(all, { offset: 3, limit: 10 }).items.map((e) => e.folder)).toEqual(['a', 'e']);
    expect(pageOf(all, { offset: 1, state: 'failed' }).items.map((e) => e.folder)).toEqual(['e']);
  });

  it('has no next cursor on the last page', () => {
    expect(pageOf(all, { limit: 5 }).nextCursor).toBeUndefined();
    expect(pageOf(all, { limit: 4 }).nextCursor).toBeDefined();
  });

  it('refuses a cursor it did not give, saying what to pass instead', () => {
    expect(() => decodeCursor('not-a-cursor')).toThrow(PageQueryError);
    expect(() => pageOf(all, { cursor: Buffer.from('{"a":1}').toString('base64url') })).toThrow(
      /is not one this server gave: pass the nextCursor of the previous page/,
    );
  });
});
