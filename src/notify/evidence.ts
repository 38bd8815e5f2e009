import type { Evidence } from '../audit/run-record.js';

// How much to trust an answer, said next to it wherever it appears: the evidence verdict (result.json
// `evidence`) as a mark and a short line naming what was not verified and what the run could not see.

export const EVIDENCE_MARK: Record<Evidence['verdict'], string> = {
  grounded: '🟢',
  partial: '🟡',
  ungrounded: '🟠',
};

/** Gaps named in a one-line summary; the full lists are in result.json and the Slack thread. */
const GAPS_SHOWN = 3;

/** "Evidence: partial — 2 cited commands never ran, 1 quoted line not found; gaps: …". */
export function evidenceLine(evidence: Evidence): string {
  const counts = [
    evidence.citedNotRun.length > 0 ? `${evidence.citedNotRun.length} cited command(s) never ran` : '',
    evidence.excerptsNotFound.length > 0
      ? `${evidence.excerptsNotFound.length} quoted line(s) found in no output`
      : '',
    evidence.unverified.length > 0 ? `${evidence.unverified.length} citation(s) unverified` : '',
  ].filter(Boolean);
  const gaps = evidence.gaps.slice(0, GAPS_SHOWN);
  const more = evidence.gaps.length - gaps.length;
  return [
    `Evidence: ${evidence.verdict}${counts.length > 0 ? ` — ${counts.join(', ')}` : ''}`,
    gaps.length > 0 ? `gaps: ${gaps.join('; ')}${more > 0 ? `; ${more} more` : ''}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}
