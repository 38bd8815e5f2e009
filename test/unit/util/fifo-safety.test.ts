// Files the daemon reads with synchronous calls (util/fs.ts) must never block its event loop: a FIFO
// planted in place of a lock, a state file, an audit log or a bundle file is refused or replaced, and
// each of these calls returns.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileDigest } from '../../../src/audit/digest.js';
import { AuditLog, verifyAuditLog } from '../../../src/audit/log.js';
import { readStateFile } from '../../../src/workspace/state.js';
import { readRegularFileSync } from '../../../src/util/fs.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fifo-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const fifo = (file: string) => execFileSync('mkfifo', [file]);

describe('a FIFO in place of a file the daemon reads', () => {
  it('is refused by readRegularFileSync (EINVAL) instead of blocking on its open', () => {
    const file = path.join(dir, 'state.json');
    fifo(file);
    expect(() => readRegularFileSync(file)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });

  it('fails a state read with the reason, and digests as not-a-file', async () => {
    const file = path.join(dir, 'state.json');
    fifo(file);
    await expect(readStateFile(file)).rejects.toThrow('not a regular file');
    expect(await fileDigest(file)).toBe('not-a-file');
  });

  it('in place of the audit lock (left long ago) is taken over, and the event is appended', async () => {
    const lock = path.join(dir, 'audit.lock');
    fifo(lock);
    const old = new Date(Date.now() - 3_600_000);
    await utimes(lock, old, old);
    await new AuditLog().append(dir, { type: 'detected' });
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 1 });
  });

  it('in place of the audit log fails the append with what to do', async () => {
    await mkdir(dir, { recursive: true });
    fifo(path.join(dir, 'audit.jsonl'));
    await expect(new AuditLog().append(dir, { type: 'detected' })).rejects.toThrow(
      /audit\.jsonl is not a regular file.*remove it/,
    );
    // Nothing was written beside it.
    await expect(readFile(path.join(dir, 'audit.head'), 'utf8')).rejects.toThrow('ENOENT');
  });
});
