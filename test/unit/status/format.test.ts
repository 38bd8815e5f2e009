import { describe, expect, it } from 'vitest';
import { cutMiddle } from '../../../src/status/format.js';

// How `status` shortens a cluster or incident id: in the middle, so names sharing a long start stay
// told apart by their ends.

describe('cutMiddle', () => {
  it('keeps a name that fits whole', () => {
    expect(cutMiddle('prod-eu-1', 24)).toBe('prod-eu-1');
  });

  it('cuts to the width in the middle, keeping more of the end than of the start', () => {
    const a = cutMiddle('inc-20261122T010000Z-KubePodCrashLooping-payments-api-3f9a1c2b', 32);
    const b = cutMiddle('inc-20261122T010000Z-KubePodCrashLooping-payments-api-9b8c7d6e', 32);
    expect([...a]).toHaveLength(32);
    expect(a).toBe('inc-202611…payments-api-3f9a1c2b');
    expect(a).not.toBe(b);
  });

  it('counts characters, not UTF-16 units, and falls back to an end cut when too narrow', () => {
    expect(cutMiddle('añb-ñ-ñ-ñ-c', 5)).toBe('a…ñ-c');
    expect(cutMiddle('abcdef', 2)).toBe('a…');
  });
});
