// `eval promote`: a finished, graded investigation becomes a case that loads like the shipped ones,
// answers the calls the run made from their recorded outputs (offline), answers anything else
// `not-recorded` instead of inventing it, and scores reports against the responder's cause.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { runEvalCommand, runPromote } from '../../../src/cli/commands/eval.js';
import { runCli } from '../../../src/cli/program.js';
import { CliExit, type CliIO } from '../../../src/cli/io.js';
import { compileCluster } from '../../../src/eval/cases/compile.js';
import { loadCase } from '../../../src/eval/cases/load.js';
import { answer } from '../../../src/eval/shim/answer.js';
import { answerRequest } from '../../../src/eval/prometheus/frozen.js';
import { compileFrozenPrometheus } from '../../../src/eval/prometheus/recordings.js';
import { scoreRun } from '../../../src/eval/score/score.js';
import { recordFeedback } from '../../../src/feedback/feedback.js';
import { parseKubectl } from '../../../src/kubectl/parse.js';
import { classifyKubectl } from '../../../src/kubectl/policy/classify.js';
import { incidentIn, succeededRun, writeRun } from '../../support/status-root.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

let root: { dir: string; cleanup: () => Promise<void> };
let out: string[];
let io: CliIO;
beforeEach(async () => {
  root = await tempDir('triage-promote-');
  out = [];
  io = {
    stdout: (t) => void out.push(t),
    stderr: () => undefined,
    env: { ANTHROPIC_API_KEY: 'sk-ant-promote-secret-0123456789' },
    cwd: root.dir,
  };
});
afterEach(async () => root.cleanup());

const RUN = 'run-1';
const finished = succeededRun(RUN);

const PODS =
  'NAME                        READY   STATUS             RESTARTS   AGE\npayments-api-7c9d-x2        0/1     CrashLoopBackOff   14         1h\n';
const SECRET = 'NAME          TYPE     DATA   AGE\npayments-db   Opaque   2      40d\n';
const RESTARTS = 'max by (pod) (kube_pod_container_status_restarts_total{namespace="payments"})';

/** A finished investigation with its recorded cluster calls and outputs, as the broker writes them. */
async function investigation(): Promise<string> {
  const dir = await incidentIn(root.dir, 'payments-crash', finished, undefined, {
    namespace: 'payments',
    resource: { apiVersion: 'v1', kind: 'Pod', name: 'payments-api-7c9d-x2', namespace: 'payments' },
  });
  await writeRun(dir, RUN, { answer: 'Hypothesis: bad image; confidence high' }, '# Report\n');
  const runDir = path.join(dir, '.triage', 'runs', RUN);
  const call = (argv: string[], decision = 'allowed') => ({
    at: '2026-11-26T09:00:00Z',
    tool: 'kubectl',
    by: 'guard',
    argv,
    normalized: parseKubectl(argv).normalized,
    category: 'read',
    decision,
    rule: 'x',
    exitCode: decision === 'allowed' ? 0 : 126,
    durationMs: 5,
    stdoutBytes: 0,
    stderrBytes: 0,
  });
  const calls = [
    call(['get', 'pods', '-n', 'payments']),
    call(['delete', 'pod', 'x', '-n', 'payments'], 'refused'),
    call(['get', 'secret', 'payments-db', '-n', 'payments']),
    call(['logs', 'payments-api-7c9d-x2', '-n', 'payments']),
    {
      ...call(['query', RESTARTS]),
      tool: 'prometheus',
      normalized: `promql query '${RESTARTS}'`,
    },
  ];
  await writeFile(
    path.join(runDir, 'cluster-calls.jsonl'),
    calls.map((c) => JSON.stringify(c)).join('\n') + '\n',
  );
  const outputs = [
    { call: 1, by: 'guard', normalized: calls[0]?.normalized, exitCode: 0, stdout: PODS, stderr: '' },
    { call: 3, by: 'guard', normalized: calls[2]?.normalized, exitCode: 0, stdout: SECRET, stderr: '' },
    {
      call: 4,
      by: 'guard',
      normalized: calls[3]?.normalized,
      exitCode: 0,
      stdout: 'connecting with key sk-ant-promote-secret-0123456789\n',
      stderr: '',
      cut: { stdoutBytes: 1000, stderrBytes: 0, by: 'call' },
    },
    {
      call: 5,
      tool: 'prometheus',
      by: 'guard',
      normalized: calls[4]?.normalized,
      exitCode: 0,
      stdout: `${RESTARTS} at 2026-11-26T09:00:00Z: 1 series\nVALUE  SERIES\n14     {pod="payments-api-7c9d-x2"}\n`,
      stderr: '',
      prometheus: {
        endpoint: 'query',
        params: [
          ['query', RESTARTS],
          ['time', '1795683600'],
          ['timeout', '30s'],
        ],
        httpStatus: 200,
        answer: {
          status: 'success',
          data: {
            resultType: 'vector',
            result: [{ metric: { pod: 'payments-api-7c9d-x2' }, value: [1795683600, '14'] }],
          },
        },
      },
    },
  ];
  await writeFile(
    path.join(runDir, 'cluster-outputs.jsonl'),
    outputs.map((o) => JSON.stringify(o)).join('\n') + '\n',
  );
  return dir;
}

