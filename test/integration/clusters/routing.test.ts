// Many clusters through the real daemon, pipeline, process engine and kubectl broker: three registry
// entries whose stand-in kubectl answers from different saved clusters (one's API server is down).
// Each incident is triaged and investigated against its own entry (triage output, agent output and
// cluster-calls.jsonl say so), an unknown cluster is rejected naming the known ones, and the
// unreachable cluster degrades /readyz without making the daemon unready or touching the others' runs.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_FILES } from '../../../src/workspace/layout.js';
import { AuditLog } from '../../../src/audit/log.js';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { runCli } from '../../../src/cli/program.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import { replay } from '../../../src/replay/index.js';
import type { RunExecutor } from '../../../src/run/types.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { readCallLog } from '../../../src/kubectl/broker/calls.js';
import { silentLogger } from '../../../src/log/logger.js';
import { clusterStates } from '../../../src/status/client.js';
import { Redactor } from '../../../src/log/redact.js';
import { dropByRename, incidentJson, waitForState } from '../../support/incidents.js';
import { freePort } from '../../support/net.js';
import { fakeAdapter, REPO_ROOT, tempDir, testConfig } from '../../support/runs.js';
import { FINISH_ON_HOST } from '../../support/sh-agent.js';

const FAKE = path.join(REPO_ROOT, 'test/fixtures/fake-kubectl');
const KUBECTL = path.join(FAKE, 'kubectl');
const SAVED = (name: string) => `file://${path.join(FAKE, 'clusters', name)}`;
/** A pod only the prod-eu-1 stand-in has, and one only the staging stand-in has. */
const EU_POD = 'payments-api-7c9d8f6b5d-x2k9q';
const STAGING_POD = 'orders-consumer-s42t8q6rf6-9f7jx';
const TOKEN = 'kubeconfig-user-token-never-recorded';

const kubeconfig = (clusters: [string, string][], contexts: [string, string][], current?: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: clusters.map(([name, server]) => ({ name, cluster: { server } })),
    contexts: contexts.map(([name, cluster]) => ({ name, context: { cluster, user: 'investigator' } })),
    users: [{ name: 'investigator', user: { token: TOKEN } }],
    ...(current ? { 'current-context': current } : {}),
  });

