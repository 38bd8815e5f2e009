// The real agent image (triage-agent:latest, built by .ci/build-agent-image.sh from runners/Dockerfile)
// run through the docker engine with the hardening every run gets: what the agent CLIs and the triage
// skill need is there and works on a read-only root, and the image's own `claude` answers a one-turn
// prompt against the local Anthropic API server, alone and inside a whole `triage-runner daemon` run.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claude } from '../../src/agents/claude.js';
import { containerLayout } from '../../src/run/layout.js';
import { writeInvocationFiles } from '../../src/run/invocation.js';
import { agentAccess, shareRunInputs } from '../../src/run/share-run.js';
import { createDockerEngine } from '../../src/engines/docker/index.js';
import { LABEL_PREFIX, RUN_LABELS } from '../../src/engines/labels.js';
import type { Engine, RunExit, RunSpec } from '../../src/engines/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { dropIncident, startCliDaemon, waitForFinalRun, type CliDaemon } from '../support/cli-daemon.js';
import { AGENT_IMAGE, dockerHost, requireAgentImage, requireEngine } from '../support/engine.js';
import {
  ANTHROPIC_ANSWER,
  ANTHROPIC_USAGE,
  messageRequests,
  startAnthropic,
} from '../support/providers/anthropic.js';
import type { AnthropicFake } from '../support/providers/anthropic.js';
import { findRequestContaining } from '../support/providers/server.js';
import { fixtureSkills, skillListings } from '../support/agent-clis.js';
import {
  FIXTURE_SKILLS,
  PATH_CHECK,
  copySkillSource,
  fidelityConfig,
  fidelityWorkspace,
  parsePathCheck,
  runFidelity,
  PROMPT_PATHS_AT_LEAST,
} from '../support/path-check.js';
import { templateReport } from '../support/reports.js';
import { REPO_ROOT, tempDir, testConfig } from '../support/runs.js';

const docker = await requireEngine();
const hasImage = docker ? await requireAgentImage(docker) : false;
const RUN_TIMEOUT_MS = 90_000;
/** Room for a run that hits RUN_TIMEOUT_MS to be stopped and removed before the test gives up. */
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 30_000;

/** The CLI versions the image must carry: the pins the contract tests run (.ci/install-agent-clis.sh). */
async function pinnedVersions(): Promise<Record<string, string>> {
  const script = await readFile(path.join(REPO_ROOT, '.ci/install-agent-clis.sh'), 'utf8');
  const pin = (name: string) => {
    const m = new RegExp(`^${name}=(\\S+)$`, 'm').exec(script);
    if (!m?.[1]) throw new Error(`${name}=… not found in .ci/install-agent-clis.sh`);
    return m[1];
  };
  return {
    claude: pin('CLAUDE_CODE_VERSION'),
    codex: pin('CODEX_VERSION'),
    gemini: pin('GEMINI_CLI_VERSION'),
  };
}

// Each probe prints `key=value` lines; a failing command shows up as its error text in the value.
const PROBES = `
echo "uid=$(id -u)"
echo "user=$(id -un)"
echo "home=$HOME"
if (echo x > /probe) 2>/tmp/err; then echo "root_write=ok"; else echo "root_write=$(cat /tmp/err)"; fi
if echo x > "$HOME/probe" && mkdir -p "$HOME/.cache/x"; then echo "home_write=ok"; else echo "home_write=failed"; fi
echo "claude=$(claude --version 2>&1)"
echo "codex=$(codex --version 2>&1)"
echo "gemini=$(gemini --version 2>&1)"
echo "bash=$(bash -c 'declare -A m=([k]=v); echo "\${BASH_VERSINFO[0]} \${m[k]}"' 2>&1)"
echo "jq=$(printf '{"items":[{"n":1},{"n":2}]}' | jq -r '[.items[].n] | add' 2>&1)"
echo "kubectl=$(kubectl version --client 2>&1 | head -n1)"
echo "coreutils=$(printf 'b\\na\\n' | sort | tr -d '\\n' | wc -c | tr -d ' ')"
`;

const facts = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .flatMap((l) => (/^\w+=/.test(l) ? [[l.split('=')[0], l.slice(l.indexOf('=') + 1)]] : [])),
  );

