import { lstat, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { AUDIT_FILE, isRunId, RUN_FILES, runDirOf, triageDir as triageDirOf } from '../workspace/layout.js';
import { assertNoSymlinkBelow } from '../util/safe-path.js';
import { folderDigests } from './digest.js';
import { type AuditEntry, type AuditLog } from './log.js';

// Retention (memory.retention): what a run recorded of the cluster and of past investigations — the
// outputs of its cluster calls and the copies of earlier reports — is removed once the run finished
// longer ago than the retention. The audit trail stays whole: a `pruned` event records each removed
// file with the sha256 it had, and `audit verify` accepts exactly those files as gone. The state, the
// call log, result.json and the report are kept.

/** Run-bundle files (and folders) removed at the end of retention. */
export const PRUNABLE = [RUN_FILES.clusterOutputs, RUN_FILES.previous] as const;

export interface PruneResult {
  runs: number;
  files: number;
}

interface FinishedRun {
  runId: string;
  finishedAt: number;
}

async function finishedRuns(triageDir: string): Promise<{ finished: FinishedRun[]; pruned: Set<string> }> {
  const text = await readFile(path.join(triageDir, AUDIT_FILE), 'utf8').catch(() => '');
  const finished = new Map<string, number>();
  const pruned = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line) continue;
    let entry: AuditEntry | null;
    try {
      entry = JSON.parse(line) as AuditEntry | null;
    } catch {
      continue;
    }
    if (typeof entry !== 'object' || entry === null || !isRunId(entry.runId)) continue;
    if (entry.type === 'finished') finished.set(entry.runId, Date.parse(entry.ts));
    if (entry.type === 'pruned' && Array.isArray(entry.files))
      for (const f of entry.files as unknown[]) if (typeof f === 'string') pruned.add(`${entry.runId}/${f}`);
  }
  return { finished: [...finished].map(([runId, finishedAt]) => ({ runId, finishedAt })), pruned };
}

/** Prunes the runs of one workspace that finished more than `retentionMs` before `now`. */
export async function pruneWorkspace(
  workspaceDir: string,
  options: { retentionMs: number; now: number; audit: Pick<AuditLog, 'append'> },
): Promise<PruneResult> {
  const triageDir = triageDirOf(workspaceDir);
  const { finished, pruned } = await finishedRuns(triageDir);
  const result: PruneResult = { runs: 0, files: 0 };
  for (const run of finished) {
    if (!(options.now - run.finishedAt > options.retentionMs)) continue;
    const runDir = runDirOf(workspaceDir, run.runId);
    const digests = await folderDigests(runDir);
    const files = Object.keys(digests).filter(
      (f) => PRUNABLE.some((p) => f === p || f.startsWith(`${p}/`)) && !pruned.has(`${run.runId}/${f}`),
    );
    if (files.length === 0) continue;
    await assertNoSymlinkBelow(workspaceDir, runDir);
    // Recorded first: a crash between the event and the removal leaves files the chain says are gone,
    // which verify accepts either way; never files gone that the chain does not explain.
    await options.audit.append(triageDir, {
      type: 'pruned',
      runId: run.runId,
      files,
      sha256: Object.fromEntries(files.map((f) => [f, digests[f]])),
      reason: `memory.retention: the run finished over ${Math.round(options.retentionMs / 86_400_000)} days ago`,
    });
    for (const p of PRUNABLE) await rm(path.join(runDir, p), { recursive: true, force: true });
    result.runs++;
    result.files += files.length;
  }
  return result;
}

/** Prunes every workspace under `root`; a folder that cannot be pruned is skipped and named. */
export async function pruneRoot(
  root: string,
  options: { retentionMs: number; now: number; audit: Pick<AuditLog, 'append'> },
): Promise<PruneResult & { problems: string[] }> {
  const names = await readdir(root).catch(() => [] as string[]);
  const total = { runs: 0, files: 0, problems: [] as string[] };
  for (const name of names) {
    if (name.startsWith('.')) continue;
    // A folder that is a link is never followed (the daemon keeps such a folder's state aside).
    if (!(await lstat(path.join(root, name)).catch(() => undefined))?.isDirectory()) continue;
    try {
      const r = await pruneWorkspace(path.join(root, name), options);
      total.runs += r.runs;
      total.files += r.files;
    } catch (err) {
      total.problems.push(`${name}: ${(err as Error).message}`);
    }
  }
  return total;
}
