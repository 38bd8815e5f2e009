import { execFile } from 'node:child_process';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Spawner, SpawnError } from '../../../src/util/spawner.js';

// Real children spawned from the worker thread: stdin, output files, exit, process group, errors.
const run = promisify(execFile);
let dir: string;
let spawner: Spawner;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'spawner-'));
  spawner = new Spawner();
});
afterEach(async () => {
  await spawner.close();
  await rm(dir, { recursive: true, force: true });
});

async function outputFiles() {
  const out = await open(path.join(dir, 'out'), 'w');
  const err = await open(path.join(dir, 'err'), 'w');
  return { out, err, close: () => Promise.all([out.close(), err.close()]) };
}

const request = (script: string, fds: { out: { fd: number }; err: { fd: number } }, stdin = '') => ({
  file: '/bin/sh',
  args: ['-c', script],
  cwd: dir,
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  stdin,
  stdout: fds.out.fd,
  stderr: fds.err.fd,
  detached: true,
});

describe('Spawner', () => {
  it('gives the child its stdin then EOF, its output to the given files, and reports its exit code', async () => {
    const files = await outputFiles();
    const child = await spawner.spawn(request('cat; echo done >&2; exit 3', files, 'the prompt'));
    await files.close();
    expect(child.pid).toBeGreaterThan(0);
    expect(await child.exit).toEqual({ code: 3, signal: null });
    expect(child.exited).toBe(true);
    expect(await readFile(path.join(dir, 'out'), 'utf8')).toBe('the prompt');
    expect(await readFile(path.join(dir, 'err'), 'utf8')).toBe('done\n');
  });

  it('starts the child as the leader of its own process group, and reports the signal that ended it', async () => {
    const files = await outputFiles();
    const child = await spawner.spawn(request('sleep 30', files));
    await files.close();
    const { stdout } = await run('ps', ['-o', 'pgid=', '-p', String(child.pid)]);
    expect(Number(stdout.trim())).toBe(child.pid);
    expect(child.exited).toBe(false);
    process.kill(-child.pid, 'SIGTERM');
    expect(await child.exit).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('fails with the error code when the command cannot be run, and keeps spawning afterwards', async () => {
    const files = await outputFiles();
    const missing = { ...request('', files), file: path.join(dir, 'no-such-command') };
    await expect(spawner.spawn(missing)).rejects.toSatisfy(
      (e: unknown) => e instanceof SpawnError && e.code === 'ENOENT',
    );
    const child = await spawner.spawn(request('exit 0', files));
    await files.close();
    expect(await child.exit).toEqual({ code: 0, signal: null });
  });

  it('reports a running child as lost when closed, without killing it', async () => {
    const files = await outputFiles();
    const child = await spawner.spawn(request('sleep 30', files));
    await files.close();
    await spawner.close();
    expect(await child.exit).toEqual({ code: null, signal: null, lost: true });
    expect(() => process.kill(child.pid, 0)).not.toThrow();
    process.kill(-child.pid, 'SIGKILL');
    await vi.waitFor(async () => {
      const { stdout } = await run('ps', ['-o', 'stat=', '-p', String(child.pid)]).catch(() => ({
        stdout: '',
      }));
      expect(stdout.trim()).toMatch(/^(Z.*)?$/);
    });
  });
});
