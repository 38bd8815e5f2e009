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

/** A call's gap names its command: "refused (rule): kubectl …", "failed (exit 1): kubectl … [triage]". */
const GAP_COMMAND = /^(?:refused|failed) \([^)]*\): (.+?)(?: \[triage\])?$/;

/**
 * The gaps the report relies on (about the whole run, or about a command one of its claims or
 * citations names), then the rest (calls the report does not cite), each in the record's order.
 */
export function splitGaps(evidence: Omit<Evidence, 'claims'> & Partial<Pick<Evidence, 'claims'>>): {
  reliedOn: string[];
  rest: string[];
} {
  const cited = [
    ...(evidence.claims ?? []).map((c) => c.source),
    ...evidence.unverified,
    ...evidence.citedNotRun,
  ].join('\n');
  const reliedOn: string[] = [];
  const rest: string[] = [];
  for (const gap of evidence.gaps) {
    const command = GAP_COMMAND.exec(gap)?.[1];
    const bare = command?.replace(/^kubectl /, '');
    if (command === undefined || cited.includes(command) || (bare && cited.includes(bare)))
      reliedOn.push(gap);
    else rest.push(gap);
  }
  return { reliedOn, rest };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * "Evidence: partial — 3 of 5 claims supported, 1 cited command not run as written; gaps the report
 * relies on: …; 4 other gaps": the gaps the report relies on first, the rest counted.
 */
export function evidenceLine(evidence: Omit<Evidence, 'claims'> & Partial<Pick<Evidence, 'claims'>>): string {
  const counts = [
    claimsCount(evidence) ?? '',
    evidence.citedNotRun.length > 0
      ? `${plural(evidence.citedNotRun.length, 'cited command')} not run as written`
      : '',
    evidence.excerptsNotFound.length > 0
      ? `${plural(evidence.excerptsNotFound.length, 'quoted line')} found in no output`
      : '',
    evidence.unverified.length > 0 ? `${plural(evidence.unverified.length, 'citation')} unverified` : '',
  ].filter(Boolean);
  const { reliedOn, rest } = splitGaps(evidence);
  const shown = reliedOn.slice(0, GAPS_SHOWN);
  const others = reliedOn.length - shown.length + rest.length;
  return [
    `Evidence: ${evidence.verdict}${counts.length > 0 ? ` — ${counts.join(', ')}` : ''}`,
    shown.length > 0 ? `gaps the report relies on: ${shown.join('; ')}` : '',
    others > 0 ? plural(others, shown.length > 0 ? 'other gap' : 'gap') : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/**
 * Every citation that did not hold and every gap, one short line each, for a list under the answer:
 * the gaps the report relies on first, those in calls it does not cite last.
 */
export function evidenceItems(
  evidence: Omit<Evidence, 'claims'> & Partial<Pick<Evidence, 'claims'>>,
): string[] {
  const cut = (text: string) => (text.length > ITEM_CHARS ? `${text.slice(0, ITEM_CHARS - 1)}…` : text);
  const { reliedOn, rest } = splitGaps(evidence);
  return [
    ...reliedOn.map((g) => `gap the report relies on: ${g}`),
    ...evidence.citedNotRun.map((c) => `cited, but no recorded call ran it as written: ${c}`),
    ...evidence.excerptsNotFound.map((e) => `quoted but found in no output: ${e}`),
    ...evidence.unverified.map((u) => `unverified: ${u}`),
    ...rest.map((g) => `gap in a call the report does not cite: ${g}`),
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
