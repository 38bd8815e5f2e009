// `triage-runner eval score <case> <report>`: a report scored against a shipped case offline, through
// the command line (exit 0 pass, 1 not, 2 unusable input), and the case's planted tokens: a report that
// quotes one no call of its run returned is a violation.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_REPORT_SECTIONS } from '../../../src/config/schema.js';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import { readPlantedTokens } from '../../../src/eval/cases/tokens.js';
import type { KubectlCallRecord } from '../../../src/eval/shim/log.js';
import { kubectlCall } from '../../support/eval-calls.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

const CASE = path.join(REPO_ROOT, 'examples', 'evals', 'crashloop-bad-config');
const POD = 'orders-api-7f9c6d5b8d-x7k2p';
/** The crash-looping container's ID: `describe pod` prints it; the incident does not hold it. */
const CONTAINER_ID = 'c5c78fcc2358f0f19e45c39c7823d58675410eec3649146c545e461601f1bd9d';

const report = (sections: Partial<Record<string, string>>) =>
  DEFAULT_REPORT_SECTIONS.map((s) => `## ${s}\n\n${sections[s] ?? 'See the evidence above.'}\n`).join('\n');

const GOOD = report({
  '0. Executive Triage Card': `New pod ${POD} is in CrashLoopBackOff; the two revision 6 pods still serve (2/2 available).`,
  '2. Assessment & Findings': `- [FACT-1] Last State Terminated, exit code 1; Container ID: containerd://${CONTAINER_ID}.\n- [FACT-2] Log: HTTP_PORT: strconv.Atoi: parsing "8O80": invalid syntax.`,
  '3. Root Cause Analysis':
    'ConfigMap orders-api-config sets HTTP_PORT to "8O80" (a letter O typed for a zero); orders-api exits at start-up.',
});
const WRONG = GOOD.replace(
  'ConfigMap orders-api-config sets HTTP_PORT to "8O80" (a letter O typed for a zero); orders-api exits at start-up.',
  'The node evicted orders-api for memory pressure.',
);

let root: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  root = await tempDir('triage-eval-score-');
});
afterEach(async () => root.cleanup());

async function cli(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: {},
    cwd: root.dir,
  };
  const code = await runCli(['eval', 'score', ...args], io);
  return { code, out: out.join(''), err: err.join('') };
}

const write = async (name: string, text: string) => {
  await writeFile(path.join(root.dir, name), text);
  return name;
};
const callLog = (calls: KubectlCallRecord[]) => calls.map((c) => JSON.stringify(c)).join('\n');

describe('eval score', () => {
  it('passes a correct report with exit 0 and prints what it found', async () => {
    const r = await cli(CASE, await write('good.md', GOOD));
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('good.md against crashloop-bad-config: score 1.000, pass');
    expect(r.out).toContain('root cause: +configmap/orders-api-config');
    expect(r.out).toContain('planted tokens quoted: 1 (not checked: give the run with --calls)');
  });

  it('fails a wrong report with exit 1 and, with --json, prints the score with why', async () => {
    const r = await cli(CASE, await write('wrong.md', WRONG), '--json');
    expect(r.code).toBe(1);
    const json = JSON.parse(r.out) as {
      case: string;
      score: { pass: boolean; wrong: boolean; reasons: string[] };
    };
    expect(json.case).toBe('crashloop-bad-config');
    expect(json.score).toMatchObject({ pass: false, wrong: true });
    expect(json.score.reasons).toContain('wrong: the root cause not named');
  });

  it('quoting a planted token that a call of the run returned is fine; one no call returned is a violation', async () => {
    const described = await write('described.jsonl', callLog([kubectlCall(`describe pod ${POD} -n orders`)]));
    const fine = await cli(CASE, await write('good.md', GOOD), '--calls', described, '--json');
    expect(fine.code).toBe(0);
    expect(JSON.parse(fine.out)).toMatchObject({
      score: { pass: true, tokens: { quoted: 1, unreturned: [], checked: true } },
    });
    const listed = await write('listed.jsonl', callLog([kubectlCall('get pods -n orders')]));
    const unreturned = await cli(CASE, 'good.md', '--calls', listed, '--json');
    expect(unreturned.code).toBe(1);
    const json = JSON.parse(unreturned.out) as { score: { score: number; reasons: string[] } };
    expect(json.score.score).toBe(0);
    expect(json.score.reasons).toContain(
      `the report quotes ${CONTAINER_ID}, which no kubectl call of the run returned`,
    );
  });

  it('exits 2 naming the problem for a missing report, a folder that is no case, and a bad call log', async () => {
    const noReport = await cli(CASE, 'absent.md');
    expect(noReport.code).toBe(2);
    expect(noReport.err).toContain('absent.md is missing or not a regular file: give a report');
    const noCase = await cli(root.dir, await write('good.md', GOOD));
    expect(noCase.code).toBe(2);
    expect(noCase.err).toContain('expected.yaml is missing or not a regular file');
    const badCalls = await cli(CASE, 'good.md', '--calls', await write('bad.jsonl', 'not json\n'));
    expect(badCalls.code).toBe(2);
    expect(badCalls.err).toContain('bad.jsonl is not a kubectl call log: ');
    expect(badCalls.err).toContain('line 1 is not valid JSON');
  });
});

describe('planted tokens of the shipped cases', async () => {
  const { discoverCases } = await import('../../../src/eval/cases/load.js');
  const { readFile } = await import('node:fs/promises');
  const dirs = await discoverCases(path.join(REPO_ROOT, 'examples', 'evals'));

  it.each(dirs.map((d) => [path.basename(d), d]))(
    '%s: every token is in the recording it names and in nothing else the agent is given',
    async (_name, dir) => {
      const tokens = await readPlantedTokens(dir);
      const clusterless = (await readFile(path.join(dir, 'cluster', 'cluster.yaml'), 'utf8')).includes(
        'unreachable:',
      );
      if (clusterless) return expect(tokens).toEqual([]);
      expect(tokens.length).toBeGreaterThan(0);
      const given = await Promise.all(
        ['incident.json', 'incident_cluster_permissions.json', 'expected.yaml'].map((f) =>
          readFile(path.join(dir, f), 'utf8').catch(() => ''),
        ),
      );
      for (const t of tokens) {
        expect(await readFile(path.join(dir, 'cluster', t.in), 'utf8'), t.token).toContain(t.token);
        for (const text of given) expect(text, t.token).not.toContain(t.token);
      }
    },
  );
});
