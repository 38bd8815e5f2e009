// What the prompt says is true where the agent runs: a stand-in agent takes every absolute (and ~/) path
// out of what it received and the files those name, and finds each one, under the process engine, the
// docker engine (the FROM scratch test image) and the kubernetes engine (a fake API server: the Job's
// file system rebuilt from its mounts). The runs go through the whole pipeline with a skills source
// that has the k8s4agents contracts: the triage script runs on the host, skills are laid out for the
// CLI, the report is checked by us and by the skill's own validator.
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentName } from '../../../src/config/schema.js';
import { createDockerEngine } from '../../../src/engines/docker/index.js';
import { createKubernetesEngine } from '../../../src/engines/kubernetes/index.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { silentLogger } from '../../../src/log/logger.js';
import { TEST_IMAGE, dockerHost, requireEngine, requireTestImage } from '../../support/engine.js';
import { freePort } from '../../support/net.js';
import { fetchPodFiles, returnPodOutputs } from '../../support/pod-files.js';
import { FakeKubeApi } from '../../support/fake-kube-api.js';
import {
  FIXTURE_SKILLS,
  PATH_CHECK,
  copySkillSource,
  emulateJobFiles,
  fidelityConfig,
  fidelityWorkspace,
  parsePathCheck,
  pathCheckJob,
  runFidelity,
  type FidelityRun,
  PROMPT_PATHS_AT_LEAST,
} from '../../support/path-check.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

/** Where each adapter's CLI finds the skills itself, and the alias every CLI gets. */
const NATIVE: Record<AgentName, string> = {
  claude: '~/.claude/skills',
  codex: '~/.agents/skills',
  gemini: '~/.gemini/skills',
  goose: '~/.agents/skills',
};

/** What every run must show, whatever the engine: no missing path, the skills laid out, both report checks passed. */
function expectTrueSandbox(run: FidelityRun, agent: AgentName): void {
  const check = parsePathCheck(run.stdout);
  expect(check.missing, run.stdout).toEqual([]);
  expect(check.checked).toBeGreaterThanOrEqual(PROMPT_PATHS_AT_LEAST);
  expect(check.skills[NATIVE[agent]]).toEqual(FIXTURE_SKILLS);
  expect(check.skills['~/.claude/skills']).toEqual(FIXTURE_SKILLS);
  expect(run.outcome).toMatchObject({ status: 'succeeded', exitCode: 0 });
  // The stand-in wrote the headings the prompt listed: our check and the skill's validator both pass.
  expect(run.result.report.missingSections).toEqual([]);
  expect(run.result.validator).toMatchObject({ verdict: 'compliant', exitCode: 0 });
}

/** The triage script's report and products are in the prompt, by the agent's paths. */
function expectTriageProducts(run: FidelityRun, triageDir: string): void {
  const prompt = `${run.prompt.system}\n${run.prompt.user}`;
  expect(prompt).toContain(`----- ${triageDir}/triage-report.md -----\n# Kubernetes Incident Triage Report`);
  expect(prompt).toContain(`- ${triageDir}/evidence/pods.json (`);
  expect(prompt).toContain(`Full report: ${triageDir}/triage-report.md`);
  expect(prompt).toContain('Scope: Namespace shop');
}

describe('paths in the prompt under the process engine', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    root = await tempDir('triage-fidelity-process-');
    await copySkillSource(root.dir);
  });
  afterAll(async () => root?.cleanup());

  it.each(['claude', 'codex', 'gemini', 'goose'] as const)(
    'finds every path the %s prompt names, the skills where the CLI looks, and a report both checks pass',
    async (agent) => {
      const config = fidelityConfig(root.dir, { engine: 'process', agent: { command: PATH_CHECK } });
      const workspace = await fidelityWorkspace(root.dir, `process-${agent}`);
      const runId = `process-${agent}-${process.pid}`;
      const run = await runFidelity({
        config,
        engine: createProcessEngine(config, silentLogger(), { env: { PATH: process.env.PATH } }),
        agent,
        workspace,
        runId,
      });
      expectTrueSandbox(run, agent);
      expectTriageProducts(run, path.join(run.bundle, 'triage'));
    },
  );
});

describe("the triage skill's report validator in a run", () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    root = await tempDir('triage-fidelity-validator-');
    await copySkillSource(root.dir);
  });
  afterAll(async () => root?.cleanup());

  it('records a non-compliant report in result.json and the audit trail without failing the run', async () => {
    // Our check wants two headings of another template; the skill's validator wants its seven.
    const config = fidelityConfig(root.dir, {
      engine: 'process',
      agent: { command: PATH_CHECK, report_sections: ['Summary', 'Root Cause'] },
    });
    const workspace = await fidelityWorkspace(root.dir, 'validator-other-template');
    const run = await runFidelity({
      config,
      engine: createProcessEngine(config, silentLogger(), { env: { PATH: process.env.PATH } }),
      agent: 'claude',
      workspace,
      runId: `validator-${process.pid}`,
    });
    expect(run.outcome).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(run.result.report.missingSections).toEqual([]);
    expect(run.result.validator).toMatchObject({
      skill: 'k8s4agents/skills/k8s-troubleshooter',
      command: './scripts/validate-report.sh',
      verdict: 'non_compliant',
      exitCode: 1,
      outputTail: expect.stringContaining('ERROR: missing heading: ## 0. Executive Triage Card'),
    });
    const audit = (await readFile(path.join(workspace.dir, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; verdict?: string });
    const types = audit.map((e) => e.type);
    expect(audit.find((e) => e.type === 'report_validated')).toMatchObject({ verdict: 'non_compliant' });
    expect(types.indexOf('report_validated')).toBeLessThan(types.lastIndexOf('finished'));
  });
});

