import { describe, expect, it } from 'vitest';
import { Scheduler, severityRank } from '../../../src/daemon/scheduler.js';

const entry = (key: string, severity = 'low', cluster = 'c1', notBefore = 0) => ({
  key,
  cluster,
  severity,
  notBefore,
  payload: key,
});

describe('Scheduler', () => {
  it('starts critical before high before the rest, then first-come', () => {
    const s = new Scheduler<string>({ maxConcurrent: 10, maxPerCluster: 10, queueLimit: 10 });
    for (const [k, sev] of [
      ['a', 'low'],
      ['b', 'high'],
      ['c', 'CRITICAL'],
      ['d', 'high'],
      ['e', 'warning'],
    ] as const)
      s.enqueue(entry(k, sev));
    const order: string[] = [];
    for (let e = s.next(); e; e = s.next()) order.push(e.key);
    expect(order).toEqual(['c', 'b', 'd', 'a', 'e']);
  });

  it('holds the global and the per-cluster limits', () => {
    const s = new Scheduler<string>({ maxConcurrent: 3, maxPerCluster: 2, queueLimit: 10 });
    for (const k of ['a1', 'a2', 'a3']) s.enqueue(entry(k, 'low', 'A'));
    for (const k of ['b1', 'b2']) s.enqueue(entry(k, 'low', 'B'));
    const started = [s.next(), s.next(), s.next(), s.next()].map((e) => e?.key);
    expect(started).toEqual(['a1', 'a2', 'b1', undefined]);
    s.done('a1');
    expect(s.next()?.key).toBe('a3');
    expect(s.next()).toBeUndefined();
    s.done('a2');
    s.done('a3');
    expect(s.next()?.key).toBe('b2');
  });

  it('reports full at the queue limit and refuses the same key twice', () => {
    const s = new Scheduler<string>({ maxConcurrent: 1, maxPerCluster: 1, queueLimit: 2 });
    expect(s.enqueue(entry('a'))).toBe('queued');
    expect(s.enqueue(entry('a'))).toBe('already');
    expect(s.enqueue(entry('b'))).toBe('queued');
    expect(s.enqueue(entry('c'))).toBe('full');
  });

  it('does not start an entry before its not-before time', () => {
    let now = 1000;
    const s = new Scheduler<string>({ maxConcurrent: 5, maxPerCluster: 5, queueLimit: 5 }, () => now);
    s.enqueue(entry('later', 'critical', 'c1', 5000));
    s.enqueue(entry('now', 'low'));
    expect(s.next()?.key).toBe('now');
    expect(s.next()).toBeUndefined();
    expect(s.nextWakeAt()).toBe(5000);
    now = 5000;
    expect(s.next()?.key).toBe('later');
  });

  it('ranks unknown severities with the rest', () => {
    expect(severityRank('critical')).toBeLessThan(severityRank('high'));
    expect(severityRank('medium')).toBe(severityRank('info'));
  });
});