describe('a cluster registry routes each incident to its own cluster', () => {
  let t: { dir: string; cleanup: () => Promise<void> };
  let daemon: Daemon;
  let executor: RunExecutor;
  let configFile: string;
  let root: string;
  let base: string;

  beforeAll(async () => {
    t = await tempDir('tr-clusters-');
    await chmod(t.dir, 0o755);
    // prod-eu-1 shares a kubeconfig whose current-context is another cluster: only its context picks it.
    const shared = path.join(t.dir, 'kube-shared');
    await writeFile(
      shared,
      kubeconfig(
        [
          ['eu', SAVED('crashloop-payments-api')],
          ['other', SAVED('failed-rollout-orders')],
        ],
        [
          ['eu-investigator', 'eu'],
          ['other-admin', 'other'],
        ],
        'other-admin',
      ),
    );
    const staging = path.join(t.dir, 'kube-staging');
    await writeFile(
      staging,
      kubeconfig([['staging', SAVED('failed-rollout-orders')]], [['staging', 'staging']], 'staging'),
    );
    const dr = path.join(t.dir, 'kube-dr');
    await writeFile(dr, kubeconfig([['dr', 'https://127.0.0.1:9']], [['dr', 'dr']], 'dr'));

    // The triage skill: asks kubectl which context it has and lists the pods.
    const skill = path.join(t.dir, 'skill');
    await mkdir(skill, { recursive: true });
    await writeFile(
      path.join(skill, 'triage.sh'),
      [
        '#!/bin/sh',
        `echo "triage context: $(${KUBECTL} config current-context 2>&1)"`,
        `${KUBECTL} get pods -A 2>&1 | head -n 400`,
        'exit 0',
        '',
      ].join('\n'),
    );
    await chmod(path.join(skill, 'triage.sh'), 0o755);

    root = path.join(t.dir, 'incidents');
    await mkdir(root, { recursive: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = testConfig(t.dir, {
      engine: 'process',
      // The agent is sh: readiness finds it on PATH.
      agent: { command: 'sh' },
      clusters: {
        'prod-eu-1': { kubeconfig: shared, context: 'eu-investigator', aliases: ['prod-eu'] },
        staging: { kubeconfig: staging },
        dr: { kubeconfig: dr },
      },
      kubectl: { command: KUBECTL, access_check: true },
      skills: {
        sources: [{ name: 'clusters-skill', path: skill }],
        disable_triage_preload: false,
        triage: {
          skill: 'clusters-skill',
          script: 'triage.sh',
          args: ['--output-dir', '{triage_dir}'],
          validate_report: false,
        },
      },
      http: { port, host: '127.0.0.1' },
      intake: { write_settle: '100ms' },
      scheduling: { rescan_interval: '300ms', lease_ttl: '5s', shutdown_timeout: '5s' },
    });
    const adapter = fakeAdapter('sh');
    const script = [
      'echo "agent context: $(kubectl config current-context 2>&1)"',
      'kubectl get pods -A; echo "get exit=$?"',
      ...FINISH_ON_HOST,
    ].join('\n');
    executor = createRunExecutor({
      config,
      log: silentLogger(),
      redactor: new Redactor(),
      secrets: {},
      audit: new AuditLog(),
      env: { PATH: process.env.PATH, HOME: t.dir },
      engine: createProcessEngine(config, silentLogger()),
      agents: () => ({
        ...adapter,
        buildInvocation: (input) => ({ ...adapter.buildInvocation(input), args: ['-c', script] }),
      }),
    });
    daemon = new Daemon({ config, log: silentLogger(), executor, audit: new AuditLog() });
    configFile = path.join(t.dir, 'config.yaml');
    // The same configuration for the commands (durations in ms, paths absolute).
    await writeFile(configFile, JSON.stringify(config));
    await daemon.start();
  }, 30_000);

  afterAll(async () => {
    await daemon?.stop();
    await t?.cleanup();
  });

  const runOf = async (dir: string) => {
    const state = await waitForState(dir, ['succeeded', 'failed'], 30_000);
    const runDir = path.join(dir, '.triage', 'runs', state.runs.at(-1)?.id ?? '');
    return {
      state,
      runDir,
      result: await readRunResult(runDir),
      triage: await readFile(path.join(runDir, RUN_FILES.triageLog), 'utf8'),
      agent: await readFile(path.join(runDir, 'agent-stdout.log'), 'utf8'),
      calls: (await readCallLog(path.join(runDir, RUN_FILES.clusterCalls))).records,
    };
  };

  it('triages and investigates each incident against its own cluster, and rejects an unknown one naming the known', async () => {
    const eu = await dropByRename(root, 'eu', incidentJson({ cluster: 'prod-eu' }));
    const stg = await dropByRename(root, 'staging', incidentJson({ cluster: 'staging' }));
    const unknown = await dropByRename(root, 'unknown', incidentJson({ cluster: 'prod-us-9' }));

    const rejected = await waitForState(unknown, ['rejected']);
    expect(rejected.reason).toContain(
      '"prod-us-9" is not in the cluster registry (known: prod-eu-1, staging, dr)',
    );
    expect(rejected.runs).toEqual([]);

    const a = await runOf(eu);
    expect(a.state.state, a.agent).toBe('succeeded');
    // The alias found the entry; the entry's context won over the shared kubeconfig's current-context.
    expect(a.result.ok && a.result.value.cluster).toEqual({
      name: 'prod-eu-1',
      routedBy: 'alias',
      requested: 'prod-eu',
      reachable: true,
    });
    expect(a.triage).toContain('triage context: eu-investigator');
    expect(a.triage).toContain(EU_POD);
    expect(a.triage).not.toContain(STAGING_POD);
    expect(a.agent).toContain(EU_POD);
    expect(a.agent).not.toContain(STAGING_POD);
    expect(a.calls.map((c) => [c.normalized, c.decision, c.exitCode, c.cluster])).toContainEqual([
      'get pods --all-namespaces',
      'allowed',
      0,
      'prod-eu-1',
    ]);

    const b = await runOf(stg);
    expect(b.state.state, b.agent).toBe('succeeded');
    expect(b.result.ok && b.result.value.cluster).toEqual({
      name: 'staging',
      routedBy: 'name',
      requested: 'staging',
      reachable: true,
    });
    expect(b.triage).toContain('triage context: staging');
    expect(b.triage).toContain(STAGING_POD);
    expect(b.triage).not.toContain(EU_POD);
    expect(b.agent).toContain(STAGING_POD);
    expect(b.agent).not.toContain(EU_POD);
    expect(b.calls.every((c) => c.cluster === 'staging')).toBe(true);

    // The audit names the entry; no record anywhere in the run holds the kubeconfig's credentials.
    const audit = await readFile(path.join(eu, '.triage', 'audit.jsonl'), 'utf8');
    const preparing = audit
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.type === 'preparing');
    expect(preparing?.cluster).toEqual({ name: 'prod-eu-1', routedBy: 'alias', requested: 'prod-eu' });
    for (const dir of [a.runDir, b.runDir])
      for (const file of [RUN_FILES.triageLog, 'agent-stdout.log', RUN_FILES.clusterCalls, 'result.json'])
        expect(await readFile(path.join(dir, file), 'utf8')).not.toContain(TOKEN);
    expect(audit).not.toContain(TOKEN);

    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/triage_runner_runs_total\{status="succeeded",cluster="prod-eu-1"\} 1/);
    expect(metrics).toMatch(/triage_runner_runs_total\{status="succeeded",cluster="staging"\} 1/);
  }, 60_000);

  it('an unreachable cluster: its incident carries the gap, /readyz stays ready naming it, the other clusters run on', async () => {
    const down = await dropByRename(root, 'dr', incidentJson({ cluster: 'dr' }));
    const up = await dropByRename(root, 'eu-2', incidentJson({ cluster: 'prod-eu-1' }));

    const d = await runOf(down);
    expect(d.result.ok && d.result.value.cluster).toEqual({
      name: 'dr',
      routedBy: 'name',
      requested: 'dr',
      unreachable: expect.stringContaining('connection refused'),
      reachable: false,
      detail: expect.stringContaining('cannot be reached'),
    });
    expect(d.triage).toContain('Unable to connect to the server');
    expect(d.agent).toMatch(/Unable to connect to the server[^\n]*\nget exit=1/);

    const u = await runOf(up);
    expect(u.state.state, u.agent).toBe('succeeded');
    expect(u.result.ok && u.result.value.cluster).toEqual({
      name: 'prod-eu-1',
      routedBy: 'name',
      requested: 'prod-eu-1',
      reachable: true,
    });
    expect(u.agent).toContain(EU_POD);

    const res = await fetch(`${base}/readyz`);
    const body = (await res.json()) as {
      ok: boolean;
      degraded?: boolean;
      checks: { name: string; ok: boolean; degraded?: boolean; detail?: string }[];
    };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.ok).toBe(true);
    expect(body.degraded).toBe(true);
    expect(body.checks.filter((c) => c.name.startsWith('cluster:'))).toEqual([
      { name: 'cluster:prod-eu-1', ok: true },
      { name: 'cluster:staging', ok: true },
      {
        name: 'cluster:dr',
        ok: true,
        degraded: true,
        detail: expect.stringMatching(/cannot be reached: .*127\.0\.0\.1:9.*connection refused/),
      },
    ]);
    // What `status` shows of the clusters when a daemon answers.
    expect(await clusterStates({ base })).toEqual([
      { name: 'prod-eu-1', reachable: true },
      { name: 'staging', reachable: true },
      { name: 'dr', reachable: false, detail: expect.stringContaining('connection refused') },
    ]);
  }, 60_000);

  it('replay investigates the cluster the original run used, or the one --cluster names', async () => {
    const original = await dropByRename(root, 'eu-replayed', incidentJson({ cluster: 'prod-eu' }));
    expect((await runOf(original)).state.state).toBe('succeeded');
    const replayInto = async (out: string, cluster?: string) => {
      const result = await replay(
        {
          input: original,
          cwd: t.dir,
          out: path.join(t.dir, out),
          maxIncidentBytes: 1 << 20,
          ...(cluster ? { cluster } : {}),
        },
        { executor, log: silentLogger() },
      );
      return {
        result: await readRunResult(result.runDir),
        triage: await readFile(path.join(result.runDir, RUN_FILES.triageLog), 'utf8').catch(() => ''),
        agent: await readFile(path.join(result.runDir, 'agent-stdout.log'), 'utf8'),
      };
    };
    const same = await replayInto('replay-same');
    expect(same.result.ok && same.result.value.cluster).toEqual({
      name: 'prod-eu-1',
      routedBy: 'alias',
      requested: 'prod-eu',
      reachable: true,
    });
    expect(same.agent).toContain(EU_POD);

    // Pointed at the staging copy: the incident still says prod-eu, the calls go to staging.
    const moved = await replayInto('replay-staging', 'staging');
    expect(moved.result.ok && moved.result.value.cluster).toEqual({
      name: 'staging',
      routedBy: 'override',
      requested: 'prod-eu',
      reachable: true,
    });
    expect(moved.agent).toContain(STAGING_POD);
    expect(moved.agent).not.toContain(EU_POD);

    // The command refuses a --cluster that names no entry, listing the known ones, before anything runs.
    const err: string[] = [];
    const io = {
      stdout: () => undefined,
      stderr: (text: string) => void err.push(text),
      env: { PATH: process.env.PATH },
      cwd: t.dir,
    };
    const code = await runCli(
      [
        '--config',
        configFile,
        'replay',
        original,
        '--cluster',
        'prod-us-9',
        '--out',
        path.join(t.dir, 'never'),
      ],
      io,
    );
    expect(code).toBe(2);
    expect(err.join('')).toContain(
      'replay: --cluster prod-us-9 is not a cluster registry entry or alias (known: prod-eu-1, staging, dr)',
    );
  }, 90_000);

  it("context previews the triage against the incident's own cluster, and refuses an unknown one", async () => {
    const ws = await dropByRename(path.join(t.dir, 'previews'), 'eu', incidentJson({ cluster: 'prod-eu' }));
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      stdout: (text: string) => void out.push(text),
      stderr: (text: string) => void err.push(text),
      env: { PATH: process.env.PATH, HOME: t.dir },
      cwd: t.dir,
    };
    expect(await runCli(['--config', configFile, 'context', ws, '--json'], io), err.join('')).toBe(0);
    const { prompt } = JSON.parse(out.join('')) as { prompt: { system: string; user: string } };
    expect(`${prompt.system}${prompt.user}`).toContain('triage context: eu-investigator');
    expect(`${prompt.system}${prompt.user}`).toContain(EU_POD);

    const unknown = await dropByRename(
      path.join(t.dir, 'previews'),
      'unknown',
      incidentJson({ cluster: 'prod-us-9' }),
    );
    err.length = 0;
    expect(await runCli(['--config', configFile, 'context', unknown], io)).toBe(2);
    expect(err.join('')).toContain(
      '"prod-us-9" is not in the cluster registry (known: prod-eu-1, staging, dr)',
    );
  }, 60_000);
});
