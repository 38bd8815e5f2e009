import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fsyncDir, groupCommit } from '../../../src/util/fs.js';

/** A run per call to `run(key)`, each finished by hand: what the group commit started, and when. */
function manualRuns() {
  const started: { key: string; finish: () => void }[] = [];
  const run = (key: string) =>
    new Promise<void>((resolve) => {
      started.push({ key, finish: resolve });
    });
  return { started, run };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('groupCommit (the folder fsyncs of util/fs.ts)', () => {
  it('runs at once for a first call, and gives every call made meanwhile one shared run that starts after it', async () => {
    const { started, run } = manualRuns();
    const commit = groupCommit(run);
    const done: string[] = [];
    const first = commit('d').then(() => done.push('first'));
    expect(started).toHaveLength(1);
    // Made while the first run is under way: not covered by it (their renames came after it started).
    const second = commit('d').then(() => done.push('second'));
    const third = commit('d').then(() => done.push('third'));
    await tick();
    expect(started).toHaveLength(1);
    started[0]?.finish();
    await first;
    await tick();
    // One more run for both, started only once the first had ended.
    expect(started).toHaveLength(2);
    expect(done).toEqual(['first']);
    started[1]?.finish();
    await Promise.all([second, third]);
    expect(done).toEqual(['first', 'second', 'third']);
    expect(started).toHaveLength(2);
  });

  it('keeps keys apart, and starts afresh once a key is idle', async () => {
    const { started, run } = manualRuns();
    const commit = groupCommit(run);
    const a = commit('a');
    const b = commit('b');
    expect(started.map((s) => s.key)).toEqual(['a', 'b']);
    for (const s of started) s.finish();
    await Promise.all([a, b]);
    await tick();
    const again = commit('a');
    expect(started.map((s) => s.key)).toEqual(['a', 'b', 'a']);
    started[2]?.finish();
    await again;
  });

  it('lets a later call through after a failed run', async () => {
    let calls = 0;
    const commit = groupCommit(async () => {
      calls++;
      if (calls === 1) throw new Error('EIO');
    });
    const failed = commit('d');
    const next = commit('d');
    await expect(failed).rejects.toThrow('EIO');
    await expect(next).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });

  it('syncs a real folder, and answers for a folder that is gone without failing', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'fsync-dir-'));
    try {
      await writeFile(path.join(dir, '.a.tmp'), 'x');
      await rename(path.join(dir, '.a.tmp'), path.join(dir, 'a'));
      await expect(Promise.all([fsyncDir(dir), fsyncDir(dir), fsyncDir(dir)])).resolves.toHaveLength(3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await expect(fsyncDir(dir)).resolves.toBeUndefined();
  });
});
