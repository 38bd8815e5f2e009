import { createHash } from 'node:crypto';
import path from 'node:path';
import { RUNS_DIR, TRIAGE_DIR } from '../shared/triage-dir.js';

// The workspace folder's layout: every file and folder name the daemon reads or writes in a workspace
// (`<root>/<folder>/`), in its run bundles and under the workspaces root's `.triage/`, named once here.
// A workspace holds the producer's incident (incident.json, its permissions, alerts.json), the agent's
// report (output/), and the daemon's own folder `.triage/` (state, lease, audit log, feedback, run
// bundles, notification outbox); the root's `.triage/` holds what is shared by every incident and every
// replica. Node builtins only, so every layer can import it; reading and writing each record goes
// through the other modules of src/workspace/.

/** The daemon's folder inside each workspace and inside the workspaces root (named in shared/, for util's file modes). */
export { TRIAGE_DIR };

/** `.triage/runs`, relative: the run bundles' parent, one of the daemon-owned paths of a workspace. */
export const RUNS_RELATIVE = `${TRIAGE_DIR}/${RUNS_DIR}`;

// ---- Files a producer writes into a workspace

/** The incident, as the producer wrote it (src/workspace/incident.ts reads it). */
export const INCIDENT_FILE = 'incident.json';
/** What the daemon's identity may do in the cluster, when the producer probed it. */
export const PERMISSIONS_FILE = 'incident_cluster_permissions.json';
/** The alerts behind an incident HTTP intake made (src/workspace/alerts.ts). */
export const ALERTS_FILE = 'alerts.json';

// ---- The agent's report

/** The folder of a workspace the agent writes its report into. */
export const OUTPUT_DIR = 'output';
/** The report's name inside OUTPUT_DIR. */
export const REPORT_FILE = 'investigation.md';
/** `output/investigation.md`, relative to the workspace (where every engine's layout puts it). */
export const REPORT_REL = path.join(OUTPUT_DIR, REPORT_FILE);

// ---- Files in a workspace's `.triage/`

export const STATE_FILE = 'state.json';
export const LEASE_FILE = 'lease';
export const AUDIT_FILE = 'audit.jsonl';
export const AUDIT_HEAD_FILE = 'audit.head';
export const FEEDBACK_FILE = 'feedback.json';

/** Daemon-owned paths of a workspace that must never be symlinks. */
export const WORKSPACE_OWN_PATHS = [TRIAGE_DIR, RUNS_RELATIVE, OUTPUT_DIR] as const;

// ---- A run bundle: `<workspace>/.triage/runs/<run-id>/`

/** File names inside a run bundle (prompt-sent.md, context.json and result.json are fixed names other tools read). */
export const RUN_FILES = {
  promptSent: 'prompt-sent.md',
  context: 'context.json',
  /** How the run ended (src/workspace/run-record.ts). */
  result: 'result.json',
  /** What was launched, for a daemon that adopts the run (src/workspace/run-record.ts). */
  manifest: 'manifest.json',
  /** The two prompt parts exactly as sent, as JSON (prompt-sent.md renders them for people). */
  promptParts: 'prompt.json',
  triageLog: 'triage/output.log',
  triageDir: 'triage',
  agentStdout: 'agent-stdout.log',
  agentStderr: 'agent-stderr.log',
  invocation: 'invocation.json',
  /** Files the adapter hands to the agent (system prompt file, CLI settings), mounted read-only. */
  agentFiles: 'agent-files',
  /**
   * The one folder of the run the agent may write ($TRIAGE_NOTES_DIR): the rest of the run folder is
   * read-only to it, so the daemon's records there cannot be changed whatever uid the agent runs as.
   */
  agentNotes: 'agent-notes',
  /** The kubectl broker's record of every call (the guard's decisions, exit codes, sizes). */
  clusterCalls: 'cluster-calls.jsonl',
  /** The output of each allowed call, for the evidence check and promoted eval cases. */
  clusterOutputs: 'cluster-outputs.jsonl',
  /** The model gateway's record of every model call. */
  modelCalls: 'model-calls.jsonl',
  /** The kubectl broker's socket for the agent, while it runs. */
  brokerSocket: 'kubectl.sock',
  /** The kubectl broker's socket for the triage script. */
  triageBrokerSocket: 'triage-kubectl.sock',
  /** The agent's kubectl guard (its client, on the agent's PATH first). */
  guard: 'kubectl-guard',
  /** The triage script's kubectl guard. */
  triageGuard: 'triage-kubectl-guard',
  /** The model gateway's socket for the agent's bridge, while it runs. */
  gatewaySocket: 'model.sock',
  /** The container's bridge to the model gateway. */
  gatewayBridge: 'gateway-bridge',
  /** Past investigations' index and report copies (src/context/previous.ts). */
  previous: 'previous',
  /** The index of past investigations inside `previous/`. */
  previousIndex: 'previous/index.md',
  /** An alert's expression evaluated when the run began, in full (the prompt's <alert_metrics> is bounded); the agent reads it. */
  alertMetricsDir: 'alert-metrics',
  alertMetrics: 'alert-metrics/values.md',
} as const;

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

