import { describe, expect, it } from 'vitest';
import { checkEvidence } from '../../../src/evidence/check.js';
import { readClaims } from '../../../src/evidence/claims.js';
import { CITING_REPORT, recorded } from '../../support/evidence.js';
import { templateReport } from '../../support/reports.js';

const PODS =
  'NAME             READY   STATUS             RESTARTS\napi-7d9f-x2k9q    0/1     CrashLoopBackOff   14\n';
const DESCRIBE = [
  'Name:             api-7d9f-x2k9q',
  'Namespace:        shop',
  'Containers:',
  '  api:',
  '    State:          Waiting',
  '      Reason:       CrashLoopBackOff',
  '    Last State:     Terminated',
  '      Reason:       Error',
  '      Exit Code:    1',
  '    Restart Count:  14',
  '',
].join('\n');
const LOGS = 'starting api v2.3.1\npanic: missing environment variable DATABASE_URL\n';

const texts = (lines: { text: string }[]) => lines.map((l) => l.text);

/** Every call CITING_REPORT cites, made in other spellings (flag order, po, -p, --namespace=). */
const allCited = () =>
  recorded([
    { argv: ['get', 'po', '--namespace=shop'], stdout: PODS },
    { argv: ['-n', 'shop', 'describe', 'po', 'api-7d9f-x2k9q'], stdout: DESCRIBE },
    { argv: ['logs', '-p', 'api-7d9f-x2k9q', '--namespace', 'shop'], stdout: LOGS },
  ]);

describe('readClaims', () => {
  it('takes commands from Commands Executed and fact sources, quoted lines from evidence sections, never from plans', () => {
    const claims = readClaims(CITING_REPORT);
    expect(claims.commands.map((c) => c.text)).toEqual([
      'kubectl get pods -n shop',
      'kubectl describe pod api-7d9f-x2k9q -n shop',
      'kubectl get pods -n shop',
      'kubectl describe pod api-7d9f-x2k9q -n shop',
      'kubectl logs api-7d9f-x2k9q -n shop --previous',
    ]);
    expect(claims.commands[3]?.pipes).toEqual(['grep -A3 State']);
    expect(claims.commands.map((c) => c.where).slice(0, 2)).toEqual(['FACT-1', 'FACT-2']);
    expect(claims.blocks.flatMap((b) => texts(b.lines))).toEqual([
      'panic:   missing environment variable DATABASE_URL',
    ]);
    expect(claims.facts.map((f) => [f.id, f.text])).toEqual([
      ['FACT-1', 'api-7d9f-x2k9q restarted 14 times'],
      ['FACT-2', 'The container exits with exit code 1'],
    ]);
    expect(claims.inferences).toEqual([
      { id: 'INF-1', text: expect.stringContaining('fails at start-up'), cites: ['FACT-1', 'FACT-2'] },
    ]);
    expect(claims.headline).toMatchObject({ cites: ['INF-1'], confidence: 'High' });
  });

  it('reads the k8s4agents template report', () => {
    const claims = readClaims(templateReport());
    expect(claims.commands.map((c) => c.text)).toEqual([
      'kubectl get pods -n shop',
      'kubectl get pods -n shop',
    ]);
    expect(claims.blocks.flatMap((b) => texts(b.lines))).toEqual(['parse error']);
  });

  it('reads facts and quotes wherever the report puts them: tables, nested items, HTML, footnotes, console blocks', () => {
    const report = [
      '## Facts',
      '| Fact | Statement | Source |',
      '|---|---|---|',
      '| FACT-1 | api restarted 14 times | `k get po -n shop` |',
      '',
      '- **[FACT-2]** The previous log ends in a panic',
      '  - Source: `kubectl logs api -n shop -p | grep panic`',
      '  ```',
      '  panic: missing environment variable DATABASE_URL',
      '  ```',
      '- **[FACT-3]** The alert fired for the api — Source: the alert (incident.json)',
      '',
      '## Root Cause Analysis',
      '<pre>',
      '2026-11-28T16:35:01Z FATAL made up',
      '</pre>',
      '',
      'See the log.[^1]',
      '',
      '[^1]: Log: 2026-11-28T16:35:01Z FATAL another line',
      '',
      '```console',
      '$ kubectl get pods -n shop',
      'api-7d9f-x2k9q    0/1     CrashLoopBackOff   14',
      '```',
      '## Remediation',
      '```yaml',
      'memory: 512Mi',
      '```',
      '```',
      'kubectl rollout restart deploy/api',
      '2026-11-28T16:35:01Z ERROR a log line pasted into a plan',
      '```',
    ].join('\n');
    const claims = readClaims(report);
    expect(
      claims.facts.map((f) => [f.id, f.sources.map((s) => [s.text, ...s.pipes].join(' | ')), f.tiers]),
    ).toEqual([
      ['FACT-1', ['kubectl get po -n shop'], []],
      ['FACT-2', ['kubectl logs api -n shop -p | grep panic'], []],
      ['FACT-3', [], ['alert']],
    ]);
    expect(texts(claims.facts[1]?.quotes ?? [])).toEqual([
      'panic: missing environment variable DATABASE_URL',
    ]);
    expect(claims.blocks.map((b) => [b.where, texts(b.lines), b.lines[0]?.command?.text])).toEqual([
      ['root cause analysis', ['2026-11-28T16:35:01Z FATAL made up'], undefined],
      ['root cause analysis', ['2026-11-28T16:35:01Z FATAL another line'], undefined],
      [
        'root cause analysis',
        ['api-7d9f-x2k9q    0/1     CrashLoopBackOff   14'],
        'kubectl get pods -n shop',
      ],
      ['remediation', ['2026-11-28T16:35:01Z ERROR a log line pasted into a plan'], undefined],
    ]);
  });
});

