import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import { readWorkspace } from '../../../src/workspace/incident.js';
import { treeHash } from '../../unit/audit/tree-hash.js';
import { INCIDENT_TEXT, makePipeline, type Pipeline } from './pipeline-fixture.js';

// Replay through the real command and run pipeline (process engine, fake agent): the same prompts apart
// from the workspace path and the replay's own run id, and the original workspace is never written.

const ENV = { ANTHROPIC_API_KEY: 'anthropic-env-value-replay-1234', TRIAGE_RUNNER_LOG_LEVEL: 'error' };
const TRIAGE_SCRIPT =
  '#!/bin/sh\necho "pods: 3 CrashLoopBackOff"\necho "events: Back-off restarting failed container"\n';

let pipeline: Pipeline;
let ws: string;
let bundle: string;

function cli(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: ENV, cwd };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

const hashes = (text: string) => ({
  original: /original prompt sha256: (\S+)/.exec(text)?.[1],
  replayed: /replayed prompt sha256: (\S+)/.exec(text)?.[1],
});

beforeAll(async () => {
  pipeline = await makePipeline(ENV, TRIAGE_SCRIPT);
  ws = path.join(pipeline.config.workspaces_root, 'inc-replay-1');
  await mkdir(ws, { recursive: true });
  await writeFile(path.join(ws, 'incident.json'), INCIDENT_TEXT());
  await writeFile(
    path.join(ws, 'incident_cluster_permissions.json'),
    '{"cluster_name":"prod-eu","can_get_pods":true}\n',
  );
  const read = await readWorkspace(ws, { maxBytes: 1 << 20 });
  if (read.kind !== 'ok') throw new Error(`fixture incident unreadable: ${JSON.stringify(read)}`);
  const runId = '20261122T020000Z-0r1g1n';
  const outcome = await pipeline.executor.run({
    workspace: read.workspace,
    runId,
    attempt: 1,
    signal: new AbortController().signal,
    log: pipeline.log,
  });
  expect(outcome.status, outcome.reason).toBe('succeeded');
  bundle = path.join(ws, '.triage', 'runs', runId);
});

afterAll(async () => {
  if (pipeline) await rm(pipeline.root, { recursive: true, force: true });
});