describe.skipIf(!docker || !hasImage)(`the agent image ${AGENT_IMAGE} on the docker engine`, () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let engine: Engine;
  let provider: AnthropicFake;
  let daemon: CliDaemon | undefined;
  const runTag = `agent-image-${process.pid}-${Date.now()}`;
  let n = 0;

  beforeAll(async () => {
    root = await tempDir('triage-agent-image-');
    await copySkillSource(root.dir);
    provider = await startAnthropic();
    // Host networking: the CLI reaches the provider on the host's 127.0.0.1 (Podman and Docker alike).
    const config = testConfig(root.dir, {
      docker: { host: dockerHost(), memory: '1g', pids: 256, cpus: 1, tmpfs_size: '256m', network: 'host' },
    });
    engine = createDockerEngine(config, silentLogger());
  });

  afterEach(() => {
    provider.toolCall = undefined;
  });

  afterAll(async () => {
    await daemon?.stop();
    await engine?.close();
    await provider?.close();
    await root?.cleanup();
  });

  /** Runs one container to its end and removes it; returns its exit and output. */
  async function run(over: Partial<RunSpec>): Promise<{ exit: RunExit; stdout: string; stderr: string }> {
    n++;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const handle = await engine.start({
      runId: `${runTag}-${n}`,
      incidentId: 'inc-agent-image',
      labels: { [`${LABEL_PREFIX}test`]: runTag },
      image: AGENT_IMAGE,
      command: 'bash',
      args: [],
      env: { HOME: '/home/agent' },
      secretEnv: {},
      stdin: '',
      workdir: '/workspace',
      mounts: [],
      tmpfs: ['/home/agent', '/tmp'],
      stateDir: root.dir,
      onStdout: (c) => void out.push(c),
      onStderr: (c) => void err.push(c),
      ...over,
    });
    try {
      const exit = await engine.wait(handle, RUN_TIMEOUT_MS);
      return { exit, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
    } finally {
      await engine.remove(handle);
    }
  }

  it(
    'runs as uid 1000 on a read-only root with a writable tmpfs HOME and has the pinned CLIs, bash, jq and kubectl',
    async () => {
      const { exit, stdout, stderr } = await run({ args: ['-c', PROBES] });
      expect(exit.exitCode, stderr).toBe(0);
      const f = facts(stdout);
      const pins = await pinnedVersions();
      expect(f.uid).toBe('1000');
      expect(f.user).toBe('agent');
      expect(f.home).toBe('/home/agent');
      expect(f.root_write).toMatch(/read-only file system/i);
      expect(f.home_write).toBe('ok');
      expect(f.claude).toBe(`${pins.claude} (Claude Code)`);
      expect(f.codex).toBe(`codex-cli ${pins.codex}`);
      expect(f.gemini).toBe(pins.gemini);
      // The triage script uses associative arrays (bash 4+) and jq; its validator uses grep.
      expect(f.bash).toMatch(/^[5-9] v$/);
      expect(f.jq).toBe('3');
      expect(f.kubectl).toMatch(/^Client Version: (v\d+\.\d+|version\.Info)/);
      expect(f.coreutils).toBe('2');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "answers a one-turn prompt with the image's claude CLI against the local Anthropic API, through the adapter's invocation",
    async () => {
      const workspace = path.join(root.dir, 'incidents', 'inc-agent-image');
      const runId = `run-${n + 1}`;
      const bundleDir = path.join(workspace, '.triage', 'runs', runId);
      await mkdir(path.join(workspace, 'output'), { recursive: true });
      await mkdir(bundleDir, { recursive: true });
      // The container user (uid 1000) writes the report and the bundle; the test runs as another user.
      await chmod(path.join(workspace, 'output'), 0o777);
      await chmod(bundleDir, 0o777);
      await writeFile(
        path.join(workspace, 'incident.json'),
        JSON.stringify({ incidentId: 'inc-agent-image' }),
      );
      const config = testConfig(root.dir);
      const layout = containerLayout({
        config,
        placement: 'container',
        workspaceDir: workspace,
        runId,
        bundleDir,
        adapter: claude,
      });
      const system = 'SYSTEM-PART-agent-image: you investigate Kubernetes incidents.';
      const user = 'USER-PART-agent-image: the payments-api pod is crash-looping; say what you would check.';
      const invocation = claude.buildInvocation({
        prompt: { system, user },
        model: 'sonnet',
        maxTurns: 3,
        extraArgs: [],
        paths: layout.paths,
        providers: { anthropicBaseUrl: provider.url },
        secrets: { ANTHROPIC_API_KEY: 'sk-ant-agent-image-test' },
      });
      const fileMounts = await writeInvocationFiles(invocation, layout, 'container');
      // As the pipeline does before the launch: what the agent reads of its run folder is shared with it.
      await shareRunInputs(workspace, bundleDir, agentAccess('container', {}, config.docker.user));

      const { exit, stdout, stderr } = await run({
        runId: `${runTag}-claude`,
        command: invocation.command,
        args: invocation.args,
        env: { ...layout.env, ...invocation.env },
        secretEnv: invocation.secretEnv,
        stdin: invocation.stdin,
        workdir: layout.workdir,
        mounts: [...layout.mounts, ...fileMounts],
        tmpfs: layout.tmpfs,
      });

      const outcome = claude.parseOutput({
        exitCode: exit.exitCode,
        signal: exit.signal,
        timedOut: false,
        stdout,
        stderr,
      });
      expect(outcome, stderr).toMatchObject({ status: 'succeeded', exitCode: 0, turns: 1 });
      expect(outcome.tokens).toEqual({
        input: ANTHROPIC_USAGE.input_tokens,
        output: ANTHROPIC_USAGE.output_tokens,
      });
      expect(stdout).toContain(ANTHROPIC_ANSWER);
      const calls = messageRequests(provider);
      const withUser = findRequestContaining(calls, user);
      expect(withUser, 'the user part reached /v1/messages').toBeDefined();
      const body = JSON.parse(withUser?.body ?? '{}') as { system?: { text?: string }[] };
      expect(
        body.system?.some((b) => b.text?.includes(system)),
        'system part appended to the system prompt',
      ).toBe(true);
      expect(String(withUser?.headers['user-agent'])).toContain(
        `claude-cli/${(await pinnedVersions()).claude}`,
      );
      expect(provider.unknown.map((r) => `${r.method} ${r.url}`)).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'runs a dropped incident end to end in the image: triage-runner daemon, docker engine, the real claude writing the report with its Bash tool',
    async () => {
      const incidents = path.join(root.dir, 'daemon-incidents');
      const ws = path.join(incidents, 'crashloop-payments-1');
      // The model's first answer is a Bash tool call; the CLI runs it inside the container, as uid 1000.
      provider.toolCommand =
        'printf \'# Report\\n\\n## Summary\\nThe payments-api pod crash-loops on a missing ConfigMap key; written as %s.\\n\\n## Root Cause\\nKey DB_URL absent from payments-config.\\n\' "$(id -un)" > /workspace/output/investigation.md';
      const before = messageRequests(provider).length;
      daemon = await startCliDaemon({
        dir: root.dir,
        config: {
          workspaces_root: incidents,
          agent: {
            image: AGENT_IMAGE,
            model: 'sonnet',
            timeout: '2m',
            min_report_bytes: 40,
            report_sections: ['Summary', 'Root Cause'],
          },
          providers: { anthropic_base_url: provider.url },
          docker: { host: dockerHost(), memory: '1g', network: 'host' },
        },
        args: ['--engine', 'docker', '--agent', 'claude'],
        env: {
          PATH: process.env.PATH,
          HOME: root.dir,
          ANTHROPIC_API_KEY: 'sk-ant-agent-image-daemon',
        },
      });
      await dropIncident(ws, {
        incidentId: 'agent-image-daemon-1',
        cluster: 'prod-1',
        namespace: 'payments',
        resource: { apiVersion: 'v1', kind: 'Pod', name: 'payments-api-7d9f', namespace: 'payments' },
        faultType: 'CrashLoop',
        severity: 'high',
        timestamp: '2026-11-22T01:00:00Z',
      });

      const { state, bundle, result } = await waitForFinalRun(ws, RUN_TIMEOUT_MS, () => daemon?.tail() ?? '');
      const stderr = await readFile(path.join(bundle, 'agent-stderr.log'), 'utf8').catch(String);
      expect(state.state, `${stderr}\n${daemon.tail()}`).toBe('succeeded');
      expect(result).toMatchObject({
        status: 'succeeded',
        exitCode: 0,
        engine: 'docker',
        turns: 2,
        report: { path: '/workspace/output/investigation.md', missingSections: [] },
      });
      const invocation = JSON.parse(await readFile(path.join(bundle, 'invocation.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(invocation).toMatchObject({ engine: 'docker', image: AGENT_IMAGE, command: 'claude' });
      expect(await readFile(path.join(ws, 'output', 'investigation.md'), 'utf8')).toContain(
        'written as agent.',
      );
      const calls = messageRequests(provider).slice(before);
      expect(
        calls.some((r) => r.body.includes('"tool_result"')),
        'the tool result went back to the model',
      ).toBe(true);
      expect(await engine.list({ [RUN_LABELS.run]: path.basename(bundle) })).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
  it(
    'finds every path the prompt names inside the image, and the skills where claude looks (path-checking stand-in)',
    async () => {
      const config = fidelityConfig(root.dir, {
        agent: { image: AGENT_IMAGE, command: 'path-check' },
        docker: { host: dockerHost(), memory: '1g', network: 'none' },
      });
      const run = await runFidelity({
        config,
        engine,
        agent: 'claude',
        workspace: await fidelityWorkspace(root.dir, 'image-path-check'),
        runId: `image-path-check-${process.pid}`,
        // The stand-in is not in the image: its folder is mounted and put first on PATH.
        overrides: { pathPrepend: [path.dirname(PATH_CHECK)] },
      });
      const check = parsePathCheck(run.stdout);
      expect(check.missing, run.stdout).toEqual([]);
      expect(check.checked).toBeGreaterThanOrEqual(PROMPT_PATHS_AT_LEAST);
      expect(check.skills['~/.claude/skills']).toEqual(FIXTURE_SKILLS);
      expect(run.outcome).toMatchObject({ status: 'succeeded', exitCode: 0 });
      expect(run.result.validator).toMatchObject({ verdict: 'compliant' });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "runs an incident with the image's claude: the model request lists the laid-out skills once, the report passes both checks",
    async () => {
      const runId = `image-claude-skills-${process.pid}`;
      const config = fidelityConfig(root.dir, {
        agent: { image: AGENT_IMAGE, model: 'sonnet', timeout: '2m' },
        providers: { anthropic_base_url: provider.url },
        docker: { host: dockerHost(), memory: '1g', network: 'host' },
      });
      // The model's first answer writes the report with claude's Write tool, to the template.
      provider.toolCall = {
        name: 'Write',
        input: { file_path: '/workspace/output/investigation.md', content: templateReport() },
      };
      const before = messageRequests(provider).length;
      const run = await runFidelity({
        config,
        engine,
        agent: 'claude',
        workspace: await fidelityWorkspace(root.dir, 'image-claude-skills'),
        runId,
        secrets: { ANTHROPIC_API_KEY: 'sk-ant-agent-image-skills' },
      });
      const stderr = await readFile(path.join(run.bundle, 'agent-stderr.log'), 'utf8').catch(String);
      expect(run.outcome, stderr).toMatchObject({ status: 'succeeded', exitCode: 0 });
      const calls = messageRequests(provider).slice(before);
      const main = calls.find((r) =>
        r.body.includes('Investigate the incident described in the preloaded context'),
      );
      expect(main, 'the request carrying our user prompt').toBeDefined();
      // Claude Code's own listing, from ~/.claude/skills/<name>: each skill once, ours does not repeat it.
      const skills = await fixtureSkills('/home/agent/.claude/skills');
      expect(skillListings(main?.body ?? '', skills)).toEqual({
        'k8s-troubleshooter': 1,
        'log-search': 1,
      });
      expect(main?.body).toContain('Your CLI lists the skills available to you');
      expect(run.result.report.missingSections).toEqual([]);
      expect(run.result.validator).toMatchObject({ verdict: 'compliant', exitCode: 0 });
    },
    TEST_TIMEOUT_MS,
  );
});
