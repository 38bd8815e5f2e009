import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listEntries, readEntry, recordDelivery, saveEntry } from '../../../src/workspace/outbox.js';
import { outboxDir } from '../../../src/workspace/layout.js';
import { readNoFollow } from '../../../src/workspace/files.js';
import { UnsafePathError } from '../../../src/util/safe-path.js';
import type { OutboxEntry } from '../../../src/notify/types.js';
import { scratchDir } from '../../support/scratch.js';

const entry = (key: string): OutboxEntry => ({
  version: 1,
  key,
  idempotencyKey: `inc/${key}`,
  sink: 'hook',
  type: 'webhook',
  incidentId: 'inc',
  runId: 'run-1',
  trigger: 'finished',
  createdAt: '2026-03-01T10:00:00.000Z',
  status: 'pending',
  attempts: 0,
  steps: [{ id: 'post', status: 'pending' }],
});

const workspace = async () => scratchDir('tr-outbox-');

describe('outbox', () => {
  it('records a delivery once: a second record with the same key leaves the first untouched', async () => {
    const dir = await workspace();
    expect(await recordDelivery(dir, entry('run-1.hook'), { url: 'u', body: 'first' })).toBe(true);
    const changed = { ...entry('run-1.hook'), attempts: 3 };
    expect(await recordDelivery(dir, changed, { url: 'u', body: 'second' })).toBe(false);
    expect((await readEntry(dir, 'run-1.hook'))?.attempts).toBe(0);
    expect(JSON.parse(await readFile(path.join(outboxDir(dir), 'run-1.hook.payload.json'), 'utf8'))).toEqual({
      url: 'u',
      body: 'first',
    });
  });

  it('refuses an outbox folder that is a symbolic link, and writes nothing through it', async () => {
    const dir = await workspace();
    const elsewhere = await workspace();
    await mkdir(path.join(dir, '.triage'));
    await symlink(elsewhere, outboxDir(dir));
    await expect(recordDelivery(dir, entry('run-1.hook'), {})).rejects.toBeInstanceOf(UnsafePathError);
    await expect(saveEntry(dir, entry('run-1.hook'))).rejects.toBeInstanceOf(UnsafePathError);
    await expect(listEntries(dir)).rejects.toBeInstanceOf(UnsafePathError);
    expect(await readNoFollow(elsewhere, 'run-1.hook.json', 100)).toBeUndefined();
  });

  it('does not read an entry that is a symbolic link to another file', async () => {
    const dir = await workspace();
    await recordDelivery(dir, entry('run-1.hook'), {});
    const secret = path.join(await workspace(), 'secret.json');
    await writeFile(secret, JSON.stringify(entry('run-2.hook')));
    await symlink(secret, path.join(outboxDir(dir), 'run-2.hook.json'));
    const listing = await listEntries(dir);
    expect(listing.entries.map((e) => e.key)).toEqual(['run-1.hook']);
    expect(listing.problems[0]?.message).toMatch(/run-2\.hook\.json is a symbolic link/);
  });

  it('reports a corrupt or foreign entry as a problem and keeps listing the others', async () => {
    const dir = await workspace();
    await recordDelivery(dir, entry('run-1.hook'), {});
    await writeFile(path.join(outboxDir(dir), 'run-2.hook.json'), '{"version":1,');
    await writeFile(path.join(outboxDir(dir), 'run-3.hook.json'), JSON.stringify({ ...entry('run-9.hook') }));
    const listing = await listEntries(dir);
    expect(listing.entries.map((e) => e.key)).toEqual(['run-1.hook']);
    expect(listing.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/run-2\.hook\.json: is not valid JSON/),
      expect.stringMatching(/run-3\.hook\.json: records key run-9\.hook, not run-3\.hook/),
    ]);
  });
});
