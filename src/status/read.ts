import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { inEngine, lastRunEnded } from '../incident/queries.js';
import { readAlertsRecord } from '../workspace/alerts.js';
import { readFeedback, type Feedback } from '../workspace/feedback.js';
import { readIncidentLoosely } from '../workspace/incident.js';
import { incidentPath, isRunId, runDirOf, statePath, unsafeStatePath } from '../workspace/layout.js';
import { reportIsFile } from '../workspace/report.js';
import {
  readRunManifest,
  readRunResult,
  type RecordRead,
  type RunManifest,
  type RunResult,
} from '../workspace/run-record.js';
import { readStateBelow, type StateFile } from '../workspace/state.js';
import type { IncidentWorkload } from '../workspace/workloads.js';
import type { ViewSubject, ViewWorkload } from './types.js';

// Reads what status shows of a workspace — state.json, the latest run's result.json (or, while it
// runs, its manifest) — through src/workspace/'s readers: never through a symbolic link anywhere below
// the root, and never throwing for a hostile or half-written folder: what cannot be read is left out,
// with the reason.

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

/** Longest title shown; an alert's summary can be a paragraph. */
const TITLE_MAX = 120;

const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;

/** Most workloads a view lists (a storm of hundreds lists this many and counts the rest). */
export const VIEW_WORKLOADS = 50;

const objectAt = (doc: Record<string, unknown>, key: string): Record<string, unknown> | undefined => {
  const value = doc[key];
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
};

/** alerts.json's workloads, else incident.json's workload (or its resource) alone, uncounted. */
function workloadsOf(
  doc: Record<string, unknown>,
  recorded: readonly IncidentWorkload[] | undefined,
): { workloads: ViewWorkload[]; moreWorkloads: number } {
  if (recorded && recorded.length > 0)
    return {
      workloads: recorded.slice(0, VIEW_WORKLOADS).map((w) => ({
        kind: w.kind,
        name: w.name,
        namespace: w.namespace ?? null,
        alerts: w.alerts,
      })),
      moreWorkloads: Math.max(0, recorded.length - VIEW_WORKLOADS),
    };
  const own = objectAt(doc, 'workload') ?? objectAt(doc, 'resource') ?? {};
  const kind = str(own.kind);
  const name = str(own.name);
  if (!kind || !name) return { workloads: [], moreWorkloads: 0 };
  const namespace = str(own.namespace) ?? (kind === 'Node' ? undefined : str(doc.namespace));
  return { workloads: [{ kind, name, namespace: namespace ?? null, alerts: null }], moreWorkloads: 0 };
}

/**
 * incident.json's cluster, namespace, resource, faultType and severity, a title (the alert's summary,
 * context.summary, when it has one, else "faultType kind/name") and the workloads behind it
 * (alerts.json's when given). Read loosely: the daemon validates incident.json before it runs; status
 * shows what it can of any file.
 */
export function subjectOf(doc: Record<string, unknown>, recorded?: readonly IncidentWorkload[]): ViewSubject {
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
    ...workloadsOf(doc, recorded),
  };
}

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
  const own = await readStateBelow(root, statePath(dir));
  if (own.kind === 'missing') return undefined;
  // Refused or damaged: the daemon rejects the incident and keeps that state under the root (see the inspector).
  if (own.kind === 'refused') return readUnsafe(root, folder, dir);
  const { state } = own;
  const arrived = await lstat(incidentPath(dir)).catch(() => undefined);
  const facts: IncidentFacts = {
    folder,
    dir,
    state,
    arrivedAtMs: arrived?.mtimeMs ?? (Date.parse(state.updatedAt) || 0),
    reportExists: false,
  };
  const incident = await readIncidentLoosely(root, dir);
  const alerts = await readAlertsRecord(dir, root);
  if (incident) facts.subject = subjectOf(incident.doc, alerts?.workloads);
  if (alerts?.resolvedAt) facts.alertsResolvedAt = alerts.resolvedAt;
  const runDir = latestRunDir(dir, state);
  if (!runDir) return facts;
  if (lastRunEnded(state.state)) {
    const read = withoutMissing(await readRunResult(runDir, root));
    if (read.ok) facts.result = read.value;
    else if (read.problem) facts.resultProblem = read.problem;
    facts.reportExists = (facts.result?.report.bytes ?? 0) > 0 && (await reportIsFile(dir));
    const feedback = await readFeedback(dir);
    if (feedback) facts.feedback = feedback;
  } else if (inEngine(state.state)) {
    const read = await readRunManifest(runDir, root);
    if (read.ok) facts.manifest = read.value;
  }
  return facts;
}

/** A run record read back; a missing file is no problem (`problem` undefined). */
const withoutMissing = <T>(read: RecordRead<T>): { ok: true; value: T } | { ok: false; problem?: string } =>
  read.ok || !read.missing ? read : { ok: false };

async function readUnsafe(root: string, folder: string, dir: string): Promise<IncidentFacts | undefined> {
  const read = await readStateBelow(root, unsafeStatePath(root, folder));
  if (read.kind !== 'ok') return undefined;
  const { state } = read;
  return {
    folder,
    dir,
    state,
    arrivedAtMs: Date.parse(state.updatedAt) || 0,
    reportExists: false,
    unsafe: true,
  };
}
