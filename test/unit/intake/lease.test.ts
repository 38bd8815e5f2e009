import { readFile, utimes } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLease, leasePath, type LeaseInfo } from '../../../src/intake/lease.js';
import { tempRoot } from '../../support/incidents.js';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ root, cleanup } = await tempRoot()));
afterEach(async () => cleanup());

const alive = () => true;
const a = { daemonId: 'daemon-a', pid: 101, host: 'h1' };
const b = { daemonId: 'daemon-b', pid: 202, host: 'h1' };
const ttl = { ttlMs: 30_000, isPidAlive: alive };

describe('lease', () => {
  it('is created exclusively: a second claimant is told who holds it', async () => {
    const dir = path.join(root, 'ws');
    const first = await acquireLease(dir, a, ttl);
    expect(first.acquired).toBe(true);
    const second = await acquireLease(dir, b, ttl);
    expect(second).toMatchObject({ acquired: false, holder: { holder: 'daemon-a:101' } });
    const info = JSON.parse(await readFile(leasePath(dir), 'utf8')) as LeaseInfo;
    expect(info).toMatchObject({ daemonId: 'daemon-a', pid: 101, host: 'h1' });
  });

  it('is taken over once stale past the ttl, and the old holder can no longer renew it', async () => {
    const dir = path.join(root, 'ws');
    const first = await acquireLease(dir, a, ttl);
    if (!first.acquired) throw new Error('first claim failed');
    const old = new Date(Date.now() - 60_000);
    await utimes(leasePath(dir), old, old);
    const second = await acquireLease(dir, b, ttl);
    expect(second).toMatchObject({ acquired: true, tookOver: { holder: 'daemon-a:101' } });
    expect(await first.lease.renew()).toBe(false);
    await first.lease.release();
    expect((JSON.parse(await readFile(leasePath(dir), 'utf8')) as LeaseInfo).holder).toBe('daemon-b:202');
  });

  it('is taken over at once when its holder on this host is a dead pid', async () => {
    const dir = path.join(root, 'ws');
    await acquireLease(dir, a, ttl);
    const second = await acquireLease(dir, b, { ttlMs: 30_000, isPidAlive: (pid) => pid !== 101 });
    expect(second.acquired).toBe(true);
  });

  it('is not taken over from a live holder on another host before the ttl', async () => {
    const dir = path.join(root, 'ws');
    await acquireLease(dir, { ...a, host: 'other' }, ttl);
    const second = await acquireLease(dir, b, { ttlMs: 30_000, isPidAlive: () => false });
    expect(second.acquired).toBe(false);
  });

  it('lets exactly one of many racing claimants take a stale lease', async () => {
    const dir = path.join(root, 'ws');
    await acquireLease(dir, a, ttl);
    const old = new Date(Date.now() - 60_000);
    await utimes(leasePath(dir), old, old);
    const racers = Array.from({ length: 12 }, (_, i) =>
      acquireLease(dir, { daemonId: `r${i}`, pid: 1000 + i, host: 'h1' }, ttl),
    );
    const results = await Promise.all(racers);
    expect(results.filter((r) => r.acquired)).toHaveLength(1);
  });

  it('renew keeps a lease fresh and release removes only our own', async () => {
    const dir = path.join(root, 'ws');
    const first = await acquireLease(dir, a, ttl);
    if (!first.acquired) throw new Error('first claim failed');
    expect(await first.lease.renew()).toBe(true);
    await first.lease.release();
    expect((await acquireLease(dir, b, ttl)).acquired).toBe(true);
  });
});
