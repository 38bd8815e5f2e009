import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import { CallLog } from '../../../src/kubectl/broker/calls.js';
import { OutputLog } from '../../../src/kubectl/broker/outputs.js';
import { Redactor } from '../../../src/log/redact.js';
import { runDirOf, RUN_FILES } from '../../../src/workspace/layout.js';
import { runOf } from '../../support/evidence-runs.js';
import { readShopRecording } from '../../support/kube-objects/record.js';
import { tempDir } from '../../support/runs.js';
import { writeRun } from '../../support/status-root.js';
import { apiReport, API_FACTS, API_CALLS, DESCRIBE_API } from '../../unit/evidence/corpus/reports.js';

// `triage-runner evidence` on recorded run folders, offline: the run's cluster-calls.jsonl and
// cluster-outputs.jsonl written by the broker's own log writers from what the real kubectl printed,
// its result.json, its report and incident.json; the check of its own report, of an edited one, of a
// run whose cluster was unreachable, and the usage errors.

let root: { dir: string; cleanup: () => Promise<void> };

function io(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIO = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: {}, cwd };
  return { cli, out: () => out.join(''), err: () => err.join('') };
}

/** A workspace with one run that made `calls` (names of the shop recording), its report and result. */
async function workspace(
  name: string,
  calls: string[],
  report: string,
  cluster?: Record<string, unknown>,
): Promise<string> {
  const dir = path.join(root.dir, name);
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'incident.json'),
    JSON.stringify({ incidentId: name, summary: 'Pod shop/api is crash looping' }),
  );
  const runId = `20261128T163700Z-${name}`;
  await writeRun(
    dir,
    runId,
    {
      ...(cluster ? { cluster: cluster as never } : {}),
      kubectl: { guard: 'broker', calls: calls.length, refused: 0 },
    },
    report,
  );
  const bundle = runDirOf(dir, runId);
  const recorded = runOf(await readShopRecording(), { calls });
  const redactor = new Redactor();
  const callLog = await CallLog.open(path.join(bundle, RUN_FILES.clusterCalls), (t) => redactor.redact(t));
  const outputLog = await OutputLog.open(path.join(bundle, RUN_FILES.clusterOutputs), (t) =>
    redactor.redact(t),
  );
  for (const [i, record] of recorded.calls.entries()) {
    const { call: _call, ...rest } = record;
    const n = await callLog.append(rest);
    const output = recorded.outputs[i];
    if (output)
      await outputLog.append(n, rest, {
        stdout: Buffer.from(output.stdout),
        stderr: Buffer.from(output.stderr),
        droppedStdout: 0,
        droppedStderr: 0,
      });
  }
  await callLog.close();
  await outputLog.close();
  return dir;
}

beforeAll(async () => {
  root = await tempDir('triage-evidence-cli-');
});
afterAll(async () => root?.cleanup());

describe('triage-runner evidence', () => {
  it("checks a workspace's latest run and its own report: grounded, exit 0, the claims listed", async () => {
    const dir = await workspace('grounded', API_CALLS, apiReport());
    const t = io(root.dir);
    expect(await runCli(['evidence', path.basename(dir)], t.cli)).toBe(0);
    expect(t.out()).toMatch(/investigation\.md: grounded — 5 of 5 claims supported\n/);
    expect(t.out()).toContain(
      'headline: The api container exits at start-up because HTTP_PORT is "8O80", not a number [INF-1]',
    );
    expect(t.out()).toMatch(
      / {2}supported +FACT-2: Its last state is Terminated, reason Error, exit code 1\n/,
    );
  });

  it('checks another report against the same run: --json prints {verdict, headline, claims, gaps}, exit 1 when ungrounded', async () => {
    const dir = await workspace('edited', API_CALLS, apiReport());
    const edited = path.join(root.dir, 'edited.md');
    await writeFile(
      edited,
      apiReport({
        facts: [
          API_FACTS[0] ?? '',
          `- **[FACT-2]** Its last state is OOMKilled, exit code 137 — Source: ${DESCRIBE_API}`,
          API_FACTS[2] ?? '',
        ],
      }),
    );
    const t = io(root.dir);
    const run = path.join(dir, '.triage', 'runs', '20261128T163700Z-edited');
    expect(await runCli(['evidence', run, '--report', 'edited.md', '--json'], t.cli)).toBe(1);
    const json = JSON.parse(t.out()) as {
      verdict: string;
      headline: string;
      claims: { id?: string; status: string; why: string }[];
      gaps: string[];
    };
    expect(Object.keys(json).slice(0, 4)).toEqual(['verdict', 'headline', 'claims', 'gaps']);
    expect(json.verdict).toBe('ungrounded');
    expect(json.claims.find((c) => c.id === 'FACT-2')).toMatchObject({
      status: 'contradicted',
      why: expect.stringContaining('api last state exit code: the report says 137'),
    });
  });

  it('reads from result.json that the access check found the cluster unreachable: ungrounded whatever the report says', async () => {
    const dir = await workspace('unreachable', API_CALLS, apiReport(), {
      name: 'prod-1',
      reachable: false,
      detail: 'cluster prod-1 cannot be reached: connection refused',
    });
    const t = io(root.dir);
    expect(await runCli(['evidence', dir, '--json'], t.cli)).toBe(1);
    expect(JSON.parse(t.out())).toMatchObject({
      verdict: 'ungrounded',
      reason:
        'no cluster access: the access check found it unreachable (cluster prod-1 cannot be reached: connection refused)',
    });
  });

  it('exits 2 with what to give instead for a folder that is not a run, or a report that is not there', async () => {
    const empty = path.join(root.dir, 'empty');
    await mkdir(empty, { recursive: true });
    const t = io(root.dir);
    expect(await runCli(['evidence', empty], t.cli)).toBe(2);
    expect(t.err()).toContain('holds no recorded run');
    const dir = await workspace('no-report', API_CALLS, apiReport());
    const u = io(root.dir);
    expect(await runCli(['evidence', dir, '--report', 'missing.md'], u.cli)).toBe(2);
    expect(u.err()).toMatch(/no report to check at .*missing\.md \(missing\): give one with --report FILE/);
    const v = io(root.dir);
    expect(await runCli(['evidence', path.join(root.dir, 'nope')], v.cli)).toBe(2);
    expect(v.err()).toContain('is not a folder');
  });
});
