// The two shipped eval cases whose cause shows only in metrics (memory-leak-restarts,
// cpu-throttling-latency), run offline by the REAL Claude Code CLI playing the scripted model: with the
// cases' recorded Prometheus answers served by the eval's stand-in both pass, the agent's promql calls
// answered through the run's broker and the alert's expression preloaded; without them (the recordings
// removed, so promql has no Prometheus) both fail.
import { cp, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_FILES } from '../../src/workspace/layout.js';
import type { Scorecard } from '../../src/eval/types.js';
import { readCallLog } from '../../src/kubectl/broker/calls.js';
import { requireCli } from '../support/agent-clis.js';
import { offlineArgs, offlineEval, runEvalCli } from '../support/eval-cli.js';
import { REPO_ROOT } from '../support/runs.js';

const cli = requireCli('claude');
const SUITE = path.join(REPO_ROOT, 'examples', 'evals');
const CASES = ['cpu-throttling-latency', 'memory-leak-restarts'];
const API_KEY = 'sk-ant-eval-metrics-0123456789';

/** The run folder of one cell. */
async function runDir(out: string, name: string): Promise<string> {
  const runs = path.join(out, 'runs', name, 'claude--sonnet--preload--r1', 'workspace', '.triage', 'runs');
  const [run] = await readdir(runs);
  return path.join(runs, run ?? '');
}

describe.skipIf(!cli)('the metric-only eval cases, offline with the real Claude CLI', () => {
  const harness = offlineEval('triage-eval-metrics-', cli ?? '', API_KEY);

  /** A suite holding copies of the two cases (without their recorded Prometheus when `withMetrics` is false). */
  async function suite(name: string, withMetrics: boolean): Promise<string> {
    const dir = path.join(harness.root.dir, name);
    for (const c of CASES) {
      await cp(path.join(SUITE, c), path.join(dir, c), { recursive: true });
      if (!withMetrics) await rm(path.join(dir, c, 'cluster', 'prometheus.yaml'));
    }
    return dir;
  }

  /** Runs `eval` on a copy of the two cases; checks its exit code and returns its scorecard. */
  async function evalSuite(name: string, withMetrics: boolean, code: number) {
    const out = path.join(harness.root.dir, `${name}-out`);
    const args = offlineArgs(await suite(name, withMetrics), out, '0.9', '--agents', 'claude');
    const result = await runEvalCli(args, harness.env, 600_000);
    expect(result.code, result.stderr.slice(-3000)).toBe(code);
    const scorecard = JSON.parse(await readFile(path.join(out, 'scorecard.json'), 'utf8')) as Scorecard;
    return { out, scorecard };
  }

  it('passes both with the recorded Prometheus: promql answered through the broker, the alert preloaded', async () => {
    const { out, scorecard } = await evalSuite('with-metrics', true, 0);
    expect(
      scorecard.cells.map((c) => [
        c.case,
        c.score?.pass,
        c.score?.score,
        c.metrics.promqlCalls,
        c.metrics.unanswered,
      ]),
    ).toEqual([
      ['cpu-throttling-latency', true, 1, 3, 0],
      ['memory-leak-restarts', true, 1, 3, 0],
    ]);
    // The agent's promql went through the run's broker to the eval's stand-in, and is recorded.
    const leak = await runDir(out, 'memory-leak-restarts');
    const { records } = await readCallLog(path.join(leak, RUN_FILES.clusterCalls));
    expect(records.filter((r) => r.tool === 'prometheus').map((r) => [r.by, r.decision, r.exitCode])).toEqual(
      [
        ['guard', 'allowed', 0],
        ['guard', 'allowed', 0],
        ['guard', 'allowed', 0],
      ],
    );
    const report = await readFile(path.join(leak, '..', '..', '..', 'output', 'investigation.md'), 'utf8');
    expect(report).toContain(
      '{pod="ledger-sync-6f8d9c7b54-h2kxq"}: 25 points, min 234 at 2026-03-18T07:25:00Z, max 12042 at 2026-03-18T05:10:00Z, last 810',
    );
    // The throttling case came from an alert: its expression's recorded values were preloaded.
    const throttling = await runDir(out, 'cpu-throttling-latency');
    const prompt = await readFile(path.join(throttling, RUN_FILES.promptSent), 'utf8');
    expect(prompt).toMatch(/<alert_metrics>\n[\s\S]*\n2\.4347826086956514 +\{\}\n[\s\S]*<\/alert_metrics>/);
    const triage = (await readCallLog(path.join(throttling, RUN_FILES.clusterCalls))).records.filter(
      (r) => r.tool === 'prometheus' && r.by === 'triage',
    );
    expect(triage.map((r) => [r.normalized.split(' ')[1], r.exitCode])).toEqual([
      ['query', 0],
      ['range', 0],
    ]);
  }, 660_000);

  it('fails both when promql has no Prometheus to ask', async () => {
    const { out, scorecard } = await evalSuite('without-metrics', false, 1);
    expect(scorecard.cells.map((c) => [c.case, c.status, c.score?.pass])).toEqual([
      ['cpu-throttling-latency', 'succeeded', false],
      ['memory-leak-restarts', 'succeeded', false],
    ]);
    for (const cell of scorecard.cells) expect(cell.score?.score, cell.case).toBeLessThan(0.75);
    const leak = await runDir(out, 'memory-leak-restarts');
    const { records } = await readCallLog(path.join(leak, RUN_FILES.clusterCalls));
    expect(records.filter((r) => r.tool === 'prometheus').map((r) => [r.decision, r.rule])).toEqual([
      ['refused', 'promql: no endpoint'],
      ['refused', 'promql: no endpoint'],
      ['refused', 'promql: no endpoint'],
    ]);
  }, 660_000);
});
