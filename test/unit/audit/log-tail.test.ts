import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog, verifyAuditLog } from '../../../src/audit/log.js';
import { AUDIT_FILE } from '../../../src/workspace/layout.js';

// The audit log remembers the tail it wrote, so the next append skips reading it back; whatever else
// touched the file in between (another process's append, a torn write) is still read and chained.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'audit-tail-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const lines = async () =>
  (await readFile(path.join(dir, AUDIT_FILE), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { seq: number; type: string; repaired?: string });

describe('audit log tail memory', () => {
  it('chains to another writer that appended since this log last wrote', async () => {
    const ours = new AuditLog();
    const theirs = new AuditLog();
    await ours.append(dir, { type: 'claimed' });
    await theirs.append(dir, { type: 'retry_requested' });
    await ours.append(dir, { type: 'preparing' });
    expect((await lines()).map((l) => [l.seq, l.type])).toEqual([
      [0, 'claimed'],
      [1, 'retry_requested'],
      [2, 'preparing'],
    ]);
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, entries: 3 });
  });

  it('repairs a torn line left after its own last write, instead of chaining to its memory', async () => {
    const log = new AuditLog();
    await log.append(dir, { type: 'claimed' });
    await appendFile(path.join(dir, AUDIT_FILE), '{"seq":1,"type":"half');
    await log.append(dir, { type: 'preparing' });
    const after = await lines();
    expect(after.map((l) => l.type)).toEqual(['claimed', 'preparing']);
    expect(after[1]?.repaired).toMatch(/dropped 21 bytes/);
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, entries: 2 });
  });

  it('chains nothing after a last line that is JSON but not an entry, and says how to recover', async () => {
    const log = new AuditLog();
    await log.append(dir, { type: 'claimed' });
    for (const last of ['null', '[]', '{"type":"x"}', '{"seq":"7"}', '{"seq":-1}']) {
      await appendFile(path.join(dir, AUDIT_FILE), `${last}\n`);
      await expect(log.append(dir, { type: 'preparing' }), last).rejects.toThrow(
        /is not an audit entry \(an object with a whole-number "seq"\).*audit verify/,
      );
      const text = await readFile(path.join(dir, AUDIT_FILE), 'utf8');
      await writeFile(path.join(dir, AUDIT_FILE), text.slice(0, text.length - last.length - 1));
    }
    await log.append(dir, { type: 'preparing' });
    expect((await lines()).map((l) => [l.seq, l.type])).toEqual([
      [0, 'claimed'],
      [1, 'preparing'],
    ]);
  });

  it('many appends in turn stay one valid chain', async () => {
    const log = new AuditLog();
    for (let i = 0; i < 20; i++) await log.append(dir, { type: 'waiting', n: i });
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, entries: 20 });
  });
});