/** An investigation a responder marked wrong with its cause, promoted to a case under cases/. */
async function promotedCase(): Promise<{ dir: string; caseDir: string }> {
  const dir = await investigation();
  await recordFeedback(
    dir,
    { verdict: 'wrong', cause: 'secret payments-db lost its DATABASE_URL key in a rotation' },
    'api',
    { audit: new AuditLog() },
  );
  const caseDir = path.join(root.dir, 'cases', 'payments-crash');
  expect(await runPromote(dir, { out: caseDir }, undefined, io)).toBe(0);
  return { dir, caseDir };
}

describe('eval promote', () => {
  it('writes a case that answers recorded calls offline, refuses to invent the rest, and scores against the responder cause', async () => {
    const { caseDir } = await promotedCase();
    expect(out.join('')).toContain(
      '2 recorded kubectl answers and 1 Prometheus answers; true cause object/payments-db',
    );
    expect(out.join('')).toContain(
      'left out kubectl logs payments-api-7c9d-x2 -n payments: its output was cut',
    );

    const evalCase = await loadCase(caseDir);
    expect(evalCase.expected.root_cause.entities).toEqual([
      { id: 'object/payments-db', match: ['payments-db'] },
    ]);
    expect(evalCase.expected.summary).toContain('lost its DATABASE_URL key');
    const cluster = await compileCluster(caseDir, evalCase.name);
    const recorded = answer(classifyKubectl(['get', 'pods', '--namespace=payments']), cluster);
    expect(recorded).toMatchObject({ stdout: PODS, exitCode: 0, answeredFrom: 'commands' });
    const unrecorded = answer(
      classifyKubectl(['describe', 'pod', 'payments-api-7c9d-x2', '-n', 'payments']),
      cluster,
    );
    expect(unrecorded).toMatchObject({ exitCode: 1, answeredFrom: 'not-recorded' });
    expect(unrecorded.stderr).toContain('not-recorded');
    const mutating = answer(classifyKubectl(['delete', 'secret', 'payments-db', '-n', 'payments']), cluster);
    expect(mutating.answeredFrom).toBe('refused');
    // The promql answer is the case's recorded Prometheus: asked again "now" it answers the same value;
    // anything else is not recorded.
    const frozen = await compileFrozenPrometheus(caseDir, evalCase.name, cluster.now);
    expect(frozen?.recordings).toHaveLength(1);
    const now = Date.parse(cluster.now) / 1000;
    const again = answerRequest(
      frozen!,
      'query',
      new URLSearchParams({ query: RESTARTS, time: String(now) }),
    );
    expect(again.body).toEqual({
      status: 'success',
      data: {
        resultType: 'vector',
        result: [{ metric: { pod: 'payments-api-7c9d-x2' }, value: [now, '14'] }],
      },
    });
    const other = answerRequest(frozen!, 'query', new URLSearchParams({ query: 'up', time: String(now) }));
    expect(other.body).toMatchObject({ status: 'error', errorType: 'not_recorded' });

    const score = (report: string) =>
      scoreRun({
        expected: evalCase.expected,
        report,
        calls: [],
        objectNames: [],
        reportSections: ['Root Cause'],
        runStatus: 'succeeded',
      });
    const right = score(
      '## Root Cause\nSecret payments-db no longer holds DATABASE_URL after the rotation.\n',
    );
    const wrong = score('## Root Cause\nThe image tag of payments-api is wrong.\n');
    expect(right.rootCause.entityScore).toBe(1);
    expect(wrong.rootCause.entityScore).toBe(0);
    const files = await Promise.all(
      ['incident.json', 'expected.yaml', 'cluster/cluster.yaml', 'cluster/commands.yaml'].map((f) =>
        readFile(path.join(caseDir, f), 'utf8'),
      ),
    );
    for (const text of files) expect(text).not.toContain('sk-ant-promote-secret-0123456789');
  });

  it('writes a case that `eval` runs offline and scores against the responder cause', async () => {
    const { caseDir } = await promotedCase();
    // A stand-in agent on the process engine: it calls the case's kubectl (a recorded call and one
    // that was never recorded) and writes a report naming the responder's cause.
    const configFile = path.join(root.dir, 'eval.yaml');
    await writeFile(
      configFile,
      [
        `workspaces_root: ${path.join(root.dir, 'incidents')}`,
        'engine: process',
        `agent: { name: claude, command: ${path.join(REPO_ROOT, 'test/fixtures/evals/promoted-agent.sh')}, timeout: 1m, min_report_bytes: 10 }`,
        'gateway: { enabled: false }',
        'kubectl: { access_check: false }',
        'http: { port: 0 }',
        '',
      ].join('\n'),
    );
    const out = path.join(root.dir, 'scored');
    const code = await runEvalCommand(caseDir, { variants: 'no-preload', repeat: '1', out }, configFile, {
      ...io,
      env: { ...io.env, PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root.dir },
    });
    const scorecard = JSON.parse(await readFile(path.join(out, 'scorecard.json'), 'utf8')) as {
      cells: {
        status: string;
        error?: string;
        runDir?: string;
        score?: { rootCause: { entityScore: number } };
        kubectlRecord?: string;
      }[];
    };
    const [cell] = scorecard.cells;
    expect(cell?.status, cell?.error).toBe('succeeded');
    // The guard's broker ran the shim, but under the process engine the agent runs as the daemon's
    // user and could rewrite the bundle: the eval does not call that record the daemon's alone.
    expect(cell?.kubectlRecord).toBe('agent-writable');
    expect(cell?.score?.rootCause.entityScore).toBe(1);
    expect(code).toBe(0);
    const calls = (await readFile(path.join(cell?.runDir ?? '', 'kubectl-calls.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { normalized: string; answeredFrom: string });
    expect(calls.map((c) => [c.normalized, c.answeredFrom])).toEqual([
      ['get pods --namespace=payments', 'commands'],
      ['describe pods/payments-api-7c9d-x2 --namespace=payments', 'not-recorded'],
    ]);
  });

  it('`eval promote --out DIR` on the command line writes the case into DIR, wherever --out is placed', async () => {
    const dir = await investigation();
    await recordFeedback(dir, { verdict: 'wrong', cause: 'secret payments-db lost its key' }, 'api', {
      audit: new AuditLog(),
    });
    const placements: [string, string[]][] = [
      ['after the workspace', ['eval', 'promote', dir, '--out', 'after']],
      ['before the workspace', ['eval', 'promote', '--out', 'before', dir]],
      ['before `promote`', ['eval', '--out', 'parent', 'promote', dir]],
    ];
    for (const [where, argv] of placements) {
      const errors: string[] = [];
      const code = await runCli(argv, { ...io, stderr: (t) => void errors.push(t) });
      expect(code, `${where}: ${errors.join('')}`).toBe(0);
      const caseDir = path.join(root.dir, argv[argv.indexOf('--out') + 1] ?? '');
      expect((await loadCase(caseDir)).expected.summary, where).toContain('lost its key');
    }
    // Nothing went to the default folder.
    await expect(
      readFile(path.join(root.dir, 'evals', 'cases', 'payments-crash', 'expected.yaml')),
    ).rejects.toThrow(/ENOENT/);
  });

  it('refuses an investigation without feedback, an unfinished one, and a non-empty target, saying what to do', async () => {
    const dir = await investigation();
    const fail = async (flags: { out?: string; entity?: string[] }) => {
      const err = await runPromote(dir, flags, undefined, io).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CliExit);
      return err as CliExit;
    };
    const noFeedback = await fail({});
    expect(noFeedback.code).toBe(1);
    expect(noFeedback.message).toContain('has no feedback yet');
    await recordFeedback(dir, { verdict: 'partly' }, 'api', { audit: new AuditLog() });
    expect((await fail({})).message).toContain('without a cause');
    expect((await fail({ entity: ['not a name'] })).code).toBe(2);
    const taken = path.join(root.dir, 'taken');
    await mkdir(taken);
    await writeFile(path.join(taken, 'x'), '');
    await recordFeedback(dir, { verdict: 'correct', cause: 'payments-db rotation' }, 'api', {
      audit: new AuditLog(),
    });
    expect((await fail({ out: taken })).message).toContain('is not empty');
  });
});
