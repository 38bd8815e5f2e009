import { confidenceIn, isHighConfidence } from '../report/confidence.js';
import { GRADE } from './feedback.js';
import { type FeedbackVerdict } from '../workspace/feedback.js';

// Accuracy over time: answers graded by responders, grouped by agent, model, cluster or fault type.
// The rate is the mean grade of the rated answers (correct 100, partly 50, wrong 0); beside it the
// confident-wrong count — answers the agent was sure of that responders marked wrong — because a
// confident wrong root cause costs an on-call engineer more than an unsure one. How sure the agent was
// is read by the report's one confidence reader (src/report/confidence.ts), re-exported here.

export { confidenceIn, isHighConfidence } from '../report/confidence.js';

/**
 * The confidence an answer was given with, read as the eval scorer and the notification read it: the
 * report's headline confidence (result.json `evidence.confidence`, read by src/report/headline.ts, a
 * bold `**Confidence:** High` line included), else what the agent's one-line answer states (a result
 * written before the evidence recorded it, or a run without a report).
 */
export function answerConfidence(result: {
  evidence?: { verdict: string; confidence?: string } | null;
  answer?: string | null;
}): string | undefined {
  return result.evidence?.confidence ?? confidenceIn(result.answer ?? undefined);
}

export const ACCURACY_DIMENSIONS = ['agent', 'model', 'cluster', 'faultType'] as const;
export type AccuracyDimension = (typeof ACCURACY_DIMENSIONS)[number];

/** One investigation that gave an answer, with what responders said of it (if anything). */
export interface GradedAnswer {
  folder: string;
  agent: string;
  model?: string;
  cluster?: string;
  faultType?: string;
  /** The confidence the agent gave its hypothesis, as it wrote it ("high", "85%", "0.9"). */
  confidence?: string;
  verdict?: FeedbackVerdict;
}

export interface AccuracyRow {
  /** The dimension's value ("(none)" when the incident did not say). */
  key: string;
  answers: number;
  rated: number;
  correct: number;
  partly: number;
  wrong: number;
  /** Rated wrong while the agent claimed high confidence. */
  confidentWrong: number;
  /** Mean grade of the rated answers, 0–100; null when none is rated. */
  rate: number | null;
}

export const isConfidentWrong = (a: GradedAnswer): boolean =>
  a.verdict === 'wrong' && isHighConfidence(a.confidence);

/** A row with nothing counted yet. */
const emptyRow = (key: string): AccuracyRow => ({
  key,
  answers: 0,
  rated: 0,
  correct: 0,
  partly: 0,
  wrong: 0,
  confidentWrong: 0,
  rate: null,
});

/** Accuracy rows for one dimension, the most answers first. */
export function accuracyBy(dimension: AccuracyDimension, answers: readonly GradedAnswer[]): AccuracyRow[] {
  const rows = new Map<string, AccuracyRow & { gradeSum: number }>();
  for (const a of answers) {
    const key = a[dimension] ?? '(none)';
    let row = rows.get(key);
    if (!row) {
      row = { ...emptyRow(key), gradeSum: 0 };
      rows.set(key, row);
    }
    row.answers++;
    if (!a.verdict) continue;
    row.rated++;
    row[a.verdict]++;
    row.gradeSum += GRADE[a.verdict];
    if (isConfidentWrong(a)) row.confidentWrong++;
  }
  return [...rows.values()]
    .map(({ gradeSum, ...row }) => ({
      ...row,
      rate: row.rated ? Math.round((gradeSum / row.rated) * 10) / 10 : null,
    }))
    .sort((x, y) => y.answers - x.answers || x.key.localeCompare(y.key));
}

/** The same over every answer: one row keyed "all". */
export const accuracyOverall = (answers: readonly GradedAnswer[]): AccuracyRow =>
  accuracyBy(
    'agent',
    answers.map((a) => ({ ...a, agent: 'all' })),
  )[0] ?? emptyRow('all');

/** `status --accuracy` as text: one table per dimension. */
export function formatAccuracy(answers: readonly GradedAnswer[]): string {
  const overall = accuracyOverall(answers);
  const lines = [
    `${overall.answers} answers, ${overall.rated} rated by responders` +
      (overall.rate === null ? '' : `: accuracy ${overall.rate}%, ${overall.confidentWrong} confident-wrong`),
  ];
  if (overall.rated === 0)
    lines.push(
      'No feedback yet: rate an answer on the status page, with POST /v1/incidents/{id}/feedback, or with the Slack buttons.',
    );
  for (const dimension of ACCURACY_DIMENSIONS) {
    const rows = accuracyBy(dimension, answers);
    if (rows.length === 0) continue;
    lines.push('', `by ${dimension}`);
    const header = [
      dimension,
      'answers',
      'rated',
      'correct',
      'partly',
      'wrong',
      'confident-wrong',
      'accuracy',
    ];
    const body = rows.map((r) => [
      r.key,
      String(r.answers),
      String(r.rated),
      String(r.correct),
      String(r.partly),
      String(r.wrong),
      String(r.confidentWrong),
      r.rate === null ? '-' : `${r.rate}%`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)));
    for (const row of [header, ...body])
      lines.push(
        row
          .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
          .join('  ')
          .trimEnd(),
      );
  }
  return `${lines.join('\n')}\n`;
}
