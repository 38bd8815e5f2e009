import type { Evidence, RunResult } from '../workspace/run-record.js';

// What an answer amounts to, said the same way on every surface (Slack, the webhook, PagerDuty, the
// status page and `status`): grounded only when the evidence check found the headline's chain held by
// the cluster output it cites. Without that, the answer is never shown as green nor as "succeeded":
// it says whether the cluster could be read at all, whether the cluster contradicts it, or that it
// was not verified.

export const ANSWER_STANDINGS = ['grounded', 'partial', 'unverified', 'no-access', 'contradicted'] as const;
export type AnswerStanding = (typeof ANSWER_STANDINGS)[number];

/** The evidence fields the standing reads (a listing's brief evidence has no claims). */
type EvidenceSeen = Pick<Evidence, 'verdict'> & Partial<Pick<Evidence, 'claims' | 'clusterRead'>>;

/**
 * The standing of an answered run's report from its evidence check and the cluster record of its
 * result.json. No cluster access wins over everything (the answer then rests on the alert alone); an
 * answer without an evidence record (no report to check) is not verified.
 */
export function answerStanding(
  evidence: EvidenceSeen | undefined | null,
  cluster?: RunResult['cluster'],
): AnswerStanding {
  if (cluster?.reachable === false || evidence?.clusterRead === false) return 'no-access';
  if (!evidence) return 'unverified';
  if (evidence.verdict === 'grounded') return 'grounded';
  if (evidence.claims?.some((c) => c.kind === 'headline' && c.status === 'contradicted'))
    return 'contradicted';
  return evidence.verdict === 'partial' ? 'partial' : 'unverified';
}

/** The standing of a run's result (its evidence and cluster record). */
export const standingOf = (result: Pick<RunResult, 'evidence' | 'cluster'> | undefined): AnswerStanding =>
  answerStanding(result?.evidence, result?.cluster);

export interface StandingWords {
  /** A badge, a column, a field: "grounded", "not verified", "no cluster access". */
  short: string;
  /** A headline's opening: "Answer grounded in the cluster", "No cluster access: answer from the alert only". */
  title: string;
  /** Slack's mark: green only for grounded. */
  mark: string;
}

export const STANDING_WORDS: Readonly<Record<AnswerStanding, StandingWords>> = {
  grounded: { short: 'grounded', title: 'Answer grounded in the cluster', mark: '🟢' },
  partial: { short: 'partly verified', title: 'Answer, partly verified', mark: '🟡' },
  unverified: { short: 'not verified', title: 'Answer, not verified', mark: '🟠' },
  'no-access': {
    short: 'no cluster access',
    title: 'No cluster access: answer from the alert only',
    mark: '⚪',
  },
  contradicted: { short: 'contradicted', title: 'Claims contradicted by the cluster', mark: '⛔' },
};
