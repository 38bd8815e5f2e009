// Reports for the evidence corpus, written as agents write them (the k8s4agents template and looser
// shapes), about the `shop` namespace: api-7d9f-x2k9q crash-loops on HTTP_PORT "8O80" (last state
// Error, exit 1, 14 restarts); worker-5c8d9-q7m2p was OOMKilled five days ago (exit 137, limit 512Mi).

export const API = 'api-7d9f-x2k9q';
export const WORKER = 'worker-5c8d9-q7m2p';

export const GET_PODS = '`kubectl get pods -n shop`';
export const DESCRIBE_API = `\`kubectl describe pod ${API} -n shop\``;
export const DESCRIBE_WORKER = `\`kubectl describe pod ${WORKER} -n shop\``;
export const LOGS_API_PREVIOUS = `\`kubectl logs ${API} -n shop --previous\``;
export const FATAL = 'FATAL invalid HTTP_PORT "8O80": strconv.Atoi: parsing "8O80": invalid syntax';

export const API_FACTS = [
  `- **[FACT-1]** ${API} is in CrashLoopBackOff with 14 restarts — Source: ${GET_PODS}`,
  `- **[FACT-2]** Its last state is Terminated, reason Error, exit code 1 — Source: ${DESCRIBE_API}`,
  `- **[FACT-3]** The previous container logged \`${FATAL}\` — Source: ${LOGS_API_PREVIOUS}`,
];
export const API_INFERENCE =
  '- **[INF-1]** The container fails on the bad HTTP_PORT value at start-up — Based on: FACT-1, FACT-2, FACT-3';
export const API_HEADLINE =
  'The api container exits at start-up because HTTP_PORT is "8O80", not a number [INF-1] — Confidence: High';
export const API_CALLS = ['get-pods', 'describe-api', 'logs-api-previous'];

export interface Parts {
  headline?: string;
  /** The whole section 0 body instead of a "### Primary Hypothesis" with `headline`. */
  card?: string;
  facts?: string[];
  inferences?: string[];
  /** Extra text at the end of section 2. */
  findings?: string;
  rca?: string;
  remediation?: string;
  proof?: string;
  evidence?: string;
}

/** A report in the k8s4agents shape from its parts (absent parts are short and claim nothing). */
export function report(p: Parts): string {
  const card = p.card ?? (p.headline === undefined ? '' : `### Primary Hypothesis\n${p.headline}`);
  return [
    '# Kubernetes Incident Triage Report',
    '## 0. Executive Triage Card',
    card,
    '## 1. Problem Statement',
    'The alert KubePodCrashLooping fired for namespace shop.',
    '## 2. Assessment & Findings',
    '### Observed Facts',
    (p.facts ?? API_FACTS).join('\n'),
    '### Derived Inferences',
    (p.inferences ?? [API_INFERENCE]).join('\n'),
    p.findings ?? '',
    '## 3. Root Cause Analysis',
    p.rca ?? 'See the primary hypothesis.',
    '## 4. Remediation Plan',
    p.remediation ?? '1. Fix the value of `port` in ConfigMap api-config and restart the rollout.',
    '## 5. Proof of Work',
    p.proof ??
      '### Commands Executed\n\n```bash\nkubectl get pods -n shop\n' +
        `kubectl describe pod ${API} -n shop\nkubectl logs ${API} -n shop --previous\n\`\`\``,
    '## 6. Supporting Evidence',
    p.evidence ?? 'See the facts above.',
    '',
  ].join('\n\n');
}

/** The honest api report, with parts replaced. */
export const apiReport = (p: Parts = {}): string => report({ headline: API_HEADLINE, ...p });

export const WORKER_FACTS = [
  `- **[FACT-1]** ${WORKER}'s last state was Terminated with reason OOMKilled and exit code 137 — Source: ${DESCRIBE_WORKER}`,
  `- **[FACT-2]** Its memory limit is 512Mi — Source: ${DESCRIBE_WORKER}`,
  `- **[FACT-3]** The previous container's last line was \`msg="processing batch" size=20000\` — Source: \`kubectl logs ${WORKER} -n shop --previous\``,
];
export const WORKER_HEADLINE =
  'worker-5c8d9 was OOMKilled at its 512Mi memory limit while processing a 20000-item batch [FACT-1][FACT-2][FACT-3] — Confidence: Medium';
export const WORKER_CALLS = ['describe-worker', 'logs-worker-previous'];
export const WORKER_PROOF = `### Commands Executed\n\n\`\`\`bash\nkubectl describe pod ${WORKER} -n shop\nkubectl logs ${WORKER} -n shop --previous\n\`\`\``;
export const workerReport = (p: Parts = {}): string =>
  report({ headline: WORKER_HEADLINE, facts: WORKER_FACTS, inferences: [], proof: WORKER_PROOF, ...p });

/** A console block: the command as typed, then what it printed. */
export const CONSOLE = (command: string, ...lines: string[]) =>
  `\`\`\`console\n$ ${command}\n${lines.join('\n')}\n\`\`\``;

/** The api facts with the third replaced. */
export const apiFactsWith = (third: string) => [API_FACTS[0] ?? '', API_FACTS[1] ?? '', third];

/** The honest api report with a fourth fact, which the inference rests on too. */
export const apiReportWithFact = (statement: string): string =>
  apiReport({
    facts: [...API_FACTS, `- **[FACT-4]** ${statement}`],
    inferences: [API_INFERENCE.replace('FACT-3', 'FACT-3, FACT-4')],
  });
