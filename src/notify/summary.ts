import { findNamed, firstTableCell, firstText } from '../report/blocks.js';
import { readHeadline } from '../report/headline.js';
import { parseMarkdown, type Token } from './mrkdwn.js';

// What a human reads first: the primary hypothesis with its confidence (the report's headline, read by
// src/report/headline.ts) and the first recommended action, taken from the report's syntax tree. The
// k8s4agents template puts the action in section 0's "### Top 3 Recommended Actions" table; section 4
// (Remediation Plan) is the fallback; the agent's one-line answer is the last resort for the hypothesis.

export type SummarySource = 'triage-card' | 'executive-summary' | 'root-cause' | 'answer' | 'none';

export interface Summary {
  hypothesis?: string;
  /** As the report states it: High / Medium / Low, or a percentage. */
  confidence?: string;
  firstAction?: string;
  /** The agent's one-line answer (result.json `answer`), when it gave one. */
  answer?: string;
  /** Where the hypothesis came from. */
  source: SummarySource;
}

/** Longest hypothesis or action kept (the full text is in the report). */
export const SUMMARY_FIELD_CHARS = 600;

const clip = (text: string, max = SUMMARY_FIELD_CHARS): string =>
  text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;

const firstAction = (nodes: Token[]): string | undefined =>
  firstTableCell(nodes, 'action') ?? firstText(nodes);

/** The summary of a report; `answer` (result.json) fills in what the report lacks. */
export function summarize(report: string | undefined, answer?: string): Summary {
  const fromReport = report ? summarizeReport(report) : { source: 'none' as const };
  const oneLine = answer?.trim() ? clip(answer.replace(/\s+/g, ' ').trim()) : undefined;
  if (fromReport.hypothesis || !oneLine) return { ...fromReport, ...(oneLine ? { answer: oneLine } : {}) };
  return { ...fromReport, hypothesis: oneLine, answer: oneLine, source: 'answer' };
}

function summarizeReport(report: string): Summary {
  const top = parseMarkdown(report);
  if (!top) return { source: 'none' };
  const headline = readHeadline(top);
  const summary = findNamed(top, 'executive triage card', 'executive summary', 'summary', 'tl dr', 'tldr');
  const remediation = findNamed(top, 'remediation plan', 'remediation', 'recommended actions');
  let action: string | undefined;
  if (summary) {
    const actions = findNamed(
      summary.nodes,
      'top 3 recommended actions',
      'recommended actions',
      'next steps',
    );
    if (actions) action = firstAction(actions.nodes);
  }
  if (!action && remediation) {
    const mitigation = findNamed(remediation.nodes, 'immediate mitigation');
    action = firstAction(mitigation ? mitigation.nodes : remediation.nodes);
  }
  return {
    ...(headline ? { hypothesis: clip(headline.statement) } : {}),
    ...(headline?.confidence ? { confidence: clip(headline.confidence, 40) } : {}),
    ...(action ? { firstAction: clip(action) } : {}),
    source: headline?.source ?? 'none',
  };
}