/** `<workspace>/.triage/feedback.lock`: held while feedback.json is replaced (serialises its writers). */
export const feedbackLockPath = (workspaceDir: string): string =>
  path.join(triageDir(workspaceDir), 'feedback.lock');

/** `<workspace>/output/investigation.md`: the agent's report. */
export const reportPath = (workspaceDir: string): string => path.join(workspaceDir, REPORT_REL);

/** `<workspace>/incident.json`. */
export const incidentPath = (workspaceDir: string): string => path.join(workspaceDir, INCIDENT_FILE);

/** `<workspace>/alerts.json`. */
export const alertsPath = (workspaceDir: string): string => path.join(workspaceDir, ALERTS_FILE);

/** `<workspace>/.triage/runs`: the run bundles. */
export const runsDir = (workspaceDir: string): string => path.join(workspaceDir, RUNS_RELATIVE);

/** `<workspace>/.triage/runs/<run-id>`: one run's bundle. */
export const runDirOf = (workspaceDir: string, runId: string): string =>
  path.join(runsDir(workspaceDir), runId);

/** The workspace a run bundle `<workspace>/.triage/runs/<run-id>` belongs to, or undefined for any other folder. */
export function workspaceOfRunDir(dir: string): string | undefined {
  const runs = path.dirname(dir);
  const triage = path.dirname(runs);
  return path.basename(runs) === RUNS_DIR && path.basename(triage) === TRIAGE_DIR
    ? path.dirname(triage)
    : undefined;
}

/** `.triage/runs/<run-id>` relative to the workspace, `/`-separated (the agent's view, messages). */
export const runDirRelative = (runId: string): string => `${RUNS_RELATIVE}/${runId}`;

/** `<out>/.triage/replay`: what a replay keeps of its source (the source record, the triage input). */
export const replayDir = (outDir: string): string => path.join(triageDir(outDir), 'replay');

/** `<out>/.triage/replay/source.json`: what was replayed, with which choices. */
export const replaySourcePath = (outDir: string): string => path.join(replayDir(outDir), 'source.json');

/** `<out>/.triage/replay/triage-input`: the saved triage output a replay reuses, with its products. */
export const replayTriageInputDir = (outDir: string): string => path.join(replayDir(outDir), 'triage-input');

// ---- The workspaces root: `<root>/.triage/…`

/** `<root>/.triage/dedup`: the dedup window, shared by replicas and kept across restarts. */
export const dedupDir = (root: string): string => path.join(triageDir(root), 'dedup');

/** `<root>/.triage/intake`: HTTP intake's delivery keys, storms, locks and temp folders. */
export const intakeDir = (root: string): string => path.join(triageDir(root), 'intake');

/** `<root>/.triage/unsafe`: states (and the audit log) of folders that cannot be written into. */
export const unsafeStateDir = (root: string): string => path.join(triageDir(root), 'unsafe');

/**
 * `<root>/.triage/unsafe/<name>-<hash>.state.json`: the state of a folder that cannot be written into
 * safely (it escapes the root, or a daemon-owned path in it is a link); long or odd names still map
 * to one short, safe file name.
 */
export const unsafeStatePath = (root: string, name: string): string =>
  path.join(
    unsafeStateDir(root),
    `${encodeURIComponent(name).slice(0, 100)}-${createHash('sha256').update(name).digest('hex').slice(0, 12)}.state.json`,
  );

/** `<root>/.triage/model-spend.json`: the model spend of the current UTC day (`budget.daily_usd`). */
export const modelSpendPath = (root: string): string => path.join(triageDir(root), 'model-spend.json');

/** The audit chain's key under the workspaces root (audit.key_file moves it; src/audit/key.ts reads it). */
export const AUDIT_KEY_FILE = 'audit.key';

/** `<root>/.triage/audit.key`: the default place of the audit chain's key. */
export const auditKeyPath = (root: string): string => path.join(triageDir(root), AUDIT_KEY_FILE);

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