const docker = await requireEngine();

describe.skipIf(!docker)('paths in the prompt under the docker engine (test image)', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    await requireTestImage(docker!);
    root = await tempDir('triage-fidelity-docker-');
    await copySkillSource(root.dir);
  });
  afterAll(async () => root?.cleanup());

  it.each(['claude', 'codex', 'gemini'] as const)(
    'finds every path the %s prompt names inside the container: host paths in the triage output are rewritten',
    async (agent) => {
      const config = fidelityConfig(root.dir, {
        agent: { image: TEST_IMAGE, command: '/usr/local/bin/path-check' },
        docker: { host: dockerHost(), network: 'none' },
      });
      const workspace = await fidelityWorkspace(root.dir, `docker-${agent}`);
      const runId = `docker-${agent}-${process.pid}`;
      const engine = createDockerEngine(config, silentLogger());
      try {
        const run = await runFidelity({ config, engine, agent, workspace, runId });
        expectTrueSandbox(run, agent);
        const triageDir = `/workspace/.triage/runs/${runId}/triage`;
        expectTriageProducts(run, triageDir);
        // Nothing the agent reads names the host folder.
        expect(`${run.prompt.system}${run.prompt.user}`).not.toContain(workspace.dir);
        for (const file of ['triage/output.log', 'triage/triage-report.md', 'triage/triage-summary.txt'])
          expect(await readFile(path.join(run.bundle, file), 'utf8')).not.toContain(workspace.dir);
      } finally {
        await engine.close();
      }
    },
  );
});

describe('paths in the prompt under the kubernetes engine (fake API server)', () => {
  let api: FakeKubeApi;
  let volume: string;
  beforeAll(async () => {
    api = await new FakeKubeApi().start();
    volume = await mkdtemp(path.join(tmpdir(), 'triage-fidelity-k8s-'));
    await copySkillSource(volume);
    // As deploy/kubernetes publishes them (the daemon sends a Job what its run reads of them).
    for (const dir of ['personas', 'briefs'])
      await cp(path.join(REPO_ROOT, 'configs', dir), path.join(volume, 'configs', dir), { recursive: true });
  });
  afterAll(async () => {
    await api?.close();
    await rm(volume, { recursive: true, force: true });
  });

  it('mounts every path the prompt names into the Job: its file system, rebuilt from the mounts, has them all', async () => {
    const port = await freePort();
    const config = fidelityConfig(volume, {
      engine: 'kubernetes',
      kubernetes: {
        namespace: 'triage',
        broker: { port, host: '127.0.0.1', url: `http://127.0.0.1:${port}` },
      },
      agent: { stop_grace: '1s' },
      personas_dir: path.join(volume, 'configs', 'personas'),
      briefs_dir: path.join(volume, 'configs', 'briefs'),
    });
    const workspace = await fidelityWorkspace(volume, 'k8s-claude');
    const runId = `k8s-claude-${process.pid}`;
    const engine = createKubernetesEngine(config, silentLogger(), {
      kubeConfig: api.kubeConfig(),
      pollIntervalMs: 20,
      logDrainMs: 200,
    });
    let settled: FidelityRun | undefined;
    const running = runFidelity({ config, engine, agent: 'claude', workspace, runId }).then((r) => {
      settled = r;
      return r;
    });
    const deadline = Date.now() + 30_000;
    while (api.jobs.size === 0 && !settled && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const [name, job] = [...api.jobs.entries()][0] ?? [];
    expect(job, `the pipeline created a Job (${settled?.outcome.reason ?? 'no outcome yet'})`).toBeDefined();
    const files = await mkdtemp(path.join(tmpdir(), 'triage-fidelity-job-'));
    try {
      // The pod's emptyDir, filled from the daemon as its init container would.
      const podFiles = path.join(files, '..', `${path.basename(files)}-pod`);
      await fetchPodFiles(api, job, podFiles);
      await emulateJobFiles(job, podFiles, files);
      const check = await pathCheckJob(job, files);
      expect(check.missing).toEqual([]);
      expect(check.checked).toBeGreaterThanOrEqual(PROMPT_PATHS_AT_LEAST);
      expect(check.skills['~/.claude/skills']).toEqual(FIXTURE_SKILLS);
      // What the stand-in wrote in the pod goes back to the daemon, as the pod's last upload.
      await returnPodOutputs(api, job, podFiles);
      // What the agent container would have printed.
      api.setPod(name as string, { running: {} });
      api.appendLog(`${name as string}-pod`, check.stdout);
    } finally {
      api.finishJob(name as string, 0);
      await rm(files, { recursive: true, force: true });
    }
    const run = await running;
    await engine.close();
    // The stand-in wrote the report where the Job's mounts put it: the run collects and checks it.
    expect(run.outcome).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(run.result.report.missingSections).toEqual([]);
    expect(run.result.validator).toMatchObject({ verdict: 'compliant' });
    expectTriageProducts(run, `/workspace/.triage/runs/${runId}/triage`);
  });
});
