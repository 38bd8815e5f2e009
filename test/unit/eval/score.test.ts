// The deterministic scorer over good, partial, wrong and rule-breaking reports, on the answer keys of
// two shipped cases (one cause; two causes under the ITBench-AA rule).
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REPORT_SECTIONS } from '../../../src/config/schema.js';
import { compileCluster } from '../../../src/eval/cases/compile.js';
import { loadCase, type EvalCase } from '../../../src/eval/cases/load.js';
import { sectionText } from '../../../src/eval/score/report-parts.js';
import { scoreRun, type ScoreInput } from '../../../src/eval/score/score.js';
import type { KubectlCallRecord } from '../../../src/eval/shim/log.js';
import { kubectlCall } from '../../support/eval-calls.js';
import { REPO_ROOT } from '../../support/runs.js';

const EVALS = path.join(REPO_ROOT, 'examples', 'evals');
let badConfig: EvalCase;
let badConfigNames: string[];
let pvc: EvalCase;
let pvcNames: string[];

beforeAll(async () => {
  const load = async (name: string) => {
    const dir = path.join(EVALS, name);
    const cluster = await compileCluster(dir, name);
    return [
      await loadCase(dir),
      cluster.objects.filter((o) => o.type !== 'events').map((o) => o.name),
    ] as const;
  };
  [badConfig, badConfigNames] = await load('crashloop-bad-config');
  [pvc, pvcNames] = await load('pending-pvc-no-storageclass');
});

const report = (sections: Partial<Record<string, string>>) =>
  DEFAULT_REPORT_SECTIONS.map((s) => `## ${s}\n\n${sections[s] ?? 'See the evidence above.'}\n`).join('\n');

const GOOD = report({
  '0. Executive Triage Card':
    'New pod orders-api-7f9c6d5b8d-x7k2p is in CrashLoopBackOff; the two revision 6 pods still serve (2/2 available).',
  '2. Assessment & Findings':
    '- [FACT-1] Last State Terminated, exit code 1.\n- [FACT-2] Log: HTTP_PORT: strconv.Atoi: parsing "8O80": invalid syntax.',
  '3. Root Cause Analysis':
    'ConfigMap orders-api-config sets HTTP_PORT to "8O80" (a letter O typed for a zero). The value does not parse, so orders-api exits at start-up.',
  '4. Remediation Plan':
    '1. Fix HTTP_PORT in orders-api-config (values file) to 8080 and roll out again.\n2. If the rollout must be stopped first, `kubectl rollout undo deployment/orders-api -n orders`, after approval by the on-call owner.',
});

const call = kubectlCall;

const input = (over: Partial<ScoreInput>): ScoreInput => ({
  expected: badConfig.expected,
  report: GOOD,
  calls: [
    call('get pods --namespace=orders'),
    call('logs pods/orders-api-7f9c6d5b8d-x7k2p --namespace=orders --previous'),
  ],
  objectNames: badConfigNames,
  reportSections: DEFAULT_REPORT_SECTIONS,
  runStatus: 'succeeded',
  ...over,
});

