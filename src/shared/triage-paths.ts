import path from 'node:path';

// Every path the daemon keeps under a `.triage/` folder, in one place. A workspace's `.triage/` holds
// its incident (state, lease, audit log, feedback, run bundles, notification outbox); the workspaces
// root's `.triage/` holds what is shared by every incident and every replica (the dedup window, HTTP
// intake's records, the states of folders that cannot be written into, the sinks notified so far).
// What is inside one run bundle is `audit/bundle.ts`'s (`RUN_FILES`). Node builtins only, so every
// layer can import it.

/** The daemon's folder inside each workspace and inside the workspaces root. */
export const TRIAGE_DIR = '.triage';

/** `.triage/runs`, relative: the run bundles' parent, one of the daemon-owned paths of a workspace. */
export const RUNS_RELATIVE = `${TRIAGE_DIR}/runs`;

export const STATE_FILE = 'state.json';
export const LEASE_FILE = 'lease';
export const AUDIT_FILE = 'audit.jsonl';
export const AUDIT_HEAD_FILE = 'audit.head';
export const FEEDBACK_FILE = 'feedback.json';

// ---- A workspace: `<workspace>/.triage/…`

/** `<dir>/.triage`: a workspace's (or the root's) daemon folder; the audit log lives in it. */
export const triageDir = (dir: string): string => path.join(dir, TRIAGE_DIR);

/** `<workspace>/.triage/state.json`: the incident record, written only by `IncidentStore`. */
export const statePath = (workspaceDir: string): string => path.join(triageDir(workspaceDir), STATE_FILE);

/** `<workspace>/.triage/lease`: the claim on the incident. */
export const leasePath = (workspaceDir: string): string => path.join(triageDir(workspaceDir), LEASE_FILE);

/** `<workspace>/.triage/audit.jsonl`: the hash-chained audit log. */
export const auditLogPath = (workspaceDir: string): string => path.join(triageDir(workspaceDir), AUDIT_FILE);

/** `<workspace>/.triage/feedback.json`: the responders' current verdict. */
export const feedbackPath = (workspaceDir: string): string =>
  path.join(triageDir(workspaceDir), FEEDBACK_FILE);

/** `<workspace>/.triage/outbox`: one file per notification delivery. */
export const outboxDir = (workspaceDir: string): string => path.join(triageDir(workspaceDir), 'outbox');

/** `<workspace>/.triage/runs`: the run bundles. */
export const runsDir = (workspaceDir: string): string => path.join(workspaceDir, RUNS_RELATIVE);

/** `<workspace>/.triage/runs/<run-id>`: one run's bundle. */
export const runDirOf = (workspaceDir: string, runId: string): string =>
  path.join(runsDir(workspaceDir), runId);

/** Whether `dir` is a `.triage/` folder or the `runs/` folder of one (the folders others pass through). */
export function isTriageOrRunsDir(dir: string): boolean {
  const name = path.basename(dir);
  return name === TRIAGE_DIR || (name === 'runs' && path.basename(path.dirname(dir)) === TRIAGE_DIR);
}

/** The workspace a run bundle `<workspace>/.triage/runs/<run-id>` belongs to, or undefined for any other folder. */
export function workspaceOfRunDir(dir: string): string | undefined {
  const runs = path.dirname(dir);
  const triage = path.dirname(runs);
  return path.basename(runs) === 'runs' && path.basename(triage) === TRIAGE_DIR
    ? path.dirname(triage)
    : undefined;
}

/** `.triage/runs/<run-id>` relative to the workspace, `/`-separated (the agent's view, messages). */
export const runDirRelative = (runId: string): string => `${RUNS_RELATIVE}/${runId}`;

/** `<out>/.triage/replay`: what a replay keeps of its source (the source record, the triage input). */
export const replayDir = (outDir: string): string => path.join(triageDir(outDir), 'replay');

// ---- The workspaces root: `<root>/.triage/…`

/** `<root>/.triage/dedup`: the dedup window, shared by replicas and kept across restarts. */
export const dedupDir = (root: string): string => path.join(triageDir(root), 'dedup');

/** `<root>/.triage/intake`: HTTP intake's delivery keys, storms, locks and temp folders. */
export const intakeDir = (root: string): string => path.join(triageDir(root), 'intake');

/** `<root>/.triage/unsafe`: states (and the audit log) of folders that cannot be written into. */
export const unsafeStateDir = (root: string): string => path.join(triageDir(root), 'unsafe');

/** `<root>/.triage/model-spend.json`: the model spend of the current UTC day (`budget.daily_usd`). */
export const modelSpendPath = (root: string): string => path.join(triageDir(root), 'model-spend.json');

/** `<root>/.triage/notify-sinks.json`: when each configured notification sink was first seen. */
export const sinkHistoryPath = (root: string): string => path.join(triageDir(root), 'notify-sinks.json');

/**
 * Run ids as the daemon makes them. A run id read from a file (an audit line, a state file) that does
 * not look like one is never joined into a path: `../..` would name a folder outside the runs.
 */
export const isRunId = (value: unknown): value is string => isPlainName(value, 128);

/**
 * A name the daemon made and may join into a path: letters, digits, `.`, `_` and `-`, starting with a
 * letter or digit, at most `maxLength` characters. So never `..`, a separator or a hidden file.
 */
export function isPlainName(value: unknown, maxLength: number): value is string {
  return typeof value === 'string' && value.length <= maxLength && /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value);
}
