// The run pipeline on the real engine: a timed-out run is killed and removed; after a SIGKILL of the
// daemon, the agent container it left is found by label and reconciled by adopt.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDirOf } from '../../../src/workspace/layout.js';
import { AuditLog } from '../../../src/audit/log.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import { createDockerEngine } from '../../../src/engines/docker/index.js';
import { LABEL_PREFIX, RUN_LABELS } from '../../../src/engines/labels.js';
import type { Engine } from '../../../src/engines/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { TEST_IMAGE, dockerHost, requireEngine, requireTestImage } from '../../support/engine.js';
import { runShAgent } from '../../support/sh-agent.js';
import {
  REPO_ROOT,
  emptySkills,
  fakeAdapter,
  makeWorkspace,
  tempDir,
  testConfig,
} from '../../support/runs.js';
import { eventually } from '../../support/wait.js';

const docker = await requireEngine();

const until = <T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T> =>
  eventually(what, fn, timeoutMs, 100);

describe.skipIf(!docker)('run pipeline on the real engine', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    await requireTestImage(docker!);
    root = await tempDir('triage-orphan-');
  });
  afterAll(async () => root?.cleanup());

  it("lets the agent write only output/ and its run folder's agent-notes/, never the daemon's records", async () => {
    const workspace = await makeWorkspace(root.dir);
    const runId = `writes-${process.pid}-${Date.now()}`;
    const config = testConfig(root.dir, {
      agent: { image: TEST_IMAGE },
      docker: { host: dockerHost(), network: 'none' },
    });
    const { outcome, bundle, stdout } = await runShAgent(config, workspace, runId, [
      'try() { if (eval "$1") 2>/dev/null; then echo "$2=ok"; else echo "$2=denied"; fi; }',
      'try "echo note > $TRIAGE_NOTES_DIR/agent-note.txt" notes_new',
      'try "echo x > $TRIAGE_RUN_DIR/agent-note.txt" run_new',
      'try "rm -f $TRIAGE_RUN_DIR/prompt-sent.md" run_delete',
      'try "echo x > $TRIAGE_RUN_DIR/prompt-sent.md" run_overwrite',
      'try "chmod 666 $TRIAGE_RUN_DIR/prompt-sent.md" run_chmod',
      // The daemon's records are its user's only; what the agent reads of its run folder is shared.
      'try "cat $TRIAGE_RUN_DIR/prompt-sent.md > /dev/null" run_read',
      'try "ls $TRIAGE_RUN_DIR/triage > /dev/null" triage_read',
      'try "ls /workspace/.triage > /dev/null" triage_list',
      // Read-only as a mount, not only by owner and mode: an agent with the daemon's uid is refused too.
      `awk -v r="$TRIAGE_RUN_DIR" -v n="$TRIAGE_NOTES_DIR" '$2 == r { print "run_mount=" substr($4, 1, 2) } $2 == n { print "notes_mount=" substr($4, 1, 2) }' /proc/self/mounts`,
      'try "echo x > /workspace/incident.json" incident',
      'try "echo x > /workspace/new.txt" workspace_new',
      'try "echo x > $HOME/.claude/probe" home',
    ]);
    expect(outcome, stdout).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(stdout).toContain('notes_new=ok');
    expect(stdout).toContain('run_new=denied');
    expect(stdout).toContain('run_delete=denied');
    expect(stdout).toContain('run_overwrite=denied');
    expect(stdout).toContain('run_chmod=denied');
    expect(stdout).toContain('run_read=denied');
    expect(stdout).toContain('triage_read=ok');
    expect(stdout).toContain('triage_list=denied');
    expect(stdout).toContain('run_mount=ro');
    expect(stdout).toContain('notes_mount=rw');
    expect(stdout).toContain('incident=denied');
    expect(stdout).toContain('workspace_new=denied');
    expect(stdout).toContain('home=ok');
    expect(await readFile(path.join(bundle, 'agent-notes', 'agent-note.txt'), 'utf8')).toBe('note\n');
    expect(await readFile(path.join(bundle, 'prompt-sent.md'), 'utf8')).toContain('<incident>');
    expect(await readFile(path.join(workspace.dir, 'incident.json'), 'utf8')).toBe(workspace.incidentText);
  });

  it('kills a run that ignores SIGINT and SIGTERM at the timeout and removes its container', async () => {
    const workspace = await makeWorkspace(root.dir);
    const runId = `timeout-${process.pid}-${Date.now()}`;
    const config = testConfig(root.dir, {
      agent: { image: TEST_IMAGE, timeout: 1500, stop_grace: 500 },
      docker: { host: dockerHost(), network: 'none' },
    });
    const engine = createDockerEngine(config, silentLogger());
    const executor = createRunExecutor({
      config,
      log: silentLogger(),
      redactor: new Redactor(),
      secrets: {},
      audit: new AuditLog(),
      env: {},
      engine,
      skills: emptySkills(),
      agents: () =>
        fakeAdapter('/usr/local/bin/fake-agent', { FAKE_AGENT_SLEEP: '120', FAKE_AGENT_IGNORE_SIGNALS: '1' }),
    });
    const outcome = await executor.run({
      workspace,
      runId,
      attempt: 1,
      signal: new AbortController().signal,
      log: silentLogger(),
    });
    expect(outcome).toMatchObject({ status: 'timed_out', exitCode: 137 });
    expect(await engine.list({ [RUN_LABELS.run]: runId })).toEqual([]);
    const result = JSON.parse(
      await readFile(path.join(runDirOf(workspace.dir, runId), 'result.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(result).toMatchObject({ status: 'timed_out', exitCode: 137, stoppedWith: 'SIGKILL' });
  });

  it('names the memory limit in result.json when the agent is OOM-killed, and removes the container', async () => {
    const workspace = await makeWorkspace(root.dir);
    const runId = `oom-${process.pid}-${Date.now()}`;
    const config = testConfig(root.dir, {
      agent: { image: TEST_IMAGE },
      docker: { host: dockerHost(), network: 'none', memory: 48 * 1024 * 1024 },
    });
    const engine = createDockerEngine(config, silentLogger());
    const base = fakeAdapter('/bin/sh');
    // A shell variable far above the limit: the kernel OOM killer ends the container's main process.
    const hog = {
      ...base,
      buildInvocation: (i: Parameters<typeof base.buildInvocation>[0]) => ({
        ...base.buildInvocation(i),
        args: ['-c', 'a=$(head -c 400000000 /dev/zero | tr "\\0" x); echo survived'],
      }),
    };
    const executor = createRunExecutor({
      config,
      log: silentLogger(),
      redactor: new Redactor(),
      secrets: {},
      audit: new AuditLog(),
      env: {},
      engine,
      skills: emptySkills(),
      agents: () => hog,
    });
    const outcome = await executor.run({
      workspace,
      runId,
      attempt: 1,
      signal: new AbortController().signal,
      log: silentLogger(),
    });
    expect(outcome).toMatchObject({ status: 'failed', exitCode: 137 });
    expect(outcome.reason).toMatch(/memory/);
    expect(await engine.list({ [RUN_LABELS.run]: runId })).toEqual([]);
    const result = JSON.parse(
      await readFile(path.join(runDirOf(workspace.dir, runId), 'result.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(result).toMatchObject({ status: 'failed', exitCode: 137, error: expect.stringMatching(/memory/) });
  });

  it('adopts the container left by a SIGKILLed daemon: collects its result and removes it', async () => {
    const workspace = await makeWorkspace(root.dir);
    const runId = `orphan-${process.pid}-${Date.now()}`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'test/integration/engines/fixtures/orphan-daemon.ts')],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          DOCKER_HOST: dockerHost(),
          ORPHAN_ROOT: root.dir,
          ORPHAN_WORKSPACE: workspace.dir,
          ORPHAN_RUN_ID: runId,
          ORPHAN_AGENT_SLEEP: '4',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

    const config = testConfig(root.dir, { agent: { image: TEST_IMAGE }, docker: { host: dockerHost() } });
    const engine = createDockerEngine(config, silentLogger());
    await until(`container of run ${runId} running (daemon stderr: ${stderr})`, 30_000, async () => {
      const runs = await engine.list({ [RUN_LABELS.run]: runId });
      // The manifest is written before the agent starts: an adopting daemon reads it.
      const manifest = await readFile(
        path.join(workspace.dir, '.triage', 'runs', runId, 'manifest.json'),
        'utf8',
      ).catch(() => '');
      return runs.some((r) => r.running) && manifest.includes(runId) ? true : undefined;
    });
    child.kill('SIGKILL');
    await exited;
    const orphans = await engine.list({ [RUN_LABELS.run]: runId });
    expect(orphans).toHaveLength(1);
    expect(orphans[0]?.labels[RUN_LABELS.daemon]).toBe('orphan-daemon');

    const executor = createRunExecutor({
      config,
      log: silentLogger(),
      redactor: new Redactor(),
      secrets: {},
      audit: new AuditLog(),
      env: {},
      engine,
      skills: emptySkills(),
      agents: () => fakeAdapter('/usr/local/bin/fake-agent'),
    });
    const outcome = await executor.adopt({
      workspace,
      runId,
      signal: new AbortController().signal,
      log: silentLogger(),
    });
    expect(outcome).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(await engine.list({ [RUN_LABELS.run]: runId })).toEqual([]);

    const bundle = runDirOf(workspace.dir, runId);
    const result = JSON.parse(await readFile(path.join(bundle, 'result.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(result).toMatchObject({
      status: 'succeeded',
      exitCode: 0,
      engine: 'docker',
      tokens: { input: 123, output: 45 },
    });
    expect(await readFile(path.join(bundle, 'agent-stderr.log'), 'utf8')).toContain(
      'fake-agent: started as uid 1000',
    );
    const audit = await readFile(path.join(workspace.dir, '.triage', 'audit.jsonl'), 'utf8');
    const types = audit
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types, types.join(',')).toEqual(
      expect.arrayContaining(['context_built', 'reattached', 'finished']),
    );
    expect(types.indexOf('reattached')).toBeGreaterThan(types.indexOf('context_built'));

    // Nothing left to adopt a second time.
    expect(
      await executor.adopt({ workspace, runId, signal: new AbortController().signal, log: silentLogger() }),
    ).toBe('gone');
  });
});

describe.skipIf(!docker)('start-up sweep on the real engine', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    await requireTestImage(docker!);
    root = await tempDir('triage-sweep-');
  });
  afterAll(async () => root?.cleanup());

  it('removes exited containers of inactive runs left by an earlier daemon, never running or active ones', async () => {
    const config = testConfig(root.dir, { agent: { image: TEST_IMAGE }, docker: { host: dockerHost() } });
    const real = createDockerEngine(config, silentLogger());
    // Other tests share this engine: the sweep only sees the containers this test made.
    const scope = { [`${LABEL_PREFIX}test`]: `sweep-${process.pid}-${Date.now()}` };
    const engine: Engine = { ...real, list: (labels) => real.list({ ...labels, ...scope }) };
    const start = (runId: string, sleep: string) =>
      real.start({
        runId,
        incidentId: 'inc-sweep',
        labels: { ...scope, [RUN_LABELS.run]: runId, [RUN_LABELS.daemon]: 'dead-daemon' },
        image: TEST_IMAGE,
        command: '/usr/local/bin/fake-agent',
        args: [],
        env: { HOME: '/home/agent', FAKE_AGENT_SLEEP: sleep },
        secretEnv: {},
        stdin: '',
        workdir: '/home/agent',
        mounts: [],
        tmpfs: ['/home/agent', '/tmp'],
        stateDir: root.dir,
        onStdout: () => undefined,
        onStderr: () => undefined,
      });
    const leftover = await start(`sweep-left-${Date.now()}`, '0');
    const active = await start(`sweep-active-${Date.now()}`, '0');
    const live = await start(`sweep-live-${Date.now()}`, '120');
    try {
      await real.wait(leftover, 30_000);
      await real.wait(active, 30_000);
      const executor = createRunExecutor({
        config,
        log: silentLogger(),
        redactor: new Redactor(),
        secrets: {},
        audit: new AuditLog(),
        env: {},
        engine,
        skills: emptySkills(),
        // Two minutes on: the containers are past the sweep's minimum age.
        now: () => new Date(Date.now() + 120_000),
      });
      const swept = await executor.sweep!([active.runId]);
      expect(swept).toEqual({ removed: [leftover.id], failed: [] });
      expect(await real.list({ [RUN_LABELS.run]: leftover.runId })).toEqual([]);
      expect(await real.list({ [RUN_LABELS.run]: active.runId })).toHaveLength(1);
      expect((await real.list({ [RUN_LABELS.run]: live.runId }))[0]?.running).toBe(true);
    } finally {
      await Promise.all([leftover, active, live].map((h) => real.remove(h)));
    }
  });
});
