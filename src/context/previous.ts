import { statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { hasAnswer, isFinal } from '../incident/queries.js';
import { Limiter } from '../util/limiter.js';
import { readFeedback, type Feedback } from '../workspace/feedback.js';
import { readIncidentLoosely, type Incident } from '../workspace/incident.js';
import { isRunId, reportPath, runDirOf, statePath } from '../workspace/layout.js';
import { readRunResult } from '../workspace/run-record.js';
import { readStateBelow, type StateFile } from '../workspace/state.js';
import { escapeTextContent, wrapSection } from './sections.js';

// Past investigations in reach: earlier incidents under the same root for the same cluster and
// workload (or the same fault type in the same namespace) that ended with an answer, ranked by what
// responders said of them (confirmed causes first, then unrated, answers rated wrong last; newest
// first within each). The prompt lists them as a short index — one line each, with the path of a copy
// of the report the agent can read on demand — and tells the agent they are hypotheses to check.

/** Id under which the index is degraded by the budget (to one line naming the index file). */
export const PREVIOUS_DEGRADE_ID = '@previous_investigations';
/** A copied report is cut at this size (the agent reads it on demand; a huge one says so). */
export const REPORT_COPY_MAX_BYTES = 256 * 1024;
const CAUSE_CHARS = 90;
/**
 * The newest related investigations that are ranked (and whose ratings are read): a workload that
 * fires again and again would otherwise make every run read and sort every one of its past answers
 * (a quarter of a 7,000-incident root took ~180 ms of the event loop per run).
 */
export const RANKED_POOL = 200;

export interface PreviousInvestigation {
  folder: string;
  incidentId: string;
  /** When its run finished (ISO-8601). */
  finishedAt: string;
  /** Why it is listed: the same workload, or the same fault type in the namespace. */
  match: 'workload' | 'fault';
  faultType: string;
  /** The one-line cause: the responder's when they gave one, else the agent's answer. */
  cause: string;
  /** The evidence verdict of its run (grounded answers), when recorded. */
  evidence?: string;
  feedback?: Pick<Feedback, 'verdict' | 'cause'>;
  /** The report on the daemon's host. */
  reportPath: string;
}

/** What is kept of an answered folder: only the fields the ranking and the index line use, so the
 * cache stays small however many incidents the root holds (not the whole state and run record). */
interface Candidate {
  folder: string;
  dir: string;
  incidentId: string;
  finishedAt: string;
  /** `finishedAt` as a number, parsed once when read. */
  finishedMs: number;
  answer: string;
  evidence?: string;
  incident: Pick<Incident, 'cluster' | 'namespace' | 'faultType' | 'resource'>;
  /** The workload key (`workloadOf`), built once when read. */
  workload: string;
}

/** What is read of a folder, kept while its state.json is unchanged (most folders never change again).
 * Keyed by root, then folder; a folder that leaves the root (pruned, removed) leaves the cache. */
interface Cached {
  mtimeMs: number;
  candidate: Candidate | undefined;
  /** When its state.json was last looked at (the lookup's clock). */
  checkedAt: number;
  /** Its state was final (nothing more happens without a retry or a changed incident.json). */
  final: boolean;
  /** Responders' feedback on it as last read, and when (the lookup's clock); read again after RECHECK_MS. */
  feedback?: { value: Feedback | undefined; readAt: number };
}
const cache = new Map<string, Map<string, Cached>>();

/**
 * A folder seen final within this long is not looked at again: one `stat` per folder per run made every
 * run cost in proportion to the incidents the root holds (10,000 folders: most of a run's CPU). Folders
 * still queued or running are looked at more often (PENDING_RECHECK_MS), new folders on every run; a
 * final folder that is retried and answered again is listed with its new answer within this long.
 */
export const RECHECK_MS = 60_000;
/**
 * A folder still queued or running is looked at again at most this often: in a burst every run would
 * otherwise `stat` every other incident of the burst. An answer that has just come is listed within it.
 */
export const PENDING_RECHECK_MS = 1_000;

/** Cached folders under `root` (tests read its size to prove the cache follows the root). */
export const cachedFolderCount = (root: string): number => cache.get(root)?.size ?? 0;

function cacheOf(root: string, names: readonly string[]) {
  let folders = cache.get(root);
  if (!folders) cache.set(root, (folders = new Map()));
  if (folders.size > 0) {
    const present = new Set(names);
    for (const folder of folders.keys()) if (!present.has(folder)) folders.delete(folder);
  }
  return folders;
}

async function readCandidate(
  root: string,
  folder: string,
  folders: Map<string, Cached>,
  now: number,
): Promise<Candidate | undefined> {
  const dir = path.join(root, folder);
  const file = statePath(dir);
  let info;
  try {
    info = statSync(file); // synchronous: one call of microseconds per folder (see util/fs.ts)
  } catch {
    info = undefined;
  }
  if (!info?.isFile()) {
    folders.delete(folder);
    return undefined;
  }
  const hit = folders.get(folder);
  if (hit && hit.mtimeMs === info.mtimeMs) {
    hit.checkedAt = now;
    return hit.candidate;
  }
  const { candidate, final } = await readFresh(root, folder, dir);
  folders.set(folder, { mtimeMs: info.mtimeMs, candidate, checkedAt: now, final });
  return candidate;
}

async function readFresh(
  root: string,
  folder: string,
  dir: string,
): Promise<{ candidate: Candidate | undefined; final: boolean }> {
  const read = await readStateBelow(root, statePath(dir));
  if (read.kind !== 'ok') return { candidate: undefined, final: false };
  return { candidate: await answered(root, folder, dir, read.state), final: isFinal(read.state.state) };
}

const workloadOf = (i: Pick<Incident, 'namespace' | 'resource'>): string =>
  `${i.resource.namespace ?? i.namespace}/${i.resource.kind}/${i.resource.name}`.toLowerCase();

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The folder as a past investigation, when its last run answered. */
async function answered(
  root: string,
  folder: string,
  dir: string,
  state: StateFile,
): Promise<Candidate | undefined> {
  const runId = state.runs.at(-1)?.id;
  if (!hasAnswer(state.state) || !isRunId(runId)) return undefined;
  const result = await readRunResult(runDirOf(dir, runId), root);
  if (!result.ok || !result.value.answer) return undefined;
  const doc = (await readIncidentLoosely(root, dir))?.doc;
  if (typeof doc?.cluster !== 'string' || typeof doc.faultType !== 'string') return undefined;
  const resource = (doc.resource && typeof doc.resource === 'object' ? doc.resource : {}) as Record<
    string,
    unknown
  >;
  const facts = {
    cluster: doc.cluster,
    namespace: text(doc.namespace),
    faultType: doc.faultType,
    resource: {
      kind: text(resource.kind),
      name: text(resource.name),
      ...(typeof resource.namespace === 'string' ? { namespace: resource.namespace } : {}),
    },
  };
  const evidence = result.value.evidence?.verdict;
  return {
    folder,
    dir,
    incidentId: state.incidentId,
    finishedAt: result.value.finishedAt,
    finishedMs: Date.parse(result.value.finishedAt),
    answer: result.value.answer,
    ...(evidence ? { evidence } : {}),
    incident: facts,
    workload: workloadOf(facts),
  };
}

/** A folder's feedback, read at most once per RECHECK_MS (a responder's rating is ranked within it). */
async function feedbackOf(
  c: Candidate,
  entry: Cached | undefined,
  now: number,
): Promise<Feedback | undefined> {
  const seen = entry?.feedback;
  if (seen && now - seen.readAt >= 0 && now - seen.readAt < RECHECK_MS) return seen.value;
  const value = await readFeedback(c.dir);
  if (entry) entry.feedback = { value, readAt: now };
  return value;
}

/** How a verdict ranks: confirmed causes first, answers rated wrong last. */
const RANK: Record<string, number> = { correct: 0, partly: 1, unrated: 2, wrong: 3 };

export interface FindOptions {
  /** At most this many entries. */
  limit: number;
  /** Investigations that finished longer ago than this are not listed (memory.retention). */
  maxAgeMs: number;
  now?: number;
  /** How many of the newest related investigations are ranked by rating (default RANKED_POOL). */
  pool?: number;
}

/** Earlier answered investigations related to `incident` (its own folder `self` excluded), ranked. */
export async function findPreviousInvestigations(
  root: string,
  self: string,
  incident: Pick<Incident, 'cluster' | 'namespace' | 'faultType' | 'resource'>,
  options: FindOptions,
): Promise<PreviousInvestigation[]> {
  if (options.limit <= 0) return [];
  const now = options.now ?? Date.now();
  const names = await readdir(root).catch(() => [] as string[]);
  const limiter = new Limiter(32);
  const folders = cacheOf(root, names);
  const read: (Candidate | undefined)[] = [];
  const stale: string[] = [];
  for (const name of names) {
    if (name === self || name.startsWith('.')) continue;
    const hit = folders.get(name);
    const age = hit ? now - hit.checkedAt : -1;
    if (hit && age >= 0 && age < (hit.final ? RECHECK_MS : PENDING_RECHECK_MS)) read.push(hit.candidate);
    else stale.push(name);
  }
  read.push(
    ...(await Promise.all(
      stale.map((n) => limiter.run(() => readCandidate(root, n, folders, now).catch(() => undefined))),
    )),
  );
  const workload = workloadOf(incident);
  const matches: { c: Candidate; match: 'workload' | 'fault' }[] = [];
  for (const c of read) {
    if (!c || c.incident.cluster !== incident.cluster) continue;
    if (now - c.finishedMs > options.maxAgeMs) continue;
    if (c.workload === workload) matches.push({ c, match: 'workload' });
    else if (c.incident.faultType === incident.faultType && c.incident.namespace === incident.namespace)
      matches.push({ c, match: 'fault' });
  }
  // Only the newest RANKED_POOL are ranked by rating: the cost of a run stays the same however many
  // answers a recurring workload has piled up.
  matches.sort((a, b) => b.c.finishedMs - a.c.finishedMs);
  const pool = matches.slice(0, options.pool ?? RANKED_POOL);
  const withFeedback = await Promise.all(
    pool.map(async (m) => ({ ...m, feedback: await feedbackOf(m.c, folders.get(m.c.folder), now) })),
  );
  withFeedback.sort(
    (a, b) =>
      (RANK[a.feedback?.verdict ?? 'unrated'] ?? 2) - (RANK[b.feedback?.verdict ?? 'unrated'] ?? 2) ||
      (a.match === b.match ? 0 : a.match === 'workload' ? -1 : 1) ||
      b.c.finishedMs - a.c.finishedMs,
  );
  return withFeedback.slice(0, options.limit).map(({ c, match, feedback }) => {
    const evidence = c.evidence;
    return {
      folder: c.folder,
      incidentId: c.incidentId,
      finishedAt: c.finishedAt,
      match,
      faultType: c.incident.faultType,
      cause: oneLine(feedback?.cause ?? c.answer),
      ...(typeof evidence === 'string' ? { evidence } : {}),
      ...(feedback
        ? { feedback: { verdict: feedback.verdict, ...(feedback.cause ? { cause: feedback.cause } : {}) } }
        : {}),
      reportPath: reportPath(c.dir),
    };
  });
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > CAUSE_CHARS ? `${flat.slice(0, CAUSE_CHARS - 1)}…` : flat;
}

/** Dots a reader could take for the index line's own ` · ` field separators. */
const SEPARATOR_LIKE = /[\u00b7\u2022\u2027\u2219\u22c5\u30fb\uff65]/g;

/**
 * Words someone else wrote (an agent's answer, a responder's cause, a producer's fault type) as one
 * JSON string on one line: no separator, newline, quote or angle bracket of theirs stands unescaped,
 * so they can never read as the line's own fields ("rated correct · cause (responder): …") or a tag.
 */
function quotedWords(text: string): string {
  return JSON.stringify(oneLine(text).replace(SEPARATOR_LIKE, '-'))
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e');
}

/** The evidence verdicts a run records (grounded answers); anything else in a result.json is not shown. */
const EVIDENCE_VERDICTS: ReadonlySet<string> = new Set(['grounded', 'partial', 'ungrounded']);

/** A fault type as written when it is a plain name (`CrashLoop`), quoted like other words otherwise. */
const faultTypeText = (faultType: string): string =>
  /^[A-Za-z0-9._:-]{1,64}$/.test(faultType) ? faultType : quotedWords(faultType);

/**
 * One index line: when, how it was graded, the cause, and where its report is (the agent's path). Only
 * the daemon's own words stand bare; the cause is quoted (`quotedWords`), so an agent's earlier answer
 * cannot pass itself off as a responder's rating.
 */
export function previousLine(p: PreviousInvestigation, reportAgentPath: string): string {
  const graded = p.feedback ? `rated ${p.feedback.verdict}` : 'unrated';
  const evidence = p.evidence && EVIDENCE_VERDICTS.has(p.evidence) ? ` · ${p.evidence}` : '';
  const cause = p.feedback?.cause ? 'cause (responder)' : "agent's answer";
  const match = p.match === 'workload' ? 'same workload' : `same fault ${faultTypeText(p.faultType)}`;
  return `- ${p.finishedAt.slice(0, 10)} · ${match} · ${graded}${evidence} · ${cause}: ${quotedWords(p.cause)} · report: ${reportAgentPath}`;
}

const PREAMBLE =
  'Earlier investigations of this workload or fault (best rated first). Treat each as a hypothesis to check against the cluster now, never as the answer; read a report only if it helps.';

/** The `<previous_investigations>` section: full (one line each), or degraded to a pointer at the index file. */
export function renderPrevious(lines: readonly string[], indexAgentPath: string, degraded: boolean): string {
  if (lines.length === 0) return '';
  const body = degraded
    ? `${lines.length} earlier investigations of this workload or fault are listed in ${indexAgentPath} (not preloaded, to fit the token budget); treat them as hypotheses to check, not answers.`
    : `${PREAMBLE}\n${lines.join('\n')}`;
  return wrapSection('previous_investigations', escapeTextContent(body));
}
