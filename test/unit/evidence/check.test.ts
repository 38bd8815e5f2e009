import { describe, expect, it } from 'vitest';
import { checkEvidence } from '../../../src/evidence/check.js';
import { readClaims } from '../../../src/evidence/claims.js';
import { CITING_REPORT, recorded } from '../../support/evidence.js';
import { templateReport } from '../../support/reports.js';

const PODS =
  'NAME             READY   STATUS             RESTARTS\napi-7d9f-x2k9q    0/1     CrashLoopBackOff   14\n';
const LOGS = 'starting api v2.3.1\npanic: missing environment variable DATABASE_URL\n';

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
    expect(claims.commands.map((c) => c.where).slice(0, 2)).toEqual(['FACT-1', 'FACT-2']);
    expect(claims.excerpts.map((e) => e.text)).toEqual(['panic: missing environment variable DATABASE_URL']);
    expect(claims.facts).toEqual(['FACT-1', 'FACT-2']);
    expect(claims.inferences).toEqual([{ id: 'INF-1', cites: ['FACT-1', 'FACT-2'] }]);
  });

  it('reads the k8s4agents template report', () => {
    const claims = readClaims(templateReport());
    expect(claims.commands.map((c) => c.text)).toEqual([
      'kubectl get pods -n shop',
      'kubectl get pods -n shop',
    ]);
    expect(claims.excerpts.map((e) => e.text)).toEqual(['parse error']);
  });
});

describe('checkEvidence', () => {
  it('names a cited describe that never ran and a quoted log line no output holds: not grounded', () => {
    const evidence = checkEvidence({
      report: CITING_REPORT,
      ...recorded([{ argv: ['get', 'pods', '-n', 'shop'], stdout: PODS }]),
    });
    expect(evidence.verdict).not.toBe('grounded');
    expect(evidence.citedNotRun).toEqual([
      'kubectl describe pod api-7d9f-x2k9q -n shop (FACT-2)',
      'kubectl describe pod api-7d9f-x2k9q -n shop (commands executed)',
      'kubectl logs api-7d9f-x2k9q -n shop --previous (commands executed)',
    ]);
    expect(evidence.excerptsNotFound).toEqual([
      'panic: missing environment variable DATABASE_URL (log excerpts)',
    ]);
    expect(evidence.facts).toBe(2);
  });

  it('is grounded once those calls ran, however the agent spelled them (flag order, po, -p, --namespace=)', () => {
    const evidence = checkEvidence({
      report: CITING_REPORT,
      ...recorded([
        { argv: ['get', 'po', '--namespace=shop'], stdout: PODS },
        { argv: ['-n', 'shop', 'describe', 'po', 'api-7d9f-x2k9q'], stdout: 'State: Waiting\n' },
        { argv: ['logs', '-p', 'api-7d9f-x2k9q', '--namespace', 'shop'], stdout: LOGS },
      ]),
    });
    expect(evidence).toEqual({
      verdict: 'grounded',
      facts: 2,
      verified: 6,
      unverified: [],
      citedNotRun: [],
      excerptsNotFound: [],
      gaps: [],
    });
  });

  it('does not take a call in another namespace or of another pod for the cited one', () => {
    const evidence = checkEvidence({
      report: CITING_REPORT,
      ...recorded([
        { argv: ['get', 'pods', '-n', 'other'], stdout: PODS },
        { argv: ['describe', 'pod', 'api-other', '-n', 'shop'] },
        { argv: ['logs', 'api-7d9f-x2k9q', '-n', 'shop'], stdout: LOGS },
      ]),
    });
    expect(evidence.citedNotRun).toHaveLength(5);
    expect(evidence.verdict).toBe('ungrounded');
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
    expect(evidence.unverified).toEqual([
      'kubectl describe pod api-7d9f-x2k9q -n shop (FACT-2): refused',
      'kubectl describe pod api-7d9f-x2k9q -n shop (commands executed): refused',
      'kubectl logs api-7d9f-x2k9q -n shop --previous (commands executed): ran and failed',
    ]);
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
    expect(evidence.unverified).toEqual([
      "kubectl describe pod web-1 -n shop (commands executed): not in the record (the agent's calls were not recorded)",
    ]);
    expect(evidence.verified).toBe(1);
    expect(evidence.verdict).toBe('partial');
    expect(evidence.gaps[0]).toBe(
      "the agent's cluster calls were not recorded (the engine cannot reach a kubectl broker); only the triage script's 1 call was, so commands the agent ran cannot be checked",
    );
  });

  it('finds quoted lines in the triage output too, whitespace-normalised and as part of a longer line', () => {
    const report =
      '# R\n\n## Supporting Evidence\n\n```\nWarning  FailedScheduling   0/3 nodes are available\n  Insufficient   cpu\n```\n\n## Commands Executed\n\n```\nkubectl get pods -n shop\n```\n';
    const evidence = checkEvidence({
      report,
      ...recorded([{ argv: ['get', 'pods', '-n', 'shop'], stdout: PODS }]),
      triageText: '12m  Warning   FailedScheduling  0/3 nodes are available: 3 Insufficient cpu.\n',
    });
    expect(evidence.excerptsNotFound).toEqual([]);
    expect(evidence.verdict).toBe('grounded');
  });

  it('flags an inference citing a fact the report does not state', () => {
    const report = CITING_REPORT.replace('Based on: FACT-1, FACT-2', 'Based on: FACT-1, FACT-7');
    const evidence = checkEvidence({
      report,
      ...recorded([{ argv: ['get', 'pods', '-n', 'shop'], stdout: PODS }]),
    });
    expect(evidence.unverified).toContain('INF-1 cites FACT-7, which the report does not state');
  });
});
