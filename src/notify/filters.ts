import type { NotifySinkConfig } from '../config/schema.js';
import { VERDICTS } from '../shared/status.js';
import type { FinishedIncident } from './types.js';

// Which sinks hear about an incident: its final state is in `on`, it is at least `min_severity`, and
// its cluster is listed in `clusters` (when given). A run that starts is told to sinks that will hear
// every outcome.

/** Severity words and their rank; P1–P5 and SEV1–SEV5 are understood too. */
const RANKS: Record<string, number> = {
  info: 0,
  informational: 0,
  none: 0,
  low: 1,
  minor: 2,
  warning: 2,
  medium: 2,
  moderate: 2,
  error: 3,
  high: 3,
  major: 3,
  critical: 4,
  fatal: 4,
};
const NUMBERED = /^(?:p|sev)([1-5])$/;

/** Rank 0 (info) to 4 (critical); undefined for a severity nobody can place. */
export function severityRank(severity: string | undefined): number | undefined {
  const word = (severity ?? '')
    .trim()
    .toLowerCase()
    .replace(/[\s_-]/g, '');
  if (word in RANKS) return RANKS[word];
  const n = NUMBERED.exec(word)?.[1];
  return n === undefined ? undefined : Math.max(0, 5 - Number(n));
}

export type FilterVerdict = { match: true } | { match: false; why: string };

export function sinkMatches(sink: NotifySinkConfig, input: FinishedIncident): FilterVerdict {
  const state = input.state.state;
  if (!(sink.on as readonly string[]).includes(state))
    return { match: false, why: `state ${state} is not in on: [${sink.on.join(', ')}]` };
  return incidentMatches(sink, input);
}

/**
 * Whether a sink hears that a run started: only when it will hear how the run ends, whatever that is
 * (`on` lists succeeded and failed), so a message that says "running" is always replaced by the outcome.
 */
export function runningMatches(sink: NotifySinkConfig, input: FinishedIncident): FilterVerdict {
  const missing = VERDICTS.filter((s) => !(sink.on as readonly string[]).includes(s));
  if (missing.length > 0)
    return {
      match: false,
      why: `on: [${sink.on.join(', ')}] leaves out ${missing.join(', ')}: a running message could stay unanswered`,
    };
  return incidentMatches(sink, input);
}

/** The filters about the incident itself: min_severity and clusters. */
function incidentMatches(sink: NotifySinkConfig, input: FinishedIncident): FilterVerdict {
  if (sink.min_severity !== undefined) {
    const rank = severityRank(input.incident.severity);
    // An unknown severity is delivered: a missed page costs more than an extra message.
    if (rank !== undefined && rank < (severityRank(sink.min_severity) ?? 0))
      return {
        match: false,
        why: `severity ${input.incident.severity} is below min_severity ${sink.min_severity}`,
      };
  }
  if (sink.clusters !== undefined && !sink.clusters.includes(input.incident.cluster))
    return { match: false, why: `cluster ${input.incident.cluster} is not in clusters` };
  return { match: true };
}
