import { renameSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLease, type LeaseInfo } from '../../../src/workspace/lease.js';
import { leasePath } from '../../../src/workspace/layout.js';
import { tempRoot } from '../../support/incidents.js';
import { scratchDir } from '../../support/scratch.js';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ root, cleanup } = await tempRoot());
  await mkdir(path.join(root, 'ws'));
});
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

  it('does not take a lease another replica took over from a dead holder between its look and its move', async () => {
    const dir = path.join(root, 'ws');
    await acquireLease(dir, { daemonId: 'dead', pid: 9, host: 'h1' }, ttl);
    const file = leasePath(dir);
    const fresh = { holder: 'daemon-a:101', daemonId: 'daemon-a', pid: 101, host: 'h1', acquiredAt: 'now' };
    // B has looked at the dead holder's lease; before B moves it, replica A takes it over (synchronously here).
    const second = await acquireLease(dir, b, {
      ttlMs: 30_000,
      isPidAlive: (pid) => {
        if (pid === 9) {
          renameSync(file, `${file}.gone`);
          writeFileSync(file, JSON.stringify(fresh), { flag: 'wx' });
        }
        return pid !== 9;
      },
    });
    expect(second.acquired).toBe(false);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(fresh);
    expect((await readdir(path.dirname(file))).sort()).toEqual(['lease', 'lease.gone']);
  });

  it('lets exactly one of many racing claimants take a lease whose holder died', async () => {
    for (let round = 0; round < 20; round++) {
      const dir = path.join(root, `ws${round}`);
      await mkdir(dir);
      await acquireLease(dir, { daemonId: 'dead', pid: 9, host: 'h1' }, ttl);
      const racers = Array.from({ length: 8 }, (_, i) =>
        acquireLease(
          dir,
          { daemonId: `r${i}`, pid: 1000 + i, host: 'h1' },
          { ttlMs: 30_000, isPidAlive: (pid) => pid !== 9 },
        ),
      );
      expect(
        (await Promise.all(racers)).filter((r) => r.acquired),
        `round ${round}`,
      ).toHaveLength(1);
    }
  });

  it('never re-creates a workspace folder that was removed: nothing to claim there', async () => {
    const gone = path.join(root, 'removed-by-producer');
    expect(await acquireLease(gone, a, ttl)).toMatchObject({ acquired: false });
    await expect(readdir(gone)).rejects.toThrow(/ENOENT/);
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

describe('lease holder identity', () => {
  it('takes over at once from a holder whose pid now belongs to another process (a restarted container)', async () => {
    const dir = scratchDir('lease-restart-');
    await mkdir(path.join(dir, '.triage'), { recursive: true });
    // Our own pid, but recorded with a start time that is not ours: the pid was reused.
    await writeFile(
      path.join(dir, '.triage', 'lease'),
      JSON.stringify({
        holder: 'old-daemon:' + process.pid,
        daemonId: 'old-daemon',
        pid: process.pid,
        host: hostname(),
        acquiredAt: new Date().toISOString(),
        startTime: '1',
      }),
    );
    const got = await acquireLease(dir, { daemonId: 'new-daemon' }, { ttlMs: 60_000 });
    expect(got.acquired).toBe(true);
    expect(got.acquired && got.tookOver?.daemonId).toBe('old-daemon');
  });

  it('does not take over from a live holder whose start time matches', async () => {
    const dir = scratchDir('lease-live-');
    const first = await acquireLease(dir, { daemonId: 'holder', pid: process.pid }, { ttlMs: 60_000 });
    expect(first.acquired).toBe(true);
    const second = await acquireLease(dir, { daemonId: 'other', pid: process.pid + 1 }, { ttlMs: 60_000 });
    expect(second.acquired).toBe(false);
  });
});
