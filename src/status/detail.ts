import path from 'node:path';
import type { AuditEntry } from '../audit/log.js';
import { MAX_REPORT_BYTES } from '../audit/report.js';
import { readContextRecord, type ContextRecord, type RunResult } from '../workspace/run-record.js';
import type { StateFile } from '../workspace/state.js';
import type { Redactor } from '../log/redact.js';
import { auditLogPath, reportPath } from '../workspace/layout.js';
import { readReport } from '../workspace/report.js';
import { readOwnFileBelow } from '../util/safe-path.js';
import { latestRunDir, readIncidentFacts, type IncidentFacts } from './read.js';
import type { IncidentView } from './types.js';
import { noReportWhy, viewOf, withAge } from './view.js';

// One incident in full, for `GET /v1/incidents/{id}` and the incident page: the view, its runs, the
// latest result.json, the context token table (context.json) and the audit events. Read from disk on
// each request, never through a symbolic link.

const AUDIT_MAX_BYTES = 16 << 20;
/** The newest audit events shown; older ones are counted in `omitted`. */
export const AUDIT_EVENTS_SHOWN = 1000;

export type ContextTable = ContextRecord;

export interface IncidentDetail extends IncidentView {
  runs: StateFile['runs'];
  /** The latest ended run's result.json. */
  result: RunResult | null;
  /** context.json of the latest run that has one, and that run's id. */
  context: (ContextTable & { runId: string }) | null;
  audit: { events: AuditEntry[]; omitted: number; problem?: string };
}

/** The detail of `<root>/<folder>`, or undefined when it holds no incident. */
export async function readIncidentDetail(
  root: string,
  folder: string,
  now: number,
): Promise<IncidentDetail | undefined> {
  const facts = await readIncidentFacts(root, folder);
  if (!facts) return undefined;
  return {
    ...withAge(viewOf(facts), facts.arrivedAtMs, now),
    // One incident: its evidence with every claim the check judged.
    evidence: facts.result?.evidence ?? null,
    runs: facts.state.runs,
    result: facts.result ?? null,
    context: facts.unsafe ? null : await readContext(root, facts),
    audit: facts.unsafe ? { events: [], omitted: 0 } : await readAudit(root, facts.dir),
  };
}

async function readContext(root: string, facts: IncidentFacts): Promise<IncidentDetail['context']> {
  // The latest run that got as far as building its context.
  for (let i = facts.state.runs.length - 1; i >= 0 && i >= facts.state.runs.length - 5; i--) {
    const state = { ...facts.state, runs: facts.state.runs.slice(0, i + 1) };
    const runDir = latestRunDir(facts.dir, state);
    if (!runDir) continue;
    const read = await readContextRecord(runDir, root);
    if (read.ok) return { ...read.value, runId: path.basename(runDir) };
  }
  return null;
}

async function readAudit(root: string, dir: string): Promise<IncidentDetail['audit']> {
  const read = await readOwnFileBelow(root, auditLogPath(dir), AUDIT_MAX_BYTES);
  if (read.kind === 'missing') return { events: [], omitted: 0 };
  if (read.kind === 'refused') return { events: [], omitted: 0, problem: read.reason };
  const events: AuditEntry[] = [];
  let unreadable = 0;
  for (const line of read.text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const entry = JSON.parse(line) as AuditEntry;
      // The page renders each event's type and time: an event without both is counted as unreadable.
      if (
        entry &&
        typeof entry === 'object' &&
        typeof entry.type === 'string' &&
        typeof entry.ts === 'string'
      )
        events.push(entry);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  const omitted = Math.max(0, events.length - AUDIT_EVENTS_SHOWN);
  return {
    events: events.slice(omitted),
    omitted,
    ...(unreadable
      ? { problem: `${unreadable} line(s) of audit.jsonl are not events; run \`triage-runner audit verify\`` }
      : {}),
  };
}

export type ReportRead = { kind: 'ok'; text: string; path: string } | { kind: 'none'; why: string };

/**
 * The report of `<root>/<folder>` as markdown, or why there is none; through the redactor, as the
 * notifications send it: the file on disk is scrubbed when its run ends, but one read while the agent
 * writes it, or left by a daemon that redacted less, is not.
 */
export async function readIncidentReport(
  root: string,
  folder: string,
  now: number,
  redactor: Pick<Redactor, 'redact'>,
): Promise<ReportRead> {
  const facts = await readIncidentFacts(root, folder);
  if (!facts) return { kind: 'none', why: `no incident ${folder} under ${root}` };
  const file = reportPath(facts.dir);
  if (facts.unsafe) return { kind: 'none', why: facts.state.reason ?? 'the folder cannot be read safely' };
  const read = await readReport(facts.dir, MAX_REPORT_BYTES, root);
  if (read.kind === 'ok') return { kind: 'ok', text: redactor.redact(read.text), path: file };
  if (read.kind === 'refused') return { kind: 'none', why: read.reason };
  return {
    kind: 'none',
    why: `no report at ${file}: ${noReportWhy(withAge(viewOf(facts), facts.arrivedAtMs, now))}`,
  };
}
