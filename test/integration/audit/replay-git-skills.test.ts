import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import type { CliIO } from '../../../src/cli/io.js';
import { runCli } from '../../../src/cli/program.js';
import { loadConfig } from '../../../src/config/index.js';
import { resolveSecrets } from '../../../src/config/secrets.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import { readWorkspace } from '../../../src/workspace/incident.js';
import { tempDir } from '../../support/runs.js';
import { INCIDENT_TEXT, REPO_ROOT } from './pipeline-fixture.js';

// Replay under the process engine with a skills cache from a real git source and the kubectl broker on:
// the agent's HOME (where its skills are laid out, named in the prompt) carries the run id, so a replay,
// which has its own run id, is the original apart from the workspace path and that id.

const ENV = { ANTHROPIC_API_KEY: 'anthropic-env-value-replay-5678', TRIAGE_RUNNER_LOG_LEVEL: 'error' };
const RUN_ID = '20261122T020000Z-0r1g1n';
const AGENT = [
  '#!/bin/sh',
  'cat > /dev/null',
  'kubectl get pods -n payments',
  'mkdir -p output',
  "printf '# Investigation\\n## Summary\\nx\\n## Root Cause\\ny\\n' > output/investigation.md",
  'echo \'{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done","usage":{"input_tokens":1,"output_tokens":1}}\'',
  '',
].join('\n');

async function executable(file: string, text: string): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  await chmod(file, 0o755);
  return file;
}

let root: { dir: string; cleanup: () => Promise<void> };
let ws: string;

beforeAll(async () => {
  root = await tempDir('tr-replay-git-');
  const dir = root.dir;
  const repo = path.join(dir, 'skills-repo');
  const skill = path.join(repo, 'skills/k8s-troubleshooter');
  await mkdir(skill, { recursive: true });
  await writeFile(
    path.join(skill, 'SKILL.md'),
    '---\nname: k8s-troubleshooter\ndescription: troubleshoot Kubernetes workloads\n---\nUse kubectl.\n',
  );
  await executable(path.join(skill, 'scripts/triage.sh'), '#!/bin/sh\nkubectl get pods -n payments\n');
  const identity = {
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  };
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '.'],
    ['commit', '-qm', 'skills'],
  ])
    execFileSync('git', args, { cwd: repo, env: { ...process.env, ...identity } });
  const kubectl = await executable(
    path.join(dir, 'bin/kubectl'),
    '#!/bin/sh\necho "NAME READY STATUS"\necho "payments-api-1 0/1 CrashLoopBackOff"\n',
  );
  const agent = await executable(path.join(dir, 'bin/agent'), AGENT);
  await writeFile(
    path.join(dir, 'kubeconfig'),
    'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n',
  );
  await writeFile(
    path.join(dir, 'config.yaml'),
    [
      `workspaces_root: ${path.join(dir, 'incidents')}`,
      'engine: process',
      `agent: { name: claude, command: ${agent}, timeout: 30s, min_report_bytes: 10 }`,
      'skills:',
      `  cache_dir: ${path.join(dir, 'skills-cache')}`,
      `  sources: [{ name: k8s4agents, git: ${repo}, ref: main }]`,
      '  triage: { skill: k8s4agents, script: skills/k8s-troubleshooter/scripts/triage.sh, args: [], timeout: 10s }',
      `kubeconfig: ${path.join(dir, 'kubeconfig')}`,
      `kubectl: { guard: true, command: ${kubectl}, access_check: false }`,
      'http: { port: 0 }',
      'gateway: { enabled: false }',
      '',
    ].join('\n'),
  );
  const env = { ...ENV, PATH: process.env.PATH ?? '' };
  const { config } = loadConfig({
    file: path.join(dir, 'config.yaml'),
    env,
    cwd: dir,
    packageRoot: REPO_ROOT,
  });
  const secrets = resolveSecrets(config, env);
  const executor = createRunExecutor({
    config,
    log: silentLogger(),
    redactor: new Redactor(secrets.values),
    secrets: secrets.values,
    audit: new AuditLog(),
    env: { ...process.env, ...env },
  });
  ws = path.join(config.workspaces_root, 'inc-git-1');
  await mkdir(ws, { recursive: true });
  await writeFile(path.join(ws, 'incident.json'), INCIDENT_TEXT());
  const read = await readWorkspace(ws, { maxBytes: 1 << 20 });
  if (read.kind !== 'ok') throw new Error(`fixture incident unreadable: ${JSON.stringify(read)}`);
  const outcome = await executor.run({
    workspace: read.workspace,
    runId: RUN_ID,
    attempt: 1,
    signal: new AbortController().signal,
    log: silentLogger(),
  });
  await executor.close?.();
  expect(outcome.status, outcome.reason).toBe('succeeded');
});

afterAll(async () => {
  await root?.cleanup();
});

async function replay(input: string, out: string): Promise<string> {
  const lines: string[] = [];
  const io: CliIO = {
    stdout: (t) => void lines.push(t),
    stderr: (t) => void lines.push(t),
    env: { ...ENV, PATH: process.env.PATH ?? '' },
    cwd: root.dir,
  };
  expect(await runCli(['--config', 'config.yaml', 'replay', input, '--out', out], io)).toBe(0);
  return lines.join('');
}

describe('replay under the process engine with a git skills source and the kubectl broker', () => {
  it("is the original apart from the workspace path and its own run id, which the agent's HOME names", async () => {
    const bundle = path.join(ws, '.triage', 'runs', RUN_ID);
    const original = await readFile(path.join(bundle, 'prompt.json'), 'utf8');
    expect(original).toContain(`triage-runner-home-${RUN_ID}`);
    for (const [input, out] of [
      [bundle, 'from-bundle'],
      [ws, 'from-workspace'],
    ] as const) {
      const printed = await replay(input, out);
      const runId = /run (\S+): succeeded/.exec(printed)?.[1];
      expect(runId, printed).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
      expect(runId).not.toBe(RUN_ID);
      expect(printed).toContain('triage: reuse saved output');
      expect(printed).toContain('prompt: identical apart from the workspace path and run id');
    }
  });
});