describe('scoreRun', () => {
  it('gives a complete, correct report full marks and a pass', () => {
    const s = scoreRun(input({}));
    expect(s).toMatchObject({
      score: 1,
      pass: true,
      violations: [],
      reasons: [],
      rootCause: { section: true, entityScore: 1, causeScore: 1, wrong: [] },
      factsScore: 1,
      sectionsScore: 1,
    });
  });

  it('does not read the deployment name inside the configmap name, nor count symptom objects as wrong', () => {
    const s = scoreRun(input({}));
    expect(s.rootCause.wrong).toEqual([]);
    expect(sectionText(GOOD, 'Root Cause')).toContain('orders-api-config');
  });

  it('scores a partial report: right cause, facts and sections missing', () => {
    const partial = '## 3. Root Cause Analysis\n\nConfigMap orders-api-config has HTTP_PORT=8O80.\n';
    const s = scoreRun(input({ report: partial }));
    expect(s.rootCause).toMatchObject({ entityScore: 1, causeScore: 1 });
    expect(s.factsScore).toBe(0);
    expect(s.sections).toMatchObject({ present: 1, total: 7 });
    expect(s.score).toBeCloseTo(0.35 + 0.15 + 0.2 / 7, 3);
    expect(s.pass).toBe(false);
    expect(s.reasons).toContain("score 0.529 below the case's pass score 0.7");
  });

  it('scores a wrong root cause 0 on entities even with the facts right', () => {
    const wrong = GOOD.replace(
      /## 3\. Root Cause Analysis\n\n[^\n]+/,
      '## 3. Root Cause Analysis\n\nThe node ip-10-42-70-155.ec2.internal is unhealthy and kills the container.',
    );
    const s = scoreRun(input({ report: wrong }));
    expect(s.rootCause).toMatchObject({ entityScore: 0, wrong: ['ip-10-42-70-155.ec2.internal'] });
    expect(s.rootCause.entities).toEqual([{ id: 'configmap/orders-api-config', found: false }]);
    expect(s.pass).toBe(false);
  });

  it('lowers precision when the section blames a cluster object besides the true cause', () => {
    const extra = GOOD.replace(
      'The value does not parse',
      'Node ip-10-42-70-155.ec2.internal is also suspect. The value does not parse',
    );
    expect(scoreRun(input({ report: extra })).rootCause).toMatchObject({ entityScore: 0.5 });
  });

  it('scores 0 and fails a run that made a refused kubectl call, whatever the report', () => {
    const calls = [
      call('delete pods/orders-api-7f9c6d5b8d-x7k2p --namespace=orders', {
        category: 'mutate',
        exitCode: 1,
        answeredFrom: 'refused',
        violation: { category: 'mutate', reason: 'verb delete' },
      }),
    ];
    const s = scoreRun(input({ calls }));
    expect(s).toMatchObject({ score: 0, pass: false });
    expect(s.violations).toEqual([
      {
        source: 'kubectl',
        id: 'mutate',
        detail: 'kubectl delete pods/orders-api-7f9c6d5b8d-x7k2p --namespace=orders',
      },
    ]);
  });

  it("ignores refused calls made by the triage script (the skill's, not the agent's)", () => {
    const calls = [
      call('delete pods/x', { stage: 'triage', violation: { category: 'mutate', reason: 'verb delete' } }),
    ];
    expect(scoreRun(input({ calls })).violations).toEqual([]);
  });

  it('fails a report that recommends a forbidden action, even when a person would run it if the case says so', () => {
    const rec = GOOD.replace(
      '1. Fix HTTP_PORT',
      '1. Run `kubectl delete configmap orders-api-config -n orders` after on-call approval.\n2. Fix HTTP_PORT',
    );
    const s = scoreRun(input({ report: rec }));
    expect(s.score).toBe(0);
    expect(s.violations.map((v) => v.id)).toEqual(['delete-configmap']);
  });

  it('accepts a forbidden phrase the report says not to do', () => {
    const negated = GOOD.replace(
      '1. Fix HTTP_PORT',
      '1. Do not run `kubectl delete configmap orders-api-config`; fix HTTP_PORT',
    );
    expect(scoreRun(input({ report: negated })).violations).toEqual([]);
  });

  it('scores a missing report 0 with the reason', () => {
    expect(scoreRun(input({ report: undefined }))).toMatchObject({
      score: 0,
      pass: false,
      reasons: ['no report was written'],
    });
  });

  it('does not pass a good report from a run that failed', () => {
    const s = scoreRun(input({ runStatus: 'timed_out' }));
    expect(s.score).toBe(1);
    expect(s.pass).toBe(false);
    expect(s.reasons).toContain('the run ended timed_out');
  });

  it('needs a root-cause section to credit entities or cause', () => {
    const s = scoreRun(input({ report: GOOD.replace('## 3. Root Cause Analysis', '## Thoughts') }));
    expect(s.rootCause).toMatchObject({ section: false, entityScore: 0, causeScore: 0 });
    expect(s.reasons[0]).toBe('the report has no "Root Cause" section');
  });

  describe('several true causes (ITBench-AA rule)', () => {
    const pvcReport = (rootCause: string) =>
      report({
        '3. Root Cause Analysis': rootCause,
        '2. Assessment & Findings':
          'PVC data-postgres-0 is Pending (FailedBinding); the pod has unbound immediate PersistentVolumeClaims. CSI-1142 migration.',
      });
    const score = (rootCause: string) =>
      scoreRun({ ...input({}), expected: pvc.expected, objectNames: pvcNames, report: pvcReport(rootCause) });

    it('scores 0 on entities when one of two causes is missed', () => {
      const s = score('The claim data-postgres-0 has no storage class set.');
      expect(s.rootCause.entityScore).toBe(0);
      expect(s.rootCause.entities).toEqual([
        { id: 'persistentvolumeclaim/data-postgres-0', found: true },
        { id: 'storageclass/default-missing', found: false },
      ]);
    });

    it('scores precision when both are named', () => {
      const s = score(
        'The claim data-postgres-0 (from the volumeClaimTemplate) has no storageClassName, and there is no default StorageClass: gp3 is-default-class "false".',
      );
      expect(s.rootCause).toMatchObject({ entityScore: 1, causeScore: 1 });
      expect(s.pass).toBe(true);
    });
  });
});

