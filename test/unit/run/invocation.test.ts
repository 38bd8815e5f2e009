import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { invocationRecord, providerSettings, writeInvocationFiles } from '../../../src/run/invocation.js';
import { containerLayout, hostLayout, skillMounts } from '../../../src/run/layout.js';
import { TailBuffer } from '../../../src/run/output.js';
import type { AgentInvocation } from '../../../src/agents/types.js';
import { tempDir, testConfig } from '../../support/runs.js';

const adapter = {
  skillsDirs: ['.gemini/skills', '.claude/skills'],
  listsSkills: true,
  writableHomeDirs: ['.gemini'],
};
const skills = [
  { hostDir: '/cache/k8s4agents/abc/skills/k8s-troubleshooter', dirName: 'k8s-troubleshooter' },
  { hostDir: '/cache/team/def/helm-debug', dirName: 'helm-debug' },
];

describe('launch helpers', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    root = await tempDir('triage-launch-');
  });
  afterEach(async () => root.cleanup());

  const invocation = (files: AgentInvocation['files']): AgentInvocation => ({
    command: 'gemini',
    args: [],
    env: {},
    secretEnv: { GEMINI_API_KEY: 'AIza-secret' },
    stdin: 'hi',
    files,
  });

  it("mounts the run's bundle read-only in a container, with only its agent-notes/ (mounted after it) and output/ writable", () => {
    const workspaceDir = path.join(root.dir, 'ws');
    const bundleDir = path.join(workspaceDir, '.triage', 'runs', 'r1');
    const layout = containerLayout({
      config: testConfig(root.dir),
      placement: 'container',
      workspaceDir,
      runId: 'r1',
      bundleDir,
      adapter,
    });
    const runDir = '/workspace/.triage/runs/r1';
    expect(layout.mounts.filter((m) => !m.readOnly)).toEqual([
      { source: path.join(workspaceDir, 'output'), target: '/workspace/output', readOnly: false },
      { source: path.join(bundleDir, 'agent-notes'), target: `${runDir}/agent-notes`, readOnly: false },
    ]);
    const targets = layout.mounts.map((m) => m.target);
    expect(layout.mounts[targets.indexOf(runDir)]).toEqual({
      source: bundleDir,
      target: runDir,
      readOnly: true,
    });
    expect(targets.indexOf(runDir)).toBeLessThan(targets.indexOf(`${runDir}/agent-notes`));
    expect(layout.env).toMatchObject({ TRIAGE_RUN_DIR: runDir, TRIAGE_NOTES_DIR: `${runDir}/agent-notes` });
    const host = hostLayout({
      config: testConfig(root.dir),
      placement: 'host',
      workspaceDir,
      runId: 'r1',
      bundleDir,
      adapter,
    });
    expect(host.env).toMatchObject({
      TRIAGE_RUN_DIR: bundleDir,
      TRIAGE_NOTES_DIR: path.join(bundleDir, 'agent-notes'),
    });
  });

  it('lays out each skill in its own folder, read-only, under every skills dir of the adapter, and HOME files at their place', async () => {
    const config = testConfig(root.dir);
    const bundleDir = path.join(root.dir, 'ws', '.triage', 'runs', 'r1');
    const layout = containerLayout({
      config,
      placement: 'container',
      workspaceDir: path.join(root.dir, 'ws'),
      runId: 'r1',
      bundleDir,
      adapter,
    });
    expect(skillMounts(layout.paths.home, adapter, skills)).toEqual([
      {
        source: '/cache/k8s4agents/abc/skills/k8s-troubleshooter',
        target: '/home/agent/.gemini/skills/k8s-troubleshooter',
        readOnly: true,
      },
      {
        source: '/cache/team/def/helm-debug',
        target: '/home/agent/.gemini/skills/helm-debug',
        readOnly: true,
      },
      {
        source: '/cache/k8s4agents/abc/skills/k8s-troubleshooter',
        target: '/home/agent/.claude/skills/k8s-troubleshooter',
        readOnly: true,
      },
      {
        source: '/cache/team/def/helm-debug',
        target: '/home/agent/.claude/skills/helm-debug',
        readOnly: true,
      },
    ]);
    expect(layout.view.skillsDir).toBe('/home/agent/.gemini/skills');
    expect(layout.view.skillsListedByCli).toBe(true);
    // The skills folder the prompt names exists even with no skill in it.
    expect(layout.tmpfs).toEqual([
      '/home/agent',
      '/tmp',
      '/home/agent/.gemini',
      '/home/agent/.gemini/skills',
    ]);

    const mounts = await writeInvocationFiles(
      invocation([
        { path: 'GEMINI.md', content: 'system part' },
        { path: '.gemini/settings.json', content: '{"a":1}', inHome: true },
      ]),
      layout,
      'container',
    );
    expect(await readFile(path.join(bundleDir, 'agent-files', 'GEMINI.md'), 'utf8')).toBe('system part');
    expect(mounts).toEqual([
      {
        source: path.join(bundleDir, 'agent-files', '.home', '.gemini/settings.json'),
        target: '/home/agent/.gemini/settings.json',
        readOnly: true,
      },
    ]);
  });

  it('writes HOME files straight into the per-run HOME under the process engine', async () => {
    const config = testConfig(root.dir);
    const layout = hostLayout({
      config,
      placement: 'host',
      workspaceDir: path.join(root.dir, 'ws'),
      runId: 'r2',
      bundleDir: path.join(root.dir, 'b'),
      adapter,
      tmpDir: root.dir,
    });
    expect(layout.paths.home).toBe(path.join(root.dir, 'triage-runner-home-r2'));
    expect(
      await writeInvocationFiles(
        invocation([{ path: '.gemini/settings.json', content: '{}', inHome: true }]),
        layout,
        'host',
      ),
    ).toEqual([]);
    expect(await readFile(path.join(layout.paths.home, '.gemini/settings.json'), 'utf8')).toBe('{}');
  });

  it('refuses adapter file paths that leave their folder', async () => {
    const layout = hostLayout({
      config: testConfig(root.dir),
      placement: 'host',
      workspaceDir: root.dir,
      runId: 'r3',
      bundleDir: root.dir,
      adapter,
      tmpDir: root.dir,
    });
    await expect(
      writeInvocationFiles(invocation([{ path: '../escape.md', content: 'x' }]), layout, 'host'),
    ).rejects.toThrow(/must be relative and stay inside/);
  });

  it("records each wrapper's own arguments up to the agent's command: the gateway bridge and the pod's token shell", () => {
    const spec = {
      runId: 'r',
      incidentId: 'i',
      labels: {},
      image: 'img',
      command: 'claude',
      args: ['-p', 'x'],
      env: {},
      secretEnv: {},
      stdin: 'hi',
      workdir: '/workspace',
      mounts: [],
      tmpfs: [],
      stateDir: '/state',
    };
    const record = (wrapper: { command: string; args: string[] }) =>
      invocationRecord({
        spec,
        wrapper,
        engine: 'kubernetes',
        placement: 'container',
        agent: 'claude',
        attempt: 0,
        launchedAt: new Date('2026-11-22T00:00:00Z'),
        files: [],
      }).wrapper;
    const script =
      't=$(cat "$TOKEN_FILE") && [ -n "$t" ] || exit 70; export ANTHROPIC_API_KEY="$t"; exec "$0" "$@"';
    expect(record({ command: '/bin/sh', args: ['-c', script, 'claude', '-p', 'x'] })).toEqual({
      command: '/bin/sh',
      args: ['-c', script],
    });
    expect(
      record({ command: 'node', args: ['/guard/bridge.js', '--port', '4000', '--', 'claude', '-p', 'x'] }),
    ).toEqual({ command: 'node', args: ['/guard/bridge.js', '--port', '4000', '--'] });
  });

  it('records secret variable names but never their values', () => {
    const record = invocationRecord({
      spec: {
        runId: 'r',
        incidentId: 'i',
        labels: {},
        image: 'img',
        command: 'gemini',
        args: ['-p', 'x'],
        env: { A: '1' },
        secretEnv: { GEMINI_API_KEY: 'AIza-secret' },
        stdin: 'hi',
        workdir: '/workspace',
        mounts: [],
        tmpfs: [],
        stateDir: '/state',
      },
      engine: 'docker',
      placement: 'container',
      agent: 'gemini',
      attempt: 1,
      launchedAt: new Date('2026-11-22T00:00:00Z'),
      files: [],
    });
    expect(record.secretEnv).toEqual({ GEMINI_API_KEY: '[REDACTED]' });
    expect(JSON.stringify(record)).not.toContain('AIza-secret');
    expect(record.stdin).toEqual({
      bytes: 2,
      sha256: '8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4',
    });
  });

  it('takes provider endpoints from the config first, then the daemon environment', () => {
    const config = testConfig(root.dir, { providers: { anthropic_base_url: 'http://gateway:8080' } });
    expect(
      providerSettings(config, {
        ANTHROPIC_BASE_URL: 'http://env',
        GOOGLE_GEMINI_BASE_URL: 'http://gem',
        OPENAI_BASE_URL: '',
      }),
    ).toEqual({
      anthropicBaseUrl: 'http://gateway:8080',
      geminiBaseUrl: 'http://gem',
    });
  });

  it('keeps the last bytes of a long output and counts all of it', () => {
    const tail = new TailBuffer(10);
    for (const part of ['aaaaaaaa', 'bbbbbbbb', 'cccc']) tail.push(Buffer.from(part));
    expect(tail.text()).toBe('bbbbbbcccc');
    expect(tail.total).toBe(20);
  });
});
