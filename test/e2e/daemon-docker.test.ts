// Acceptance: the real `triage-runner daemon --engine docker --agent claude` investigates a dropped
// incident end to end on the real container engine. The real Claude CLI cannot run in the FROM-scratch
// test image, so agent.command points the claude adapter's invocation at the image's fake agent (which
// prints Claude's JSON result); everything else — intake, context, adapter, engine, audit — is real.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createDockerEngine } from '../../src/engines/docker.js';
import { RUN_LABELS } from '../../src/engines/labels.js';
import { silentLogger } from '../../src/log/logger.js';
import { TEST_IMAGE, dockerHost, requireEngine, requireTestImage } from '../support/engine.js';
import { REPO_ROOT, tempDir, testConfig } from '../support/runs.js';

const docker = await requireEngine();
const API_KEY = 'sk-ant-e2e-secret-0123456789abcdef';

async function until<T>(
  what: string,
  timeoutMs: number,
  fn: () => Promise<T | undefined>,
  detail: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms. ${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!docker)('triage-runner daemon --engine docker --agent claude', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let daemon: ChildProcess | undefined;
  let logs = '';

  beforeAll(async () => {
    await requireTestImage(docker!);
    root = await tempDir('triage-e2e-docker-');
  });

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      const exited = new Promise((r) => daemon!.once('exit', r));
      daemon.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (daemon.exitCode === null) daemon.kill('SIGKILL');
    }
    await root?.cleanup();
  });

  it('investigates a dropped incident: state succeeded, result.json and prompt-sent.md correct, container gone', async () => {
    const incidents = path.join(root.dir, 'incidents');
    await mkdir(incidents, { recursive: true });
    const configFile = path.join(root.dir, 'triage-runner.yaml');
    await writeFile(
      configFile,
      stringify({
        workspaces_root: incidents,
        agent: {
          image: TEST_IMAGE,
          command: '/usr/local/bin/fake-agent',
          timeout: '2m',
          report_sections: ['Summary', 'Root Cause', 'Evidence', 'Remediation'],
        },
        docker: { host: dockerHost(), memory: '256m', network: 'none' },
        skills: { sources: [], cache_dir: path.join(root.dir, 'skills'), disable_triage_preload: true },
        http: { port: 0 },
        log: { level: 'info' },
      }),
    );
    daemon = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO_ROOT, 'src/cli/main.ts'),
        'daemon',
        '--config',
        configFile,
        '--engine',
        'docker',
        '--agent',
        'claude',
      ],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, HOME: root.dir, ANTHROPIC_API_KEY: API_KEY },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    daemon.stdout?.on('data', (c: Buffer) => (logs += c.toString()));
    daemon.stderr?.on('data', (c: Buffer) => (logs += c.toString()));
    const tail = () => `daemon output (tail): ${logs.slice(-3000)}`;
    await until(
      'daemon ready',
      60_000,
      async () => (/daemon ready|watching/i.test(logs) ? true : undefined),
      tail,
    );

    // Dropped the way producers do: write a temp file, rename it into place.
    const ws = path.join(incidents, 'crashloop-web-1');
    await mkdir(ws);
    const incident = {
      incidentId: 'e2e-docker-1',
      cluster: 'prod-1',
      namespace: 'shop',
      resource: { apiVersion: 'v1', kind: 'Pod', name: 'web-1', namespace: 'shop' },
      faultType: 'CrashLoop',
      severity: 'high',
      context: { note: `quotes ' " $(whoami) \`id\` ünïcödé` },
      timestamp: '2026-11-22T01:00:00Z',
    };
    await writeFile(path.join(ws, 'incident.json.tmp'), JSON.stringify(incident, null, 2));
    await rename(path.join(ws, 'incident.json.tmp'), path.join(ws, 'incident.json'));

    const state = await until(
      'state.json succeeded',
      90_000,
      async () => {
        const s = await readFile(path.join(ws, '.triage', 'state.json'), 'utf8').then(
          (t) => JSON.parse(t) as { state: string; runs: { id: string; status: string }[] },
          () => undefined,
        );
        return s && ['succeeded', 'failed', 'rejected'].includes(s.state) ? s : undefined;
      },
      tail,
    );
    expect(state.state, tail()).toBe('succeeded');
    const runId = state.runs.at(-1)!.id;
    const bundle = path.join(ws, '.triage', 'runs', runId);

    const result = JSON.parse(await readFile(path.join(bundle, 'result.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(result).toMatchObject({
      status: 'succeeded',
      exitCode: 0,
      agent: 'claude',
      engine: 'docker',
      tokens: { input: 123, output: 45 },
      costUsd: 0.0012,
      turns: 1,
      report: { path: '/workspace/output/investigation.md', missingSections: [] },
    });
    expect((result.report as { bytes: number }).bytes).toBeGreaterThan(200);

    const promptSent = await readFile(path.join(bundle, 'prompt-sent.md'), 'utf8');
    expect(promptSent).toContain('<incident>');
    expect(promptSent).toContain('e2e-docker-1');
    expect(promptSent).toContain(String(result.promptSha256));

    const invocation = await readFile(path.join(bundle, 'invocation.json'), 'utf8');
    expect(invocation).not.toContain(API_KEY);
    expect(JSON.parse(invocation)).toMatchObject({
      engine: 'docker',
      image: TEST_IMAGE,
      command: '/usr/local/bin/fake-agent',
      secretEnv: { ANTHROPIC_API_KEY: '[REDACTED]' },
    });
    expect(JSON.parse(invocation).args).toEqual(
      expect.arrayContaining(['-p', '--output-format', 'json', '--append-system-prompt-file']),
    );
    expect(await readFile(path.join(bundle, 'agent-stderr.log'), 'utf8')).toContain(
      'fake-agent: started as uid 1000',
    );
    expect(await readFile(path.join(ws, 'output', 'investigation.md'), 'utf8')).toContain('## Root Cause');

    const engine = createDockerEngine(
      testConfig(root.dir, { docker: { host: dockerHost() } }),
      silentLogger(),
    );
    expect(await engine.list({ [RUN_LABELS.run]: runId })).toEqual([]);
    const audit = (await readFile(path.join(ws, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(audit).toEqual(
      expect.arrayContaining(['claimed', 'preparing', 'context_built', 'launched', 'finished']),
    );
  });
});