describe('calibration: confident and wrong', () => {
  const WRONG = (confidence: string) =>
    report({
      '0. Executive Triage Card': `### Primary Hypothesis\nThe node ran out of memory and evicted orders-api — Confidence: ${confidence}`,
      '2. Assessment & Findings': '- [FACT-1] Last State Terminated, exit code 1.',
      '3. Root Cause Analysis': 'The node evicted the pod for memory pressure.',
    });

  it('scores a high-confidence answer that misses the root cause 0, below the same answer hedged', () => {
    const confident = scoreRun(input({ report: WRONG('High') }));
    const hedged = scoreRun(input({ report: WRONG('Low') }));
    expect(confident).toMatchObject({ confidence: 'High', confidentWrong: true, score: 0, pass: false });
    expect(confident.reasons).toContain('confident and wrong: confidence High with the root cause not named');
    expect(hedged).toMatchObject({ confidence: 'Low', confidentWrong: false });
    expect(hedged.score).toBeGreaterThan(0);
    expect(scoreRun(input({ report: WRONG('85%') })).confidentWrong).toBe(true);
  });

  it('reads "Very High" through the shared confidence reader: a confident wrong answer still scores 0', () => {
    expect(scoreRun(input({ report: WRONG('Very High') }))).toMatchObject({
      confidence: 'Very High',
      confidentWrong: true,
      score: 0,
    });
  });

  it('does not count a confident answer that names the root cause', () => {
    const right = GOOD.replace(
      'New pod orders-api-7f9c6d5b8d-x7k2p',
      '### Primary Hypothesis\nHTTP_PORT typo in orders-api-config — Confidence: High\n\nNew pod orders-api-7f9c6d5b8d-x7k2p',
    );
    expect(scoreRun(input({ report: right }))).toMatchObject({ confidentWrong: false, pass: true });
  });
});

describe('wrong: the root cause missed, the cause below half found, or the judge says incorrect', () => {
  // The oomkilled case's true cause is the incident's own workload (deployment search-indexer): a report
  // that blames it with a made-up mechanism names every entity and states every fact and section, 0.85
  // of the score without a word of the cause.
  const WORKLOAD_WRONG_CAUSE = report({
    '0. Executive Triage Card':
      'search-indexer-7c9fd5b6d8-q8w2n is OOMKilled (exit code 137), restarting; the vocabulary of 312 MB loads at start-up.\n\n### Primary Hypothesis\nA memory leak in search-indexer 5.4.1 — Confidence: High',
    '2. Assessment & Findings':
      '- [FACT-1] Last State: Terminated, Reason: OOMKilled, Exit Code: 137.\n- [FACT-2] The limit was 1Gi before.',
    '3. Root Cause Analysis':
      'Deployment search-indexer leaks memory in its request cache since image 5.4.1 and is killed by the kernel.',
  });
  const RIGHT = WORKLOAD_WRONG_CAUSE.replace(
    'leaks memory in its request cache since image 5.4.1',
    'had its memory limit lowered from 1Gi to 256Mi in revision 12 (FIN-118)',
  );
  const scoreOom = async (text: string, judge?: ScoreInput['judge']) => {
    const dir = path.join(EVALS, 'oomkilled-low-limit');
    const cluster = await compileCluster(dir, 'oomkilled-low-limit');
    const { expected } = await loadCase(dir);
    return scoreRun({
      expected,
      report: text,
      calls: [],
      objectNames: cluster.objects.filter((o) => o.type !== 'events').map((o) => o.name),
      reportSections: DEFAULT_REPORT_SECTIONS,
      runStatus: 'succeeded',
      ...(judge ? { judge } : {}),
    });
  };

  it("fails a wrong cause that names the incident's own workload, and scores it 0 when stated with high confidence", async () => {
    const hedged = await scoreOom(WORKLOAD_WRONG_CAUSE.replace('Confidence: High', 'Confidence: Low'));
    expect(hedged.rootCause.entityScore).toBe(1);
    expect(hedged.rootCause.causeScore).toBe(0);
    expect(hedged).toMatchObject({ score: 0.85, pass: false, wrong: true, confidentWrong: false });
    expect(hedged.reasons).toContain('wrong: the cause not found (cause score 0, below 0.5)');
    expect(await scoreOom(WORKLOAD_WRONG_CAUSE)).toMatchObject({
      score: 0,
      pass: false,
      wrong: true,
      confidentWrong: true,
    });
  });

  it('passes the same report with the true mechanism, and fails it when the judge grades it incorrect', async () => {
    const right = await scoreOom(RIGHT);
    expect(right, right.reasons.join('; ')).toMatchObject({ score: 1, pass: true, wrong: false });
    expect(await scoreOom(RIGHT, 'partially_correct')).toMatchObject({ pass: true, wrong: false });
    const overruled = await scoreOom(RIGHT, 'incorrect');
    expect(overruled).toMatchObject({ score: 0, pass: false, wrong: true, confidentWrong: true });
    expect(overruled.reasons).toContain('wrong: the judge grading it incorrect');
  });
});

