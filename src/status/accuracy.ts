import { answerConfidence, type GradedAnswer } from '../feedback/accuracy.js';
import { Limiter } from '../util/limiter.js';
import { readFeedback } from '../workspace/feedback.js';
import { readIncidentLoosely } from '../workspace/incident.js';
import type { IncidentFacts } from './read.js';
import { readAllFacts } from './scan.js';

// The answers under a workspaces root with their responders' verdicts, for `status --accuracy`: every
// incident whose latest run gave an answer, with the agent, model, cluster and fault type it was for.

async function incidentLabels(dir: string): Promise<{ cluster?: string; faultType?: string }> {
  const doc = (await readIncidentLoosely(dir, dir))?.doc;
  return {
    ...(typeof doc?.cluster === 'string' ? { cluster: doc.cluster } : {}),
    ...(typeof doc?.faultType === 'string' ? { faultType: doc.faultType } : {}),
  };
}

/** One answered incident as a graded answer (undefined when its latest run gave no answer). */
export async function gradedAnswer(facts: IncidentFacts): Promise<GradedAnswer | undefined> {
  const result = facts.result;
  if (!result?.answer) return undefined;
  const [feedback, labels] = await Promise.all([readFeedback(facts.dir), incidentLabels(facts.dir)]);
  const confidence = answerConfidence(result);
  return {
    folder: facts.folder,
    agent: result.agent,
    ...(result.model ? { model: result.model } : {}),
    ...labels,
    ...(confidence ? { confidence } : {}),
    ...(feedback ? { verdict: feedback.verdict } : {}),
  };
}

export async function readGradedAnswers(root: string): Promise<GradedAnswer[]> {
  const facts = await readAllFacts(root);
  const limiter = new Limiter(32);
  const answers = await Promise.all(facts.map((f) => limiter.run(() => gradedAnswer(f))));
  return answers.filter((a): a is GradedAnswer => a !== undefined);
}
