// The run pipeline with a scripted engine and the fake adapter at its edges; context preparation,
// the bundle, the audit log and the redactor are real.
import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentName } from '../../../src/config/schema.js';
import { runDirOf } from '../../../src/workspace/layout.js';
import { AuditLog } from '../../../src/audit/log.js';
import { createRunExecutor, type ExecutorDeps } from '../../../src/run/pipeline.js';
import type { RunRequest, RunStage } from '../../../src/run/types.js';
import { RUN_LABELS } from '../../../src/engines/labels.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { emptySkills, fakeAdapter, makeWorkspace, tempDir, testConfig } from '../../support/runs.js';
import { FakeEngine, GOOD_REPORT, unreachable } from './fake-engine.js';
import { startAnthropic } from '../../support/providers/anthropic.js';
import { eventually } from '../../support/wait.js';

const SECRET = 'sk-ant-test-secret-value-0123456789';
const CLAUDE_JSON =
  '{"type":"result","subtype":"success","is_error":false,"num_turns":3,"total_cost_usd":0.5,"usage":{"input_tokens":1000,"output_tokens":200}}\n';

const until = async (cond: () => boolean, timeoutMs = 10_000): Promise<void> =>
  void (await eventually('the condition', cond, timeoutMs, 10));

describe('run executor', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    root = await tempDir('triage-executor-');
  });
  afterEach(async () => root.cleanup());

  function setup(engine: FakeEngine, flags: Record<string, unknown> = {}, extra: Partial<ExecutorDeps> = {}) {
    // These runs make no model calls and must not reach a provider (the readiness preflight would):
    // the gateway is off unless a test turns it on.
    const config = testConfig(root.dir, { gateway: { enabled: false }, ...flags });
    const skills = emptySkills();
    const agentsAsked: AgentName[] = [];
    const executor = createRunExecutor({
      config,
      log: silentLogger(),
      redactor: new Redactor({ ANTHROPIC_API_KEY: SECRET }),
      secrets: { ANTHROPIC_API_KEY: SECRET },
      audit: new AuditLog(),
      env: {},
      engine,
      skills,
      daemonId: 'daemon-test',
      agents: (name) => {
        agentsAsked.push(name);
        return fakeAdapter('claude');
      },
      ...extra,
    });
    return { executor, config, skills, agentsAsked };
  }

  const request = async (over: Partial<RunRequest> = {}): Promise<RunRequest> => ({
    workspace: await makeWorkspace(root.dir),
    runId: `run-${Math.random().toString(36).slice(2, 8)}`,
    attempt: 1,
    signal: new AbortController().signal,
    log: silentLogger(),
    ...over,
  });

  const auditTypes = async (dir: string) =>
    (await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);

  it('prepares, launches with hardened mounts and labels, collects result.json and removes the run', async () => {
    const engine = new FakeEngine({
      stdout: CLAUDE_JSON,
      stderr: `debug: key=${SECRET}\n`,
      report: GOOD_REPORT,
    });
    const { executor, skills } = setup(engine);
    const stages: RunStage[] = [];
    const req = await request({ onStage: async (stage) => void stages.push(stage) });
    const outcome = await executor.run(req);
    expect(outcome).toMatchObject({ status: 'succeeded', exitCode: 0 });
    // The daemon records `launched` (state running) when the pipeline reports it.
    expect(stages).toEqual([
      { type: 'launched', engine: 'docker', id: `fake-${req.runId}`, image: 'triage-agent:latest' },
    ]);

    const spec = engine.specs[0]!;
    expect(spec.labels).toEqual({
      [RUN_LABELS.daemon]: 'daemon-test',
      [RUN_LABELS.incident]: req.workspace.incident.incidentId,
      [RUN_LABELS.run]: req.runId,
      [RUN_LABELS.agent]: 'claude',
    });
    const bundle = runDirOf(req.workspace.dir, req.runId);
    const mount = (target: string) => spec.mounts.find((m) => m.target === target);
    expect(mount('/workspace')).toEqual({ source: req.workspace.dir, target: '/workspace', readOnly: true });
    expect(mount('/workspace/output')).toEqual({
      source: path.join(req.workspace.dir, 'output'),
      target: '/workspace/output',
      readOnly: false,
    });
    expect(mount(`/workspace/.triage/runs/${req.runId}`)).toEqual({
      source: bundle,
      target: `/workspace/.triage/runs/${req.runId}`,
      readOnly: true,
    });
    expect(mount(`/workspace/.triage/runs/${req.runId}/agent-notes`)).toEqual({
      source: path.join(bundle, 'agent-notes'),
      target: `/workspace/.triage/runs/${req.runId}/agent-notes`,
      readOnly: false,
    });
    expect(mount('/opt/triage/agent-files')?.readOnly).toBe(true);
    expect(mount('/opt/triage/personas')?.readOnly).toBe(true);
    expect(
      spec.mounts
        .filter((m) => !m.readOnly)
        .map((m) => m.target)
        .sort(),
    ).toEqual(['/workspace/output', `/workspace/.triage/runs/${req.runId}/agent-notes`].sort());
    expect(spec.tmpfs).toEqual(expect.arrayContaining(['/home/agent', '/tmp', '/home/agent/.claude']));
    expect(spec.env.HOME).toBe('/home/agent');
    expect(spec.secretEnv).toEqual({ ANTHROPIC_API_KEY: SECRET });
    expect(spec.stateDir).toBe(bundle);

    const result = JSON.parse(await readFile(path.join(bundle, 'result.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(result).toMatchObject({
      status: 'succeeded',
      exitCode: 0,
      agent: 'claude',
      engine: 'docker',
      tokens: { input: 1000, output: 200 },
      costUsd: 0.5,
      turns: 3,
      agentStatus: 'succeeded',
      runId: req.runId,
      incidentId: req.workspace.incident.incidentId,
      report: {
        path: '/workspace/output/investigation.md',
        bytes: Buffer.byteLength(GOOD_REPORT),
        missingSections: [],
      },
    });
    expect(result.promptSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof result.durationMs).toBe('number');
    expect(result.firstOutputMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(String(result.firstOutputAt))).toBeGreaterThanOrEqual(
      Date.parse(String(result.startedAt)),
    );

    // The agent receives its system prompt file unredacted; records never hold the secret.
    const files = await readdir(bundle, { recursive: true });
    for (const f of files) {
      const full = path.join(bundle, f);
      if ((await stat(full)).isFile()) expect(await readFile(full, 'utf8'), f).not.toContain(SECRET);
    }
    const invocation = JSON.parse(await readFile(path.join(bundle, 'invocation.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(invocation).toMatchObject({
      engine: 'docker',
      agent: 'claude',
      command: 'claude',
      secretEnv: { ANTHROPIC_API_KEY: '[REDACTED]' },
      labels: spec.labels,
    });
    expect(await readFile(path.join(bundle, 'agent-stdout.log'), 'utf8')).toBe(CLAUDE_JSON);
    expect(await readFile(path.join(bundle, 'agent-stderr.log'), 'utf8')).toContain('[REDACTED');
    expect(await readFile(path.join(bundle, 'agent-files', 'system-prompt.md'), 'utf8')).toContain(
      '<incident>',
    );

    expect(await auditTypes(req.workspace.dir)).toEqual([
      'preparing',
      'skills_resolved',
      'triage_started',
      'triage_finished',
      'context_built',
      'evidence_checked',
      'finished',
    ]);
    expect(engine.removed).toEqual([`fake-${req.runId}`]);
    expect(skills.released).toBe(1);
  });

  it('records the exit code as it was and fails the run when the agent fails', async () => {
    const engine = new FakeEngine({ exitCode: 2, stdout: 'not json\n', report: GOOD_REPORT });
    const { executor } = setup(engine);
    const req = await request();
    const outcome = await executor.run(req);
    expect(outcome).toMatchObject({ status: 'failed', exitCode: 2 });
    expect(outcome.transient).toBeUndefined();
    const result = JSON.parse(
      await readFile(path.join(runDirOf(req.workspace.dir, req.runId), 'result.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(result).toMatchObject({ status: 'failed', exitCode: 2 });
  });

  it('says in result.json that the agent was killed for memory, from OOMKilled or a SIGKILL it did not send', async () => {
    const resultOf = async (req: RunRequest) =>
      JSON.parse(
        await readFile(path.join(runDirOf(req.workspace.dir, req.runId), 'result.json'), 'utf8'),
      ) as Record<string, unknown>;
    // Docker reports OOMKilled.
    const docker = new FakeEngine({ hang: true, report: GOOD_REPORT });
    const a = setup(docker);
    const reqA = await request();
    const runA = a.executor.run(reqA);
    await until(() => docker.specs.length > 0);
    docker.finish(`fake-${reqA.runId}`, { exitCode: 137, signal: null, oomKilled: true });
    expect(await runA).toMatchObject({ status: 'failed', exitCode: 137 });
    expect(await resultOf(reqA)).toMatchObject({
      exitCode: 137,
      oomKilled: true,
      error: expect.stringMatching(/killed for memory \(docker.memory \d+ bytes\)/),
    });
    // Podman does not: exit 137 with no stop signal from the daemon is named for what it most likely is.
    const podman = new FakeEngine({ hang: true, report: GOOD_REPORT });
    const b = setup(podman);
    const reqB = await request();
    const runB = b.executor.run(reqB);
    await until(() => podman.specs.length > 0);
    podman.finish(`fake-${reqB.runId}`, { exitCode: 137, signal: null, oomKilled: false });
    expect(await runB).toMatchObject({ status: 'failed', exitCode: 137 });
    expect((await resultOf(reqB)).error).toMatch(
      /killed with SIGKILL \(exit 137\).*most likely the memory limit/,
    );
  });

  it('removes the container when collecting the result throws', async () => {
    const engine = new FakeEngine({ stdout: CLAUDE_JSON, report: GOOD_REPORT });
    const broken = {
      ...fakeAdapter('claude'),
      parseOutput: () => {
        throw new Error('parser exploded');
      },
    };
    const { executor } = setup(engine, {}, { agents: () => broken });
    const req = await request();
    const outcome = await executor.run(req);
    expect(outcome).toMatchObject({ status: 'failed', reason: expect.stringContaining('parser exploded') });
    expect(engine.removed).toEqual([`fake-${req.runId}`]);
  });

  it('fails a run whose report is missing, and lists missing sections of a short report', async () => {
    const none = setup(new FakeEngine({ stdout: CLAUDE_JSON }));
    const req = await request();
    const outcome = await none.executor.run(req);
    expect(outcome.status).toBe('failed');
    expect(outcome.reason).toMatch(/wrote no report at \/workspace\/output\/investigation.md/);

    const partial = setup(
      new FakeEngine({ stdout: CLAUDE_JSON, report: `# Report\n\n## Summary\n${'words '.repeat(20)}\n` }),
    );
    const req2 = await request();
    expect((await partial.executor.run(req2)).status).toBe('succeeded');
    const result = JSON.parse(
      await readFile(path.join(runDirOf(req2.workspace.dir, req2.runId), 'result.json'), 'utf8'),
    ) as {
      report: { missingSections: string[] };
    };
    expect(result.report.missingSections).toEqual(['Root Cause']);
  });

  it('on timeout sends SIGINT, then SIGTERM after the grace, and reports timed_out', async () => {
    const engine = new FakeEngine({ hang: true, honour: ['SIGTERM'] });
    const { executor } = setup(engine, { agent: { timeout: 100, stop_grace: 50 } });
    const req = await request();
    const outcome = await executor.run(req);
    expect(outcome).toMatchObject({ status: 'timed_out', exitCode: 143 });
    expect(engine.signals).toEqual(['SIGINT', 'SIGTERM']);
    expect(engine.removed).toHaveLength(1);
    const result = JSON.parse(
      await readFile(path.join(runDirOf(req.workspace.dir, req.runId), 'result.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(result).toMatchObject({ status: 'timed_out', stoppedWith: 'SIGTERM' });
  });

  it('stops the agent and reports interrupted when the daemon shuts down', async () => {
    const engine = new FakeEngine({ hang: true, honour: ['SIGINT'] });
    const { executor } = setup(engine, { agent: { timeout: 60_000, stop_grace: 5000 } });
    const controller = new AbortController();
    const req = await request({ signal: controller.signal });
    const running = executor.run(req);
    const deadline = Date.now() + 10_000;
    while (engine.specs.length === 0) {
      if (Date.now() > deadline) throw new Error('run was not launched within 10000 ms');
      await new Promise((r) => setTimeout(r, 10));
    }
    controller.abort();
    expect(await running).toMatchObject({ status: 'interrupted', exitCode: 130 });
    expect(engine.signals).toEqual(['SIGINT']);
    expect(engine.removed).toHaveLength(1);
  });

  it('reports an unreachable engine as a transient failure with result.json saying why', async () => {
    const { executor } = setup(new FakeEngine({ startError: unreachable() }));
    const req = await request();
    const outcome = await executor.run(req);
    expect(outcome).toMatchObject({ status: 'failed', transient: true });
    expect(outcome.reason).toContain('unreachable');
    const result = JSON.parse(
      await readFile(path.join(runDirOf(req.workspace.dir, req.runId), 'result.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(result).toMatchObject({ status: 'failed', transient: true });
  });

  it('starts no agent when its launch records cannot be written, and says why without blaming the engine', async () => {
    const engine = new FakeEngine({ stdout: CLAUDE_JSON, report: GOOD_REPORT });
    const { executor } = setup(engine);
    const req = await request();
    // A folder where the manifest goes: its atomic write cannot replace it.
    await mkdir(path.join(runDirOf(req.workspace.dir, req.runId), 'manifest.json', 'in-the-way'), {
      recursive: true,
    });
    const outcome = await executor.run(req);
    expect(outcome.status).toBe('failed');
    expect(outcome.reason).toMatch(/manifest\.json/);
    expect(engine.specs).toHaveLength(0);
    const result = JSON.parse(
      await readFile(path.join(runDirOf(req.workspace.dir, req.runId), 'result.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(result).toMatchObject({ status: 'failed' });
    expect(result).not.toHaveProperty('waitFor');
    expect(result.error).toBe(outcome.reason);
  });

  it('honours overrides: agent, model and dry run (bundle written, nothing launched)', async () => {
    const engine = new FakeEngine({ stdout: CLAUDE_JSON, report: GOOD_REPORT });
    const { executor, agentsAsked } = setup(engine);
    const req = await request({
      overrides: { agent: 'codex', model: 'gpt-test', dryRun: true, triage: { mode: 'skip' } },
    });
    const outcome = await executor.run(req);
    expect(outcome.status).toBe('succeeded');
    expect(outcome.reason).toMatch(/dry run/);
    expect(agentsAsked).toEqual(['codex']);
    expect(engine.specs).toHaveLength(0);
    const bundle = runDirOf(req.workspace.dir, req.runId);
    const invocation = JSON.parse(await readFile(path.join(bundle, 'invocation.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(invocation).toMatchObject({ agent: 'codex', model: 'gpt-test' });
    expect(await readFile(path.join(bundle, 'prompt-sent.md'), 'utf8')).toContain('<incident>');
  });

  it('keeps the container when docker.keep_containers is set', async () => {
    const engine = new FakeEngine({ stdout: CLAUDE_JSON, report: GOOD_REPORT });
    const { executor } = setup(engine, { docker: { keep_containers: true } });
    expect((await executor.run(await request())).status).toBe('succeeded');
    expect(engine.removed).toEqual([]);
  });

  it('adopts a run left by a dead daemon: attaches, collects and removes; unknown runs are gone', async () => {
    const engine = new FakeEngine({ stdout: CLAUDE_JSON, report: GOOD_REPORT });
    const { executor } = setup(engine);
    const req = await request();
    const labels = { [RUN_LABELS.run]: req.runId, [RUN_LABELS.agent]: 'claude' };
    engine.orphan({
      handle: { engine: 'docker', id: 'orphan-1', runId: req.runId },
      labels,
      running: true,
      started: true,
    });
    await (
      await import('node:fs/promises')
    ).mkdir(path.join(req.workspace.dir, 'output'), { recursive: true });
    await (
      await import('node:fs/promises')
    ).writeFile(path.join(req.workspace.dir, 'output', 'investigation.md'), GOOD_REPORT);
    const adopting = executor.adopt({
      workspace: req.workspace,
      runId: req.runId,
      signal: req.signal,
      log: req.log,
    });
    const deadline = Date.now() + 10_000;
    while (engine.attached.length === 0) {
      if (Date.now() > deadline) throw new Error('adopt did not attach within 10000 ms');
      await new Promise((r) => setTimeout(r, 10));
    }
    engine.finish('orphan-1', { exitCode: 0, signal: null, oomKilled: false });
    expect(await adopting).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(engine.removed).toEqual(['orphan-1']);
    expect(await auditTypes(req.workspace.dir)).toEqual(['reattached', 'evidence_checked', 'finished']);
    expect(
      await executor.adopt({
        workspace: req.workspace,
        runId: 'run-unknown',
        signal: req.signal,
        log: req.log,
      }),
    ).toBe('gone');
  });

  it('collects a run that ended while no daemon watched it, and removes it', async () => {
    const engine = new FakeEngine({ stdout: CLAUDE_JSON });
    const { executor } = setup(engine);
    const req = await request();
    engine.orphan(
      {
        handle: { engine: 'docker', id: 'exited-1', runId: req.runId },
        labels: { [RUN_LABELS.run]: req.runId },
        running: false,
        started: true,
      },
      { exitCode: 3, signal: null, oomKilled: false },
    );
    expect(
      await executor.adopt({ workspace: req.workspace, runId: req.runId, signal: req.signal, log: req.log }),
    ).toMatchObject({
      status: 'failed',
      exitCode: 3,
    });
    expect(engine.removed).toEqual(['exited-1']);
  });

  it('sweeps finished runs left on the engine, sparing running, active, in-flight and very young ones', async () => {
    const engine = new FakeEngine({ hang: true, honour: [] });
    const now = new Date('2026-11-22T03:00:00Z');
    const { executor } = setup(engine, {}, { now: () => now });
    const old = new Date(now.getTime() - 10 * 60_000);
    const left = (id: string, runId: string, running: boolean, createdAt?: Date) =>
      engine.orphan({
        handle: { engine: 'docker', id, runId },
        labels: { [RUN_LABELS.run]: runId, [RUN_LABELS.daemon]: 'dead-daemon' },
        running,
        started: true,
        ...(createdAt ? { createdAt } : {}),
      });
    left('exited-old', 'run-old', false, old);
    left('exited-no-date', 'run-no-date', false);
    left('running-other-daemon', 'run-live', true, old);
    left('exited-active', 'run-active', false, old);
    left('exited-young', 'run-young', false, new Date(now.getTime() - 5_000));
    engine.orphan({
      handle: { engine: 'docker', id: 'not-ours', runId: '' },
      labels: {},
      running: false,
      started: true,
    });
    // A run this executor is handling (its container is not running yet) is never swept.
    const req = await request();
    const running = executor.run(req);
    const deadline = Date.now() + 10_000;
    while (engine.specs.length === 0) {
      if (Date.now() > deadline) throw new Error('run did not start within 10000 ms');
      await new Promise((r) => setTimeout(r, 10));
    }
    left('in-flight', req.runId, false, old);

    const swept = await executor.sweep!(['run-active']);
    expect(swept).toEqual({ removed: ['exited-old', 'exited-no-date'], failed: [] });
    expect(engine.removed).toEqual(['exited-old', 'exited-no-date']);
    engine.finish(`fake-${req.runId}`, { exitCode: 0, signal: null, oomKilled: false });
    await running;
  });

  it('sweeps nothing with docker.keep_containers, and reports an unreachable engine without throwing', async () => {
    const kept = new FakeEngine();
    kept.orphan({
      handle: { engine: 'docker', id: 'exited-1', runId: 'r1' },
      labels: { [RUN_LABELS.run]: 'r1' },
      running: false,
      started: true,
    });
    const keep = setup(kept, { docker: { keep_containers: true } });
    expect(await keep.executor.sweep!([])).toEqual({ removed: [], failed: [] });
    expect(kept.removed).toEqual([]);

    const down = new FakeEngine();
    down.list = () => Promise.reject(unreachable());
    const r = await setup(down).executor.sweep!([]);
    expect(r.removed).toEqual([]);
    expect(r.failed).toEqual([{ id: '', error: expect.stringContaining('unreachable') }]);
  });

  it('reports the model-gateway check: ready when the provider lists its models through the gateway, not ready when it refuses the key', async () => {
    const provider = await startAnthropic();
    const executors: ReturnType<typeof setup>['executor'][] = [];
    const readiness = (flags: Record<string, unknown>) => {
      // A container engine whose agents reach a socket in the run folder: the gateway carries their calls.
      const engine = new FakeEngine();
      Object.assign(engine, { capabilities: { ...engine.capabilities, bundleSockets: true } });
      const { executor } = setup(engine, flags);
      executors.push(executor);
      return executor.readiness();
    };
    try {
      const flags = { gateway: { enabled: true }, providers: { anthropic_base_url: provider.url } };
      const ready = await readiness(flags);
      expect(ready.checks.find((c) => c.name === 'model-gateway')).toEqual({
        name: 'model-gateway',
        ok: true,
        detail: 'anthropic answers through the gateway',
      });
      expect(provider.requests.at(-1)).toMatchObject({ method: 'GET', url: '/v1/models' });
      expect(provider.requests.at(-1)?.headers['x-api-key']).toBe(SECRET);
      provider.failWith = 401;
      const refused = await readiness(flags);
      expect(refused.ok).toBe(false);
      expect(refused.checks.find((c) => c.name === 'model-gateway')).toMatchObject({
        ok: false,
        detail: expect.stringMatching(
          /refused the configured key through the gateway \(HTTP 401\): check ANTHROPIC_API_KEY/,
        ),
      });
      provider.failWith = 500;
      const down = await readiness(flags);
      expect(down.ok, JSON.stringify(down.checks)).toBe(true);
      // The provider's loopback URL is the daemon's to reach, not the container's.
      expect(down.checks.find((c) => c.name === 'model-endpoint')).toBeUndefined();
      expect(down.checks.find((c) => c.name === 'model-gateway')).toMatchObject({ ok: true, degraded: true });
    } finally {
      for (const e of executors) await e.close?.();
      await provider.close();
    }
  });

  it('is ready only when the engine answers, the agent image exists and its key is set; skills only degrade it', async () => {
    const ok = setup(new FakeEngine());
    expect(await ok.executor.readiness()).toEqual({
      ok: true,
      degraded: false,
      checks: [
        { name: 'engine:docker', ok: true },
        { name: 'agent', ok: true },
        { name: 'model-endpoint', ok: true },
        { name: 'api-key', ok: true },
        { name: 'skills', ok: true },
      ],
    });
    const loopback = await setup(
      new FakeEngine(),
      {},
      { env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:8088' } },
    ).executor.readiness();
    expect(loopback.ok).toBe(false);
    expect(loopback.checks.find((c) => c.name === 'model-endpoint')?.detail).toMatch(
      /ANTHROPIC_BASE_URL\) is http:\/\/127\.0\.0\.1:8088: a loopback address, which the agent running on the docker engine cannot reach/,
    );
    const noImage = new FakeEngine();
    Object.assign(noImage, { hasImage: async () => false });
    const missing = await setup(noImage).executor.readiness();
    expect(missing.ok).toBe(false);
    expect(missing.checks.find((c) => c.name === 'agent')?.detail).toMatch(
      /agent image triage-agent:latest is not on the docker engine: build it with `docker build -t triage-agent:latest runners\/`/,
    );
    const withKeys = { ...fakeAdapter('claude'), authSecrets: () => ['ANTHROPIC_API_KEY'] };
    const noKey = await setup(
      new FakeEngine(),
      {},
      { secrets: {}, agents: () => withKeys },
    ).executor.readiness();
    expect(noKey.checks.find((c) => c.name === 'api-key')).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/agent claude needs ANTHROPIC_API_KEY, which is not set/),
    });
    const offline = await setup(
      new FakeEngine(),
      {},
      {
        skills: {
          ...emptySkills(),
          readiness: async () => ({
            ready: false,
            sources: [{ name: 'k8s4agents', available: false, detail: 'cannot fetch' }],
          }),
        },
      },
    ).executor.readiness();
    expect(offline).toMatchObject({ ok: true, degraded: true });
    expect(offline.checks.find((c) => c.name === 'skills')?.detail).toMatch(
      /runs go on without: k8s4agents: cannot fetch/,
    );
    const down = setup(new FakeEngine({ pingError: unreachable() }));
    const r = await down.executor.readiness();
    expect(r.ok).toBe(false);
    expect(r.checks[0]).toMatchObject({
      name: 'engine:docker',
      ok: false,
      detail: expect.stringContaining('unreachable'),
    });
  });
});