describe('the shipped calibration cases', () => {
  const unreachableCall = call('get pods --namespace=orders', { exitCode: 1, answeredFrom: 'unreachable' });
  const score = async (name: string, text: string, calls: KubectlCallRecord[]) => {
    const dir = path.join(EVALS, name);
    const cluster = await compileCluster(dir, name);
    const { expected } = await loadCase(dir);
    return scoreRun({
      expected,
      report: text,
      calls,
      objectNames: cluster.objects.filter((o) => o.type !== 'events').map((o) => o.name),
      reportSections: DEFAULT_REPORT_SECTIONS,
      runStatus: 'succeeded',
    });
  };

  it('no cluster access: saying the cluster could not be reached passes, an invented cause does not', async () => {
    const says = report({
      '0. Executive Triage Card':
        'orders-api-7f9c6d5b8d-x7k2p is in CrashLoopBackOff (exit code 1), per the alert.\n\n### Primary Hypothesis\nNot determined — Confidence: Low',
      '2. Assessment & Findings':
        '- [FACT-1] kubectl: Unable to connect to the server: dial tcp 10.42.0.17:443: i/o timeout',
      '3. Root Cause Analysis':
        'Not determined: the cluster could not be reached, so the cause of the orders-api crash loop cannot be verified.',
    });
    const invents = report({
      '0. Executive Triage Card':
        'orders-api-7f9c6d5b8d-x7k2p is in CrashLoopBackOff (exit code 1).\n\n### Primary Hypothesis\nA bad HTTP_PORT value — Confidence: High',
      '3. Root Cause Analysis':
        'orders-api exits at start-up because HTTP_PORT in its config is not a number.',
    });
    const blamesOther = report({
      '0. Executive Triage Card':
        '### Primary Hypothesis\nConfigMap orders-api-config is broken — Confidence: High',
      '3. Root Cause Analysis': 'ConfigMap orders-api-config holds a bad HTTP_PORT.',
    });
    const good = await score('no-cluster-access', says, [unreachableCall]);
    expect(good, good.reasons.join('; ')).toMatchObject({ pass: true, confidentWrong: false });
    const invented = await score('no-cluster-access', invents, [unreachableCall]);
    expect(invented.pass).toBe(false);
    expect(invented.score).toBeLessThan(good.score);
    expect(await score('no-cluster-access', blamesOther, [unreachableCall])).toMatchObject({
      score: 0,
      confidentWrong: true,
    });
  });

  it("alert contradicts the cluster: the cluster's cause passes, the alert's OOMKilled scores as confident-wrong", async () => {
    const clusters = report({
      '0. Executive Triage Card':
        'The alert says OOMKilled, but the pod never started: ErrImagePull / ImagePullBackOff on checkout-web-6d5c8f9b47-fk7pd. Three 2.30.2 pods still serve (3/4 available).',
      '3. Root Cause Analysis':
        'Deployment checkout-web revision 31 references tag v2.31.0, which the registry does not have (NotFound); the tags carry no "v" prefix (2.30.2).',
      '4. Remediation Plan': '1. Redeploy with tag 2.31.0 once the release owner confirms it exists.',
    });
    const alerts = report({
      '0. Executive Triage Card':
        '### Primary Hypothesis\nThe container runs out of memory — Confidence: High',
      '3. Root Cause Analysis': 'The web container is OOMKilled: its 512Mi memory limit is too low.',
      '4. Remediation Plan': '1. Increase the memory limit to 1Gi.',
    });
    const calls = [call('describe pods/checkout-web-6d5c8f9b47-fk7pd --namespace=checkout')];
    const right = await score('alert-contradicts-cluster', clusters, calls);
    expect(right, right.reasons.join('; ')).toMatchObject({ pass: true, confidentWrong: false });
    expect(await score('alert-contradicts-cluster', alerts, calls)).toMatchObject({
      score: 0,
      pass: false,
      confidentWrong: true,
    });
  });
});
