import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { folderDigests } from '../../../src/audit/digest.js';
import { AuditLog } from '../../../src/audit/log.js';
import { pruneRoot } from '../../../src/audit/prune.js';
import { verifyWorkspaceAudit } from '../../../src/replay/verify.js';

// Retention: a run past memory.retention loses its recorded outputs and report copies, the chain
// records what was removed (with the digests), `audit verify` still passes, and any other removal is
// still caught. A recent run is left alone, and a second pass removes nothing more.

const DAY = 86_400_000;
let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'triage-prune-'));
});
afterEach(async () => rm(root, { recursive: true, force: true }));

async function workspaceWithRun(name: string, finishedAt: Date): Promise<{ dir: string; runDir: string }> {
  const dir = path.join(root, name);
  const runDir = path.join(dir, '.triage', 'runs', 'run-1');
  await mkdir(path.join(runDir, 'previous'), { recursive: true });
  await writeFile(path.join(runDir, 'result.json'), '{"status":"succeeded"}\n');
  await writeFile(path.join(runDir, 'cluster-calls.jsonl'), '{"call":1}\n');
  await writeFile(path.join(runDir, 'cluster-outputs.jsonl'), '{"call":1,"stdout":"pods"}\n');
  await writeFile(path.join(runDir, 'previous', '1-old.md'), '# an earlier report\n');
  const audit = new AuditLog({ now: () => finishedAt });
  await audit.append(path.join(dir, '.triage'), {
    type: 'finished',
    runId: 'run-1',
    files: await folderDigests(runDir),
  });
  return { dir, runDir };
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

describe('retention', () => {
  it('removes recorded outputs of runs past retention, records them in the chain, and verify still passes', async () => {
    const now = Date.now();
    const old = await workspaceWithRun('old', new Date(now - 100 * DAY));
    const recent = await workspaceWithRun('recent', new Date(now - 2 * DAY));
    expect(await verifyWorkspaceAudit(old.dir)).toMatchObject({ ok: true });
    const audit = new AuditLog();
    const pass = await pruneRoot(root, { retentionMs: 90 * DAY, now, audit });
    expect(pass).toEqual({ runs: 1, files: 2, problems: [] });
    expect(await exists(path.join(old.runDir, 'cluster-outputs.jsonl'))).toBe(false);
    expect(await exists(path.join(old.runDir, 'previous'))).toBe(false);
    expect(await exists(path.join(old.runDir, 'cluster-calls.jsonl'))).toBe(true);
    expect(await exists(path.join(recent.runDir, 'cluster-outputs.jsonl'))).toBe(true);
    const events = (await readFile(path.join(old.dir, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.at(-1)).toMatchObject({
      type: 'pruned',
      runId: 'run-1',
      files: ['cluster-outputs.jsonl', 'previous/1-old.md'],
      sha256: { 'cluster-outputs.jsonl': expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect(await verifyWorkspaceAudit(old.dir)).toMatchObject({ ok: true });
    expect(await pruneRoot(root, { retentionMs: 90 * DAY, now, audit })).toEqual({
      runs: 0,
      files: 0,
      problems: [],
    });
  });

  it('passes over audit lines that are not entries, and never prunes a run id that is not one (`../..` would name the workspace)', async () => {
    const now = Date.now();
    const old = await workspaceWithRun('old', new Date(now - 100 * DAY));
    // Files the workspace itself holds where a run's prunable files would be.
    await writeFile(path.join(old.dir, 'cluster-outputs.jsonl'), 'the workspace, not a run\n');
    const audit = new AuditLog({ now: () => new Date(now - 100 * DAY) });
    for (const runId of ['../..', '../../..', '.'])
      await audit.append(path.join(old.dir, '.triage'), { type: 'finished', runId });
    const log = path.join(old.dir, '.triage', 'audit.jsonl');
    const [first, ...rest] = (await readFile(log, 'utf8')).split('\n');
    await writeFile(log, [first, 'null', '[]', '"text"', ...rest].join('\n'));
    const pass = await pruneRoot(root, { retentionMs: 90 * DAY, now, audit: new AuditLog() });
    expect(pass).toMatchObject({ runs: 1, files: 2 });
    expect(await readFile(path.join(old.dir, 'cluster-outputs.jsonl'), 'utf8')).toBe(
      'the workspace, not a run\n',
    );
  });

  it('still catches a file removed that retention did not remove', async () => {
    const now = Date.now();
    const old = await workspaceWithRun('old', new Date(now - 100 * DAY));
    await pruneRoot(root, { retentionMs: 90 * DAY, now, audit: new AuditLog() });
    await rm(path.join(old.runDir, 'cluster-calls.jsonl'));
    const verdict = await verifyWorkspaceAudit(old.dir);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.problem).toContain('cluster-calls.jsonl was removed after the run');
  });
});