describe('triage-runner replay (real pipeline)', () => {
  it('replays a process-engine run bundle without writing into the original; only the host paths differ', async () => {
    const before = await treeHash(ws);
    const t = cli(pipeline.root);
    const code = await runCli(
      ['--config', 'config.yaml', 'replay', bundle, '--dry-run', '--out', 'r1'],
      t.io,
    );
    expect(t.err()).toBe('');
    expect(code).toBe(0);
    expect(await treeHash(ws)).toBe(before);
    const h = hashes(t.out());
    expect(h.original).toMatch(/^[0-9a-f]{64}$/);
    expect(await readFile(path.join(bundle, 'prompt-sent.md'), 'utf8')).toContain(
      `| prompt sha256 | ${h.original} |`,
    );
    expect(t.out()).toContain('triage: reuse saved output');
    expect(t.out()).toContain('prompt: identical apart from the workspace path and run id');
  });

  it("reproduces a container-engine prompt apart from the replay's own run id, from a run bundle and on two dry runs", async () => {
    const dws = path.join(pipeline.config.workspaces_root, 'inc-replay-docker');
    await mkdir(dws, { recursive: true });
    await writeFile(path.join(dws, 'incident.json'), INCIDENT_TEXT({ reason: 'OOMKilled', exitCode: 137 }));
    const read = await readWorkspace(dws, { maxBytes: 1 << 20 });
    if (read.kind !== 'ok') throw new Error(`fixture incident unreadable: ${JSON.stringify(read)}`);
    const runId = '20261122T021000Z-d0c4e7';
    const outcome = await pipeline.executor.run({
      workspace: read.workspace,
      runId,
      attempt: 1,
      signal: new AbortController().signal,
      log: pipeline.log,
      overrides: { engine: 'docker', dryRun: true },
    });
    expect(outcome.status, outcome.reason).toBe('succeeded');
    const dockerBundle = path.join(dws, '.triage', 'runs', runId);
    const recorded = /\| prompt sha256 \| ([0-9a-f]{64}) \|/.exec(
      await readFile(path.join(dockerBundle, 'prompt-sent.md'), 'utf8'),
    )?.[1];
    expect(recorded).toMatch(/^[0-9a-f]{64}$/);
    const before = await treeHash(dws);

    const a = cli(pipeline.root);
    expect(
      await runCli(
        ['--config', 'config.yaml', 'replay', dockerBundle, '--engine', 'docker', '--dry-run', '--out', 'd1'],
        a.io,
      ),
    ).toBe(0);
    // The prompt names the run's folder, and a replay has its own run id: the rest is the original.
    const replayedA = /run (\S+):/.exec(a.out())?.[1];
    expect(replayedA).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    expect(replayedA).not.toBe(runId);
    expect(hashes(a.out()).original).toBe(recorded);
    expect(hashes(a.out()).replayed).not.toBe(recorded);
    expect(a.out()).toContain('prompt: identical apart from the workspace path and run id');

    const b = cli(pipeline.root);
    expect(
      await runCli(
        ['--config', 'config.yaml', 'replay', dws, '--engine', 'docker', '--dry-run', '--out', 'd2'],
        b.io,
      ),
    ).toBe(0);
    const first = await readFile(path.join(dockerBundle, 'prompt-sent.md'), 'utf8');
    const replayedRun = /run (\S+):/.exec(b.out())?.[1] ?? '';
    expect(replayedRun).not.toBe(runId);
    const second = await readFile(
      path.join(pipeline.root, 'd2', '.triage', 'runs', replayedRun, 'prompt-sent.md'),
      'utf8',
    );
    const body = (text: string) => text.slice(text.indexOf('## System prompt'));
    expect(body(second)).toBe(body(first).split(runId).join(replayedRun));

    const c = cli(pipeline.root);
    expect(await runCli(['--config', 'config.yaml', 'replay', dws, '--dry-run', '--out', 'd1'], c.io)).toBe(
      2,
    );
    expect(c.err()).toContain('already exists and is not empty');
    expect(await treeHash(dws)).toBe(before);
  });

  it('a full replay under the process engine: the same prompt apart from paths, and a state.json saying how its run ended', async () => {
    const t = cli(pipeline.root);
    expect(await runCli(['--config', 'config.yaml', 'replay', bundle, '--out', 'own'], t.io)).toBe(0);
    const runId = /run (\S+): succeeded/.exec(t.out())?.[1];
    expect(runId).toBeDefined();
    expect(t.out()).toMatch(/prompt: (byte-identical|identical apart from the workspace path)/);
    const state = JSON.parse(
      await readFile(path.join(pipeline.root, 'own', '.triage', 'state.json'), 'utf8'),
    ) as { state: string; runs: { id: string; status: string }[] };
    expect(state.state).toBe('succeeded');
    expect(state.runs.map((r) => [r.id, r.status])).toEqual([[runId, 'succeeded']]);
  });

  it('runs the agent for a full replay and exits 1 when the run fails', async () => {
    const ok = cli(pipeline.root);
    expect(await runCli(['--config', 'config.yaml', 'replay', bundle, '--out', 'full'], ok.io)).toBe(0);
    expect(ok.out()).toMatch(/run \S+: succeeded/);
    expect(await readFile(path.join(pipeline.root, 'full', 'output', 'investigation.md'), 'utf8')).toContain(
      'Root Cause',
    );
    const bad = cli(pipeline.root);
    const env = { ...ENV, TRIAGE_RUNNER_AGENT_COMMAND: '/bin/false' };
    expect(
      await runCli(['--config', 'config.yaml', 'replay', bundle, '--out', 'fails'], { ...bad.io, env }),
    ).toBe(1);
    expect(bad.out()).toMatch(/run \S+: failed/);
  });

  it('exits 2 for an input that is not a workspace, bundle or example', async () => {
    const t = cli(pipeline.root);
    expect(await runCli(['--config', 'config.yaml', 'replay', 'nowhere'], t.io)).toBe(2);
    expect(t.err()).toContain('is not a folder');
  });
});
