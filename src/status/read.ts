import { lstat } from 'node:fs/promises';
import path from 'node:path';
import {
  MANIFEST_FILE,
  parseRunManifest,
  parseRunResult,
  RESULT_FILE,
  type RunManifest,
  type RunResult,
} from '../audit/run-record.js';
import { readFeedback, type Feedback } from '../feedback/feedback.js';
import { parseStateText } from '../incident/store.js';
import { inEngine, lastRunEnded } from '../incident/queries.js';
import type { StateFile } from '../incident/types.js';
import { isRunId, runDirOf, statePath } from '../shared/triage-paths.js';
import { unsafeStatePath } from '../incident/unsafe.js';
import { INCIDENT_FILE } from '../intake/read.js';
import { ALERTS_FILE, type AlertsDoc } from '../intake/webhooks/disk.js';
import { readOwnFileBelow, type BoundedRead } from '../util/safe-path.js';
import type { ViewSubject } from './types.js';

// Reads what status shows of a workspace — state.json, the latest run's result.json (or, while it
// runs, its manifest) — never through a symbolic link anywhere below the root, and never throwing for
// a hostile or half-written folder: what cannot be read is left out, with the reason.

/** The report, relative to its workspace (where every engine's layout puts it). */
export const REPORT_REL = path.join('output', 'investigation.md');
const STATE_MAX_BYTES = 1 << 20;
const RECORD_MAX_BYTES = 4 << 20;
/** alerts.json holds at most intake.max_alerts_per_incident alerts; a bigger file is not read. */
const ALERTS_MAX_BYTES = 8 << 20;

/** States whose latest run has not ended: their result fields come from progress, not result.json. */
/** Why `name` cannot be an incident folder under the root (one plain path segment), or undefined. */
export function folderNameProblem(name: string): string | undefined {
  if (
    name === '' ||
    name === '.' ||
    name === '..' ||
    name.startsWith('.') ||
    name.length > 255 ||
    /[/\\\0]/.test(name)
  )
    return `${JSON.stringify(name.slice(0, 300))} is not an incident folder name: expected one path segment that does not start with "."`;
  return undefined;
}

/** Everything status knows of one workspace, as read from disk. */
export interface IncidentFacts {
  folder: string;
  dir: string;
  state: StateFile;
  /** incident.json's mtime (epoch ms), or when the state was written when it is missing. */
  arrivedAtMs: number;
  /** The latest ended run's result.json. */
  result?: RunResult;
  /** Why the latest run's result.json could not be used. */
  resultProblem?: string;
  /** The latest run's manifest.json, while it runs. */
  manifest?: RunManifest;
  /** The report exists as a regular file. */
  reportExists: boolean;
  /** The folder cannot be written into safely: its state is kept under `<root>/.triage/unsafe/`. */
  unsafe?: true;
  /** What responders said of the latest answer. */
  feedback?: Feedback;
  /** When every alert behind the incident resolved, from alerts.json (also after the run finished). */
  alertsResolvedAt?: string;
  /** What broke and where, from incident.json, when it reads as an incident. */
  subject?: ViewSubject;
}

const INCIDENT_MAX_BYTES = 1 << 20;
/** Longest title shown; an alert's summary can be a paragraph. */
const TITLE_MAX = 120;

const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;

/**
 * incident.json's cluster, namespace, resource, faultType and severity, and a title: the alert's
 * summary (context.summary) when it has one, else "faultType kind/name". Read loosely: the daemon
 * validates incident.json before it runs; status shows what it can of any file.
 */
export function subjectOf(text: string): ViewSubject | undefined {
  let doc: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    doc = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const resource = (doc.resource && typeof doc.resource === 'object' ? doc.resource : {}) as Record<
    string,
    unknown
  >;
  const context = (doc.context && typeof doc.context === 'object' ? doc.context : {}) as Record<
    string,
    unknown
  >;
  const kind = str(resource.kind) ?? '-';
  const name = str(resource.name) ?? '-';
  const faultType = str(doc.faultType) ?? '-';
  const summary = str(context.summary)?.replace(/\s+/g, ' ');
  const title = summary ?? `${faultType} ${kind}/${name}`;
  return {
    title: title.length > TITLE_MAX ? `${title.slice(0, TITLE_MAX - 1)}…` : title,
    cluster: str(doc.cluster) ?? '-',
    namespace: str(doc.namespace) ?? str(resource.namespace) ?? '-',
    resource: { kind, name },
    faultType,
    severity: str(doc.severity) ?? '-',
  };
}