describe('checkEvidence', () => {
  it('names a cited describe that never ran and a quoted log line no output holds: not grounded', () => {
    const evidence = checkEvidence({
      report: CITING_REPORT,
      ...recorded([{ argv: ['get', 'pods', '-n', 'shop'], stdout: PODS }]),
    });
    expect(evidence.verdict).toBe('partial');
    expect(evidence.citedNotRun).toEqual([
      'kubectl describe pod api-7d9f-x2k9q -n shop (FACT-2)',
      'kubectl describe pod api-7d9f-x2k9q -n shop (commands executed)',
      'kubectl logs api-7d9f-x2k9q -n shop --previous (commands executed)',
    ]);
    expect(evidence.excerptsNotFound).toEqual([
      'panic: missing environment variable DATABASE_URL (log excerpts)',
    ]);
    expect(evidence.facts).toBe(2);
    expect(evidence.claims?.find((c) => c.id === 'FACT-2')).toMatchObject({
      status: 'unsupported',
      why: 'it cites `kubectl describe pod api-7d9f-x2k9q -n shop`, which never ran',
    });
    expect(evidence).toMatchObject({ claimsSupported: 1, claimsTotal: 5 });
  });

  it('is grounded once those calls ran, however the agent spelled them (flag order, po, -p, --namespace=)', () => {
    const evidence = checkEvidence({
      report: CITING_REPORT,
      ...allCited(),
    });
    expect(evidence).toMatchObject({
      verdict: 'grounded',
      facts: 2,
      unverified: [],
      citedNotRun: [],
      excerptsNotFound: [],
      gaps: [],
      headline: 'The api container exits at start-up with exit code 1 [INF-1]',
      claimsSupported: 5,
      claimsTotal: 5,
      checks: ['deterministic'],
    });
    expect(evidence.claims?.map((c) => [c.kind, c.id ?? '', c.status])).toEqual([
      ['headline', '', 'supported'],
      ['fact', 'FACT-1', 'supported'],
      ['fact', 'FACT-2', 'supported'],
      ['inference', 'INF-1', 'supported'],
      ['quote', 'log excerpts', 'supported'],
    ]);
  });

  it('does not take a call in another namespace or of another pod for the cited one', () => {
    const evidence = checkEvidence({
      report: CITING_REPORT,
      ...recorded([
        { argv: ['get', 'pods', '-n', 'other'], stdout: PODS },
        {
          argv: ['describe', 'pod', 'api-other', '-n', 'shop'],
          stdout: DESCRIBE.replace(/api-7d9f-x2k9q/g, 'api-other'),
        },
        { argv: ['logs', 'api-7d9f-x2k9q', '-n', 'shop'], stdout: LOGS },
      ]),
    });
    expect(evidence.citedNotRun).toHaveLength(5);
    expect(evidence.claims?.find((c) => c.id === 'FACT-1')?.why).toMatch(
      /kubectl get pods -n shop`, which never ran/,
    );
    expect(evidence.verdict).not.toBe('grounded');
  });

  it('says which citations were refused or failed, and names the gaps (rule, RBAC denial, not found, unreachable)', () => {
    const evidence = checkEvidence({
      report: CITING_REPORT,
      ...recorded([
        { argv: ['get', 'pods', '-n', 'shop'], stdout: PODS },
        { argv: ['describe', 'pod', 'api-7d9f-x2k9q', '-n', 'shop'], refused: 'exclude "kubectl describe"' },
        {
          argv: ['logs', 'api-7d9f-x2k9q', '-n', 'shop', '--previous'],
          exitCode: 1,
          stderr:
            'Error from server (Forbidden): pods "api-7d9f-x2k9q" is forbidden: User "triage" cannot get resource "pods/log"\n',
        },
        {
          argv: ['get', 'deploy', 'api', '-n', 'shop'],
          exitCode: 1,
          stderr: 'Error from server (NotFound): deployments.apps "api" not found\n',
        },
        {
          argv: ['get', 'nodes'],
          exitCode: 1,
          stderr: 'Unable to connect to the server: dial tcp 10.0.0.1:443: i/o timeout\n',
        },
      ]),
      triageText: 'panic: missing environment variable DATABASE_URL\n',
      knownGaps: ['the triage output was cut at context.triage_log_cap'],
    });
    expect(evidence.verdict).toBe('partial');
    expect(evidence.unverified.slice(0, 3)).toEqual([
      'kubectl describe pod api-7d9f-x2k9q -n shop (FACT-2): refused',
      'kubectl describe pod api-7d9f-x2k9q -n shop (commands executed): refused',
      'kubectl logs api-7d9f-x2k9q -n shop --previous (commands executed): ran and failed',
    ]);
    expect(evidence.claims?.find((c) => c.id === 'FACT-2')?.why).toBe(
      '`kubectl describe pod api-7d9f-x2k9q -n shop` was refused (exclude "kubectl describe")',
    );
    expect(evidence.claims?.find((c) => c.id === 'log excerpts')).toMatchObject({ status: 'alert' });
    expect(evidence.gaps).toEqual([
      'the triage output was cut at context.triage_log_cap',
      'refused (exclude "kubectl describe"): kubectl describe pods/api-7d9f-x2k9q --namespace=shop',
      'failed (RBAC denial, exit 1): kubectl logs pods/api-7d9f-x2k9q --namespace=shop --previous',
      'failed (not found, exit 1): kubectl get deployments/api --namespace=shop',
      'failed (cluster unreachable, exit 1): kubectl get nodes',
    ]);
  });

  it('is ungrounded when no cluster read succeeded, and says the calls were not recorded when they were not', () => {
    const unreachable = checkEvidence({
      report: CITING_REPORT,
      ...recorded([
        {
          argv: ['get', 'pods', '-n', 'shop'],
          exitCode: 1,
          stderr:
            'The connection to the server localhost:8080 was refused - did you specify the right host or port?\n',
        },
      ]),
      knownGaps: ['cluster default was unreachable when the run started'],
    });
    expect(unreachable.verdict).toBe('ungrounded');
    expect(unreachable.gaps).toContain(
      'failed (cluster unreachable, exit 1): kubectl get pods --namespace=shop',
    );
    expect(unreachable.gaps).toContain('no cluster read succeeded during the run');
    const unrecorded = checkEvidence({
      report: CITING_REPORT,
      calls: [],
      outputs: [],
      unrecorded: 'kubectl.guard is off',
    });
    expect(unrecorded.verdict).toBe('ungrounded');
    expect(unrecorded.gaps[0]).toBe(
      'cluster calls were not recorded (kubectl.guard is off): citations cannot be checked',
    );
  });

  it('is ungrounded when the access check found the cluster unreachable, whatever the report cites', () => {
    const evidence = checkEvidence({
      report: CITING_REPORT,
      ...allCited(),
      unreachable: 'cluster default cannot be reached: connection refused',
    });
    expect(evidence).toMatchObject({
      verdict: 'ungrounded',
      reason:
        'no cluster access: the access check found it unreachable (cluster default cannot be reached: connection refused)',
    });
  });

  it("with the agent's calls unrecorded, a command only the agent ran is unverified (not 'cited but never run') and the gap names the triage calls that were recorded", () => {
    const report =
      '# R\n\n## Commands Executed\n\n```\nkubectl get pods -n shop\nkubectl describe pod web-1 -n shop\n```\n';
    const withTriage = recorded([{ argv: ['get', 'pods', '-n', 'shop'], stdout: PODS }]);
    const evidence = checkEvidence({
      report,
      calls: withTriage.calls.map((c) => ({ ...c, by: 'triage' as const })),
      outputs: withTriage.outputs,
      unrecorded: 'the engine cannot reach a kubectl broker',
    });
    expect(evidence.citedNotRun).toEqual([]);
    expect(evidence.unverified[0]).toBe(
      "kubectl describe pod web-1 -n shop (commands executed): not in the record (the agent's calls were not recorded)",
    );
    expect(evidence.verified).toBe(1);
    expect(evidence.verdict).not.toBe('grounded');
    expect(evidence.gaps[0]).toBe(
      "the agent's cluster calls were not recorded (the engine cannot reach a kubectl broker); only the triage script's 1 call was, so commands the agent ran cannot be checked",
    );
  });

  it('finds quoted lines whitespace-normalised, as part of a longer line, and from the triage only as the triage tier', () => {
    const report =
      '# R\n\n## Supporting Evidence\n\n```\nWarning  FailedScheduling   0/3 nodes are available\n  Insufficient   cpu\n```\n\n## Commands Executed\n\n```\nkubectl get pods -n shop\n```\n';
    const event = '12m  Warning   FailedScheduling  0/3 nodes are available: 3 Insufficient cpu.\n';
    const fromCluster = checkEvidence({
      report,
      ...recorded([
        { argv: ['get', 'pods', '-n', 'shop'], stdout: PODS },
        {
          argv: ['get', 'events', '-n', 'shop'],
          stdout: `LAST SEEN   TYPE      REASON             MESSAGE\n${event}`,
        },
      ]),
    });
    expect(fromCluster.excerptsNotFound).toEqual([]);
    expect(fromCluster.claims?.find((c) => c.kind === 'quote')).toMatchObject({ status: 'supported' });
    const fromTriage = checkEvidence({
      report,
      ...recorded([{ argv: ['get', 'pods', '-n', 'shop'], stdout: PODS }]),
      triageText: event,
    });
    expect(fromTriage.claims?.find((c) => c.kind === 'quote')).toMatchObject({ status: 'alert' });
  });

  it('flags an inference citing a fact the report does not state', () => {
    const report = CITING_REPORT.replace('Based on: FACT-1, FACT-2', 'Based on: FACT-1, FACT-7');
    const evidence = checkEvidence({
      report,
      ...recorded([{ argv: ['get', 'pods', '-n', 'shop'], stdout: PODS }]),
    });
    expect(evidence.claims?.find((c) => c.id === 'INF-1')).toMatchObject({
      status: 'unsupported',
      why: 'it cites FACT-7, which the report does not state',
    });
    expect(evidence.unverified).toContain(
      'INF-1 unsupported: it cites FACT-7, which the report does not state',
    );
  });
});
