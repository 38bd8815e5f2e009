import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { RUN_FILES, TRIAGE_DIR, runDirOf } from '../audit/bundle.js';
import { AUDIT_FILE, verifyAuditLog, type AuditEntry, type VerifyResult } from '../audit/log.js';
import { promptDigest } from '../context/prepare.js';
import { parsePromptSent } from '../context/prompt.js';

// `audit verify`: the hash chain of audit.jsonl, then each run bundle against what the chain recorded
// about it (the prompt's sha256 at `context_built`, the status at `finished`), so that editing a
// bundle's prompt-sent.md or result.json after the fact is detected too.

export type WorkspaceVerifyResult =
  | { ok: true; entries: number; bundles: number }
  | { ok: false; entries: number; line: number; problem: string };

/** Verifies `<workspace>/.triage/`; line numbers are 1-based lines of audit.jsonl. */
export async function verifyWorkspaceAudit(workspaceDir: string): Promise<WorkspaceVerifyResult> {
  const triageDir = path.join(workspaceDir, TRIAGE_DIR);
  const chain: VerifyResult = await verifyAuditLog(triageDir);
  if (!chain.ok) return chain;
  const lines = (await readFile(path.join(triageDir, AUDIT_FILE), 'utf8'))
    .split('\n')
    .filter((l) => l !== '');
  const entries = lines.map((line) => JSON.parse(line) as AuditEntry);
  // The last `finished` event of each run is the one its result.json describes.
  const lastFinished = new Map<string, number>();
  for (const [i, entry] of entries.entries()) {
    if (entry.type === 'finished' && typeof entry.runId === 'string') lastFinished.set(entry.runId, i);
  }
  const bundles = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    if (typeof entry.runId !== 'string') continue;
    const problem =
      entry.type === 'context_built'
        ? await checkPrompt(workspaceDir, entry)
        : entry.type === 'finished' && lastFinished.get(entry.runId) === i
          ? await checkResult(workspaceDir, entry)
          : undefined;
    if (entry.type === 'context_built') bundles.add(entry.runId);
    if (problem) return { ok: false, entries: lines.length, line: i + 1, problem };
  }
  return { ok: true, entries: lines.length, bundles: bundles.size };
}

async function checkPrompt(workspaceDir: string, entry: AuditEntry): Promise<string | undefined> {
  const recorded = entry.promptSha256;
  if (typeof recorded !== 'string') return undefined;
  const file = path.join(runDirOf(workspaceDir, String(entry.runId)), RUN_FILES.promptSent);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return `run ${String(entry.runId)}: ${file} is missing, but this line records the prompt sent (sha256 ${recorded})`;
  }
  let actual: string;
  try {
    actual = promptDigest(parsePromptSent(text));
  } catch (err) {
    return `run ${String(entry.runId)}: ${file} can no longer be read as a prompt (${(err as Error).message})`;
  }
  if (actual === recorded) return undefined;
  return `run ${String(entry.runId)}: ${file} was changed after the run (its prompt hashes to ${actual}; this line recorded ${recorded})`;
}

/** Compares a run's result.json with the status its last `finished` event recorded. */
async function checkResult(workspaceDir: string, entry: AuditEntry): Promise<string | undefined> {
  const runId = String(entry.runId);
  if (typeof entry.status !== 'string') return undefined;
  const file = path.join(runDirOf(workspaceDir, runId), RUN_FILES.result);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  // A dry run, or a run that failed before its bundle existed, has no result.json.
  if (text === undefined) return undefined;
  let status: unknown;
  try {
    status = (JSON.parse(text) as { status?: unknown }).status;
  } catch {
    return `run ${runId}: ${file} is not valid JSON`;
  }
  if (status === entry.status) return undefined;
  return `run ${runId}: ${file} says status ${JSON.stringify(status)} but this line recorded ${JSON.stringify(entry.status)} (result.json was changed after the run)`;
}
