import { execFileSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readOwnFile, readOwnFileBelow, readUpTo } from '../../../src/util/safe-path.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'safe-path-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** readUpTo over a fresh descriptor of `file`. */
function readAt(file: string, limit: number, sizeHint?: number): string {
  const fd = openSync(file, 'r');
  try {
    return readUpTo(fd, limit, sizeHint).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

describe('readUpTo', () => {
  it('reads a whole file whatever the size hint says: smaller (it grew), none, or exact', async () => {
    const file = path.join(dir, 'f');
    const text = 'x'.repeat(200_000);
    await writeFile(file, text);
    expect(readAt(file, 1 << 20, 10)).toBe(text);
    expect(readAt(file, 1 << 20)).toBe(text);
    expect(readAt(file, 1 << 20, text.length)).toBe(text);
  });

  it('stops at the limit, so a caller sees that a file is over its bound without reading all of it', async () => {
    const file = path.join(dir, 'f');
    await writeFile(file, 'abcdefghij');
    expect(readAt(file, 4, 10)).toBe('abcd');
    expect(readAt(file, 4)).toBe('abcd');
  });

  it('reads an empty file as empty', async () => {
    const file = path.join(dir, 'empty');
    await writeFile(file, '');
    expect(readAt(file, 100, 0)).toBe('');
  });
});

describe('readOwnFile', () => {
  it('reads a regular file within its bound and counts its bytes', async () => {
    const file = path.join(dir, 'report.md');
    await writeFile(file, '# Report\n\nété\n');
    expect(await readOwnFile(file, 100)).toEqual({ kind: 'ok', text: '# Report\n\nété\n', bytes: 16 });
  });

  it('says missing for an absent file, and refuses a link, a file over the bound and a FIFO with the reason', async () => {
    expect(await readOwnFile(path.join(dir, 'absent'), 100)).toEqual({ kind: 'missing' });
    const target = path.join(dir, 'target');
    await writeFile(target, 'secret');
    const link = path.join(dir, 'link');
    await symlink(target, link);
    expect(await readOwnFile(link, 100)).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('symbolic link'),
    });
    expect(await readOwnFile(target, 3)).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('over the 3-byte limit'),
    });
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // Opened without blocking (O_NONBLOCK) and refused: a reader would otherwise wait for a writer forever.
    expect(await readOwnFile(fifo, 100)).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('not a regular file'),
    });
  });

  it('refuses a file reached through a linked folder below the base', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'safe-path-outside-'));
    try {
      await writeFile(path.join(outside, 'report.md'), 'from elsewhere');
      await symlink(outside, path.join(dir, 'output'));
      expect(await readOwnFileBelow(dir, path.join(dir, 'output', 'report.md'), 100)).toMatchObject({
        kind: 'refused',
        reason: expect.stringContaining('symbolic link'),
      });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
