import { describe, expect, it } from 'vitest';
import type { NotifySinkConfig } from '../../../src/config/schema.js';
import { httpFailure, nextDelayMs, parseRetryAfter } from '../../../src/notify/delivery.js';
import { severityRank, sinkMatches } from '../../../src/notify/filters.js';
import type { FinishedIncident } from '../../../src/notify/types.js';

describe('retry schedule', () => {
  const policy = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 8000 };

  it('doubles from the base delay up to the cap, with jitter between half and all of it', () => {
    expect([1, 2, 3, 4, 5].map((n) => nextDelayMs(n, policy, undefined, () => 1))).toEqual([
      1000, 2000, 4000, 8000, 8000,
    ]);
    expect(nextDelayMs(3, policy, undefined, () => 0)).toBe(2000);
  });

  it('honours Retry-After in full, even past the cap', () => {
    expect(nextDelayMs(1, policy, 2000, () => 0)).toBe(2000);
    expect(nextDelayMs(1, policy, 60_000, () => 1)).toBe(60_000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-03-01T10:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('retries 429, 408 and 5xx; any other 4xx (and a redirect) is permanent', () => {
    expect(httpFailure('x', 429, '', '2', 0)).toMatchObject({
      kind: 'retry',
      retryAfterMs: 2000,
      status: 429,
    });
    expect(httpFailure('x', 503, '', null, 0).kind).toBe('retry');
    expect(httpFailure('x', 408, '', null, 0).kind).toBe('retry');
    expect(httpFailure('x', 400, 'bad', null, 0)).toMatchObject({ kind: 'permanent', response: 'bad' });
    expect(httpFailure('x', 404, '', null, 0).kind).toBe('permanent');
    expect(httpFailure('x', 301, '', null, 0).kind).toBe('permanent');
  });
});

describe('sink filters', () => {
  const input = (severity: string, state = 'succeeded', cluster = 'prod-eu-1') =>
    ({
      incident: { cluster, severity },
      state: { state },
    }) as unknown as FinishedIncident;
  const sink = (extra: Partial<NotifySinkConfig>) =>
    ({ name: 's', type: 'webhook', on: ['succeeded', 'failed'], secret: 'S', ...extra }) as NotifySinkConfig;

  it('ranks severity words, P1–P5 and SEV1–SEV5', () => {
    expect(['info', 'Low', 'warning', 'medium', 'ERROR', 'high', 'critical'].map(severityRank)).toEqual([
      0, 1, 2, 2, 3, 3, 4,
    ]);
    expect(['P1', 'p2', 'sev3', 'SEV-4', 'P5'].map(severityRank)).toEqual([4, 3, 2, 1, 0]);
    expect(severityRank('purple')).toBeUndefined();
  });

  it('matches on state, minimum severity and cluster; an unknown severity is delivered', () => {
    expect(sinkMatches(sink({ on: ['failed'] }), input('high'))).toEqual({
      match: false,
      why: 'state succeeded is not in on: [failed]',
    });
    expect(sinkMatches(sink({ min_severity: 'error' }), input('warning'))).toEqual({
      match: false,
      why: 'severity warning is below min_severity error',
    });
    expect(sinkMatches(sink({ min_severity: 'error' }), input('P1')).match).toBe(true);
    expect(sinkMatches(sink({ min_severity: 'error' }), input('purple')).match).toBe(true);
    expect(sinkMatches(sink({ clusters: ['prod-us-1'] }), input('high'))).toEqual({
      match: false,
      why: 'cluster prod-eu-1 is not in clusters',
    });
    expect(sinkMatches(sink({ clusters: ['prod-eu-1'] }), input('high', 'failed')).match).toBe(true);
  });
});
