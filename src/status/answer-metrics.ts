import { Gauge, type Registry } from 'prom-client';
import { answerConfidence, isHighConfidence } from '../feedback/accuracy.js';
import type { StoredView } from './view.js';

// Graded outcomes as Prometheus metrics, counted from the status index at each scrape (so they hold
// across restarts and follow a changed verdict): `triage_runner_answers_total{grade}` — every answer
// by what responders said of it, `unrated` until they do — and the confident-wrong count beside it.

export const ANSWER_GRADES = ['correct', 'partly', 'wrong', 'unrated'] as const;

export interface AnswerCounts {
  byGrade: Record<(typeof ANSWER_GRADES)[number], number>;
  confidentWrong: number;
}

export function countAnswers(views: Iterable<StoredView>): AnswerCounts {
  const byGrade = { correct: 0, partly: 0, wrong: 0, unrated: 0 };
  let confidentWrong = 0;
  for (const view of views) {
    if (!view.answer) continue;
    const verdict = view.feedback?.verdict;
    byGrade[verdict ?? 'unrated']++;
    if (verdict === 'wrong' && isHighConfidence(answerConfidence(view))) confidentWrong++;
  }
  return { byGrade, confidentWrong };
}

export function registerAnswerMetrics(
  registry: Registry,
  source: { views(): Iterable<StoredView> },
  prefix = 'triage_runner_',
): void {
  const counts = () => countAnswers(source.views());
  new Gauge({
    name: `${prefix}answers_total`,
    help: 'Answers given, by the grade responders gave them (correct, partly, wrong; unrated until rated)',
    labelNames: ['grade'],
    registers: [registry],
    collect() {
      const { byGrade } = counts();
      for (const grade of ANSWER_GRADES) this.set({ grade }, byGrade[grade]);
    },
  });
  new Gauge({
    name: `${prefix}answers_confident_wrong`,
    help: 'Answers the agent gave with high confidence that responders rated wrong',
    registers: [registry],
    collect() {
      this.set(counts().confidentWrong);
    },
  });
}
