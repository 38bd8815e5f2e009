import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubectlRecordOf, readRunArtifacts, type RunArtifacts } from '../../../src/eval/artifacts.js';
import { CALLS_FILE, type KubectlCallRecord } from '../../../src/eval/shim/log.js';
import { RUN_FILES } from '../../../src/workspace/layout.js';
import { sampleRunResult, tempDir } from '../../support/runs.js';
import { guardCall } from '../../support/cluster-calls.js';

const shimCall: KubectlCallRecord = {
  at: '2026-11-23T10:00:01.000Z',
  stage: 'agent',
  argv: ['get', 'pods'],
  normalized: 'get pods',
  category: 'read',
  exitCode: 0,
  answeredFrom: 'objects',
  durationMs: 3,
  stdoutBytes: 10,
  stderrBytes: 0,
};
const RESULT = sampleRunResult({ engine: 'docker' });
const lines = (records: object[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');

describe('readRunArtifacts with the kubectl guard', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let runDir: string;
  beforeEach(async () => {
    root = await tempDir('triage-artifacts-');
    runDir = path.join(root.dir, '.triage', 'runs', 'r1');
    await mkdir(runDir, { recursive: true });
  });
  afterEach(async () => root.cleanup());

  it('adds the calls the guard or the CLI refused as violations, in time order, and not the allowed ones twice', async () => {
    await writeFile(path.join(runDir, CALLS_FILE), lines([shimCall]));
    await writeFile(
      path.join(runDir, RUN_FILES.clusterCalls),
      lines([
        guardCall({}),
        guardCall({
          at: '2026-11-23T10:00:02.000Z',
          argv: ['delete', 'pod', 'x'],
          normalized: 'delete pods/x',
          category: 'mutate',
          decision: 'refused',
          rule: 'exclude "k8s-change"',
          exitCode: 1,
        }),
        guardCall({
          at: '2026-11-23T10:00:03.000Z',
          by: 'cli',
          argv: ['exec', 'x', '--', 'sh'],
          normalized: 'exec pods/x -- sh',
          category: 'workload-access',
          decision: 'refused',
          rule: 'claude permission rules',
          exitCode: null,
        }),
        guardCall({
          at: '2026-11-23T10:00:04.000Z',
          argv: ['get', 'pods', '--nope'],
          normalized: 'get pods',
          decision: 'refused',
          rule: 'guard: unreadable',
          exitCode: 1,
        }),
      ]),
    );
    const { calls, problems } = await readRunArtifacts(root.dir, runDir);
    expect(problems).toEqual(['.triage/runs/r1/result.json does not exist']);
    expect(calls.map((c) => [c.normalized, c.answeredFrom, c.violation])).toEqual([
      ['get pods', 'objects', undefined],
      ['delete pods/x', 'refused', { category: 'mutate', reason: 'kubectl guard: exclude "k8s-change"' }],
      [
        'exec pods/x -- sh',
        'refused',
        { category: 'workload-access', reason: 'agent CLI: claude permission rules' },
      ],
      ['get pods', 'usage-error', undefined],
    ]);
  });

  it("reads how the run's kubectl calls were guarded from result.json, and refuses a record with a value it does not know", async () => {
    const result = (guard: unknown) =>
      writeFile(
        path.join(runDir, RUN_FILES.result),
        JSON.stringify({ ...RESULT, kubectl: { guard, calls: 0, refused: 0 } }),
      );
    await result('off');
    expect((await readRunArtifacts(root.dir, runDir)).result?.kubectlGuard).toBe('off');
    await result('broker');
    expect((await readRunArtifacts(root.dir, runDir)).result?.kubectlGuard).toBe('broker');
    await result('sideways');
    const artifacts = await readRunArtifacts(root.dir, runDir);
    expect(artifacts.result).toBeUndefined();
    expect(artifacts.problems).toEqual([
      expect.stringContaining('does not have the expected shape (kubectl.guard'),
    ]);
  });

  it('never reads result.json through a link, nor one over its size bound: the run is scored without it, and says why', async () => {
    const outside = path.join(root.dir, 'elsewhere.json');
    await writeFile(outside, JSON.stringify({ ...RESULT, costUsd: 0.01 }));
    await symlink(outside, path.join(runDir, RUN_FILES.result));
    let artifacts = await readRunArtifacts(root.dir, runDir);
    expect(artifacts.result).toBeUndefined();
    expect(artifacts.problems).toEqual([expect.stringContaining('is a symbolic link')]);

    await rm(path.join(runDir, RUN_FILES.result));
    await writeFile(path.join(runDir, RUN_FILES.result), `${JSON.stringify(RESULT)}${' '.repeat(5 << 20)}`);
    artifacts = await readRunArtifacts(root.dir, runDir);
    expect(artifacts.result).toBeUndefined();
    expect(artifacts.problems).toEqual([expect.stringMatching(/over the \d+-byte limit/)]);
  });

  it('never reads the report through a link the agent planted at its place', async () => {
    const secret = path.join(root.dir, 'host-secret.txt');
    await writeFile(secret, 'not the report');
    await mkdir(path.join(root.dir, 'output'));
    await symlink(secret, path.join(root.dir, 'output', 'investigation.md'));
    expect((await readRunArtifacts(root.dir, runDir)).report).toBeUndefined();
  });

  it('counts the call records that came from agent-notes/, where the agent can write', async () => {
    await writeFile(path.join(runDir, CALLS_FILE), lines([{ ...shimCall, stage: 'triage' }]));
    await mkdir(path.join(runDir, 'agent-notes'));
    await writeFile(path.join(runDir, 'agent-notes', CALLS_FILE), lines([shimCall, shimCall]));
    const artifacts = await readRunArtifacts(root.dir, runDir);
    expect(artifacts.calls).toHaveLength(3);
    expect(artifacts.agentNotesCalls).toBe(2);
  });
});

describe("kubectlRecordOf: whether the call records the score read were out of the agent's reach", () => {
  const artifacts = (result: RunArtifacts['result'], agentNotesCalls = 0): RunArtifacts => ({
    calls: [],
    agentNotesCalls,
    promql: { calls: 0, notRecorded: 0 },
    problems: [],
    ...(result ? { result } : {}),
  });

  it('is daemon only with the broker, an agent in a container and nothing from agent-notes/', () => {
    expect(kubectlRecordOf(artifacts({ kubectlGuard: 'broker', engine: 'docker' }))).toBe('daemon');
    expect(kubectlRecordOf(artifacts({ kubectlGuard: 'broker', engine: 'kubernetes' }))).toBe('daemon');
  });

  it.each([
    ['the guard off', { kubectlGuard: 'off', engine: 'docker' }, 0],
    ['the guard unavailable', { kubectlGuard: 'unavailable', engine: 'kubernetes' }, 0],
    [
      "the process engine (the agent runs as the daemon's user)",
      { kubectlGuard: 'broker', engine: 'process' },
      0,
    ],
    ['calls run around the guard (records in agent-notes/)', { kubectlGuard: 'broker', engine: 'docker' }, 1],
  ] as const)('is agent-writable with %s', (_, result, notes) => {
    expect(kubectlRecordOf(artifacts({ ...result }, notes))).toBe('agent-writable');
  });

  it('says nothing when result.json does not say how the calls were guarded', () => {
    expect(kubectlRecordOf(artifacts(undefined))).toBeUndefined();
    expect(kubectlRecordOf(artifacts({ status: 'succeeded', engine: 'docker' }))).toBeUndefined();
  });
});