/** alerts.json's `resolvedAt` (set once every alert resolved), or undefined. */
function alertsResolvedAt(text: string): string | undefined {
  try {
    const doc = JSON.parse(text) as Partial<AlertsDoc> | null;
    const at = doc?.resolvedAt;
    return typeof at === 'string' && !Number.isNaN(Date.parse(at)) ? at : undefined;
  } catch {
    return undefined;
  }
}

/** A file of the root as JSON text, or why not (`missing` when absent). */
async function readBelow(root: string, file: string, maxBytes: number): Promise<BoundedRead> {
  try {
    return await readOwnFileBelow(root, file, maxBytes);
  } catch (err) {
    return {
      kind: 'refused',
      reason: `${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
}

const isRegularFile = (file: string): Promise<boolean> =>
  lstat(file).then(
    (s) => s.isFile(),
    () => false,
  );

/** The latest run's folder, when the state names one with a safe id. */
export function latestRunDir(dir: string, state: StateFile): string | undefined {
  const id = state.runs.at(-1)?.id;
  return isRunId(id) ? runDirOf(dir, id) : undefined;
}

/**
 * What status shows of `<root>/<folder>`; undefined when the folder holds no incident state (not taken
 * in yet, or not a folder). A folder that is a symlink, or whose `.triage` is one, or whose state.json
 * is damaged, shows the state the daemon keeps for it under `<root>/.triage/unsafe/`.
 */
export async function readIncidentFacts(root: string, folder: string): Promise<IncidentFacts | undefined> {
  if (folderNameProblem(folder)) return undefined;
  const dir = path.join(root, folder);
  const own = await readBelow(root, statePath(dir), STATE_MAX_BYTES);
  if (own.kind === 'refused') return readUnsafe(root, folder, dir);
  if (own.kind === 'missing') return undefined;
  const state = parseStateText(own.text);
  // Damaged: the daemon rejects the incident and keeps that state under the root (see the inspector).
  if (!state) return readUnsafe(root, folder, dir);
  const incident = await lstat(path.join(dir, INCIDENT_FILE)).catch(() => undefined);
  const facts: IncidentFacts = {
    folder,
    dir,
    state,
    arrivedAtMs: incident?.mtimeMs ?? (Date.parse(state.updatedAt) || 0),
    reportExists: false,
  };
  const incidentText = await readBelow(root, path.join(dir, INCIDENT_FILE), INCIDENT_MAX_BYTES);
  if (incidentText.kind === 'ok') {
    const subject = subjectOf(incidentText.text);
    if (subject) facts.subject = subject;
  }
  const alerts = await readBelow(root, path.join(dir, ALERTS_FILE), ALERTS_MAX_BYTES);
  if (alerts.kind === 'ok') {
    const resolvedAt = alertsResolvedAt(alerts.text);
    if (resolvedAt) facts.alertsResolvedAt = resolvedAt;
  }
  const runDir = latestRunDir(dir, state);
  if (!runDir) return facts;
  if (lastRunEnded(state.state)) {
    const read = await readRecordBelow(root, path.join(runDir, RESULT_FILE), parseRunResult);
    if (read.ok) facts.result = read.value;
    else if (read.problem) facts.resultProblem = read.problem;
    facts.reportExists =
      (facts.result?.report.bytes ?? 0) > 0 && (await isRegularFile(path.join(dir, REPORT_REL)));
    const feedback = await readFeedback(dir);
    if (feedback) facts.feedback = feedback;
  } else if (inEngine(state.state)) {
    const read = await readRecordBelow(root, path.join(runDir, MANIFEST_FILE), parseRunManifest);
    if (read.ok) facts.manifest = read.value;
  }
  return facts;
}

/** A run record below the root; a missing file is no problem (`problem` undefined). */
async function readRecordBelow<T>(
  root: string,
  file: string,
  parse: (text: string, file: string) => { ok: true; value: T } | { ok: false; problem: string },
): Promise<{ ok: true; value: T } | { ok: false; problem?: string }> {
  const read = await readBelow(root, file, RECORD_MAX_BYTES);
  if (read.kind === 'missing') return { ok: false };
  if (read.kind === 'refused') return { ok: false, problem: read.reason };
  return parse(read.text, path.relative(root, file));
}

async function readUnsafe(root: string, folder: string, dir: string): Promise<IncidentFacts | undefined> {
  const read = await readBelow(root, unsafeStatePath(root, folder), STATE_MAX_BYTES);
  const state = read.kind === 'ok' ? parseStateText(read.text) : undefined;
  if (!state) return undefined;
  return {
    folder,
    dir,
    state,
    arrivedAtMs: Date.parse(state.updatedAt) || 0,
    reportExists: false,
    unsafe: true,
  };
}
