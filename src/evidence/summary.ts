import type { Evidence } from '../workspace/run-record.js';

// How much to trust an answer, said short next to it wherever it appears (the status page, `status`,
// Slack, the webhook and PagerDuty): a one-line summary, and the items behind it for a list.

/** Gaps named in a one-line summary; the full lists are in result.json, the Slack thread and the page. */
const GAPS_SHOWN = 3;
/** Characters of one listed item; a cited command or quoted line can be long. */
const ITEM_CHARS = 300;

/** "3 of 5 claims supported", when the record says (results from before claims were checked do not). */
export function claimsCount(evidence: Evidence): string | undefined {
  if (evidence.claimsTotal === undefined || evidence.claimsSupported === undefined) return undefined;
  return `${evidence.claimsSupported} of ${evidence.claimsTotal} claim${evidence.claimsTotal === 1 ? '' : 's'} supported`;
}

/** "Evidence: partial — 3 of 5 claims supported, 2 cited commands never ran; gaps: …". */
export function evidenceLine(evidence: Evidence): string {
  const counts = [
    claimsCount(evidence) ?? '',
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

/** Every citation that did not hold and every gap, one short line each, for a list under the answer. */
export function evidenceItems(evidence: Evidence): string[] {
  const cut = (text: string) => (text.length > ITEM_CHARS ? `${text.slice(0, ITEM_CHARS - 1)}…` : text);
  return [
    ...evidence.citedNotRun.map((c) => `cited but never run: ${c}`),
    ...evidence.excerptsNotFound.map((e) => `quoted but found in no output: ${e}`),
    ...evidence.unverified.map((u) => `unverified: ${u}`),
    ...evidence.gaps.map((g) => `gap: ${g}`),
  ].map(cut);
}

/** The `status` listing's mark: "[partial: 3/5 claims, 1 gap]", "[grounded: 5/5 claims]" ("2 unverified" for older records). */
export function evidenceMark(evidence: Evidence): string {
  const unverified =
    evidence.citedNotRun.length + evidence.excerptsNotFound.length + evidence.unverified.length;
  const gaps = evidence.gaps.length;
  const claims =
    evidence.claimsTotal !== undefined && evidence.claimsSupported !== undefined
      ? `${evidence.claimsSupported}/${evidence.claimsTotal} claims`
      : '';
  const parts = [
    claims,
    unverified > 0 && !claims ? `${unverified} unverified` : '',
    gaps > 0 ? `${gaps} gap${gaps === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  return `[${evidence.verdict}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}]`;
}
