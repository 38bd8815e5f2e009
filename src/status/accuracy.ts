import path from 'node:path';
import { readFeedback } from '../feedback/feedback.js';
import { confidenceIn, type GradedAnswer } from '../feedback/accuracy.js';
import { INCIDENT_FILE } from '../intake/read.js';
import { Limiter } from '../util/limiter.js';
import { readOwnFileBelow } from '../util/safe-path.js';
import type { IncidentFacts } from './read.js';
import { readAllFacts } from './scan.js';

// The answers under a workspaces root with their responders' verdicts, for `status --accuracy`: every
// incident whose latest run gave an answer, with the agent, model, cluster and fault type it was for.

const INCIDENT_MAX_BYTES = 1 << 20;

async function incidentLabels(dir: string): Promise<{ cluster?: string; faultType?: string }> {
  const read = await readOwnFileBelow(dir, path.join(dir, INCIDENT_FILE), INCIDENT_MAX_BYTES).catch(
    () => undefined,
  );
  if (read?.kind !== 'ok') return {};
  try {
    const incident = JSON.parse(read.text) as { cluster?: unknown; faultType?: unknown };
    return {
      ...(typeof incident.cluster === 'string' ? { cluster: incident.cluster } : {}),
      ...(typeof incident.faultType === 'string' ? { faultType: incident.faultType } : {}),
    };
  } catch {
    return {};
  }
}

/** One answered incident as a graded answer (undefined when its latest run gave no answer). */
export async function gradedAnswer(facts: IncidentFacts): Promise<GradedAnswer | undefined> {
  const result = facts.result;
  if (!result?.answer) return undefined;
  const [feedback, labels] = await Promise.all([readFeedback(facts.dir), incidentLabels(facts.dir)]);
  const confidence = confidenceIn(result.answer);
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
