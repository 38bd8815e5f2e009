import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileDigest, folderDigests, stateDigest } from '../audit/digest.js';
import { RUN_FILES, STATE_FILE, TRIAGE_DIR, auditLogPath, runDirOf, triageDir } from '../workspace/layout.js';
import { verifyAuditLog, type AuditEntry, type ChainKeying, type VerifyOptions } from '../audit/log.js';
import { promptDigest } from '../context/build.js';
import { readPromptParts, readRunResult } from '../workspace/run-record.js';
import { readState } from '../workspace/state.js';

// `audit verify`: the hash chain of audit.jsonl (keyed with an HMAC when configured), then what the chain
// recorded about the files: every file of each run bundle and the report (the `finished` event), and the
// state record (the last event carrying `stateSha256`). What each mode detects: docs/architecture.md.

export type WorkspaceVerifyResult =
  | { ok: true; entries: number; bundles: number; keyed?: ChainKeying }
  | { ok: false; entries: number; line: number; problem: string };

/** Verifies `<workspace>/.triage/`; line numbers are 1-based lines of audit.jsonl. */
export async function verifyWorkspaceAudit(
  workspaceDir: string,
  options: VerifyOptions = {},
): Promise<WorkspaceVerifyResult> {
  const chain = await verifyAuditLog(triageDir(workspaceDir), options);
  if (!chain.ok) return chain;
  const lines = (await readFile(auditLogPath(workspaceDir), 'utf8')).split('\n').filter((l) => l !== '');
  const entries = lines.map((line) => JSON.parse(line) as AuditEntry);
  const fail = (i: number, problem: string): WorkspaceVerifyResult => ({
    ok: false,
    entries: lines.length,
    line: i + 1,
    problem,
  });
  // The last `finished` event of each run is the one its bundle matches; the last report recorded is the
  // one in output/ now (a later run writes it again).
  const lastFinished = new Map<string, number>();
  let lastReport: number | undefined;
  let lastState: number | undefined;
  // Files retention removed (`pruned` events): gone on purpose, with the chain saying so.
  const pruned = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    if (entry.type === 'pruned' && typeof entry.runId === 'string' && Array.isArray(entry.files))
      for (const f of entry.files as unknown[]) pruned.add(`${entry.runId}/${String(f)}`);
    if (entry.type === 'finished' && typeof entry.runId === 'string') lastFinished.set(entry.runId, i);
    if (entry.type === 'finished' && entry.report) lastReport = i;
    if (typeof entry.stateSha256 === 'string') lastState = i;
  }
  const bundles = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    if (typeof entry.runId !== 'string') continue;
    if (entry.type === 'context_built') bundles.add(entry.runId);
    const problem =
      entry.type === 'context_built'
        ? await checkPrompt(workspaceDir, entry)
        : entry.type === 'finished' && lastFinished.get(entry.runId) === i
          ? ((await checkFiles(workspaceDir, entry, pruned)) ?? (await checkResult(workspaceDir, entry)))
          : undefined;
    if (problem) return fail(i, problem);
  }
  if (lastReport !== undefined) {
    const problem = await checkReport(workspaceDir, entries[lastReport] as AuditEntry);
    if (problem) return fail(lastReport, problem);
  }
  if (lastState !== undefined) {
    const recorded = (entries[lastState] as AuditEntry).stateSha256;
    const state = await readState(workspaceDir);
    if (!state)
      return fail(
        lastState,
        `${TRIAGE_DIR}/${STATE_FILE} is missing or unreadable, but this line records it (sha256 ${String(recorded)})`,
      );
    if (stateDigest(state) !== recorded)
      return fail(
        lastState,
        `${TRIAGE_DIR}/${STATE_FILE} was changed after this line recorded it (its content no longer matches sha256 ${String(recorded)})`,
      );
  }
  return {
    ok: true,
    entries: lines.length,
    bundles: bundles.size,
    ...(chain.keyed ? { keyed: chain.keyed } : {}),
  };
}

/** Every file the run wrote, as the `finished` event recorded it: changed, removed or added since. */
async function checkFiles(
  workspaceDir: string,
  entry: AuditEntry,
  pruned: ReadonlySet<string>,
): Promise<string | undefined> {
  const recorded = entry.files as Record<string, string> | undefined;
  if (!recorded || typeof recorded !== 'object') return undefined;
  const runDir = runDirOf(workspaceDir, String(entry.runId));
  const now = await folderDigests(runDir);
  for (const [file, sha] of Object.entries(recorded)) {
    if (now[file] === undefined) {
      if (pruned.has(`${String(entry.runId)}/${file}`)) continue;
      return `run ${String(entry.runId)}: ${file} was removed after the run (this line records it)`;
    }
    if (now[file] !== sha)
      return `run ${String(entry.runId)}: ${file} was changed after the run (its sha256 no longer matches this line)`;
  }
  const added = Object.keys(now).filter((f) => recorded[f] === undefined);
  if (added.length > 0)
    return `run ${String(entry.runId)}: ${added.join(', ')} appeared in the run bundle after the run ended`;
  return undefined;
}

async function checkReport(workspaceDir: string, entry: AuditEntry): Promise<string | undefined> {
  const report = entry.report as { path?: unknown; sha256?: unknown } | undefined;
  if (typeof report?.path !== 'string' || typeof report.sha256 !== 'string') return undefined;
  const file = path.join(workspaceDir, report.path);
  const actual = await fileDigest(file).catch(() => undefined);
  if (actual === undefined)
    return `the report ${report.path} is missing, but this line records it (sha256 ${report.sha256})`;
  if (actual !== report.sha256)
    return `the report ${report.path} was changed after the run (its sha256 no longer matches this line)`;
  return undefined;
}

/** The prompt the run recorded at `context_built` against the bundle's prompt.json. */
async function checkPrompt(workspaceDir: string, entry: AuditEntry): Promise<string | undefined> {
  const recorded = entry.promptSha256;
  if (typeof recorded !== 'string') return undefined;
  const runDir = runDirOf(workspaceDir, String(entry.runId));
  const file = path.join(runDir, RUN_FILES.promptParts);
  const parts = await readPromptParts(runDir, workspaceDir);
  if (!parts.ok && parts.missing)
    return `run ${String(entry.runId)}: ${file} is missing, but this line records the prompt sent (sha256 ${recorded})`;
  if (!parts.ok)
    return `run ${String(entry.runId)}: ${file} can no longer be read as a prompt (${parts.problem})`;
  const actual = promptDigest(parts.value);
  if (actual === recorded) return undefined;
  return `run ${String(entry.runId)}: ${file} was changed after the run (its prompt hashes to ${actual}; this line recorded ${recorded})`;
}

/** Compares a run's result.json with the status its last `finished` event recorded. */
async function checkResult(workspaceDir: string, entry: AuditEntry): Promise<string | undefined> {
  const runId = String(entry.runId);
  if (typeof entry.status !== 'string') return undefined;
  const runDir = runDirOf(workspaceDir, runId);
  const file = path.join(runDir, RUN_FILES.result);
  const read = await readRunResult(runDir, workspaceDir);
  // A dry run, or a run that failed before its bundle existed, has no result.json.
  if (!read.ok && read.missing) return undefined;
  if (!read.ok) return `run ${runId}: ${read.problem} (result.json was changed after the run)`;
  if (read.value.status === entry.status) return undefined;
  return `run ${runId}: ${file} says status ${JSON.stringify(read.value.status)} but this line recorded ${JSON.stringify(entry.status)} (result.json was changed after the run)`;
}
