// Acceptance, second half: the real `triage-runner daemon --engine process --agent claude` runs the
// REAL Claude Code CLI against a fake Anthropic API. The model answers with a Bash tool call that writes
// the report, then a final answer; the daemon collects it like any run.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { requireCli } from '../support/agent-clis.js';
import {
  ANTHROPIC_USAGE,
  messageRequests,
  startAnthropic,
  type AnthropicFake,
} from '../support/providers/anthropic.js';
import { findRequestContaining } from '../support/providers/server.js';
import { REPO_ROOT, tempDir } from '../support/runs.js';

const cli = requireCli('claude');
const API_KEY = 'sk-ant-e2e-process-0123456789abcdef';

async function until<T>(
  what: string,
  timeoutMs: number,
  fn: () => Promise<T | undefined>,
  detail: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms. ${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!cli)('triage-runner daemon --engine process --agent claude (real Claude CLI)', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let provider: AnthropicFake;
  let daemon: ChildProcess | undefined;
  let logs = '';

  beforeAll(async () => {
    root = await tempDir('triage-e2e-process-');
    provider = await startAnthropic();
  });

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      const exited = new Promise((r) => daemon!.once('exit', r));
      daemon.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (daemon.exitCode === null) daemon.kill('SIGKILL');
    }
    await provider?.close();
    await root?.cleanup();
  });

  it('investigates a dropped incident with the real CLI: report written by its Bash tool, usage parsed', async () => {
    const incidents = path.join(root.dir, 'incidents');
    const ws = path.join(incidents, 'crashloop-api-1');
    await mkdir(ws, { recursive: true });
    const report = path.join(ws, 'output', 'investigation.md');
    provider.toolCommand = `printf '# Report\\n\\n## Summary\\nThe api pod crash-loops on a missing ConfigMap key.\\n\\n## Root Cause\\nKey DB_URL absent.\\n' > ${report}`;

    const configFile = path.join(root.dir, 'triage-runner.yaml');
    await writeFile(
      configFile,
      stringify({
        workspaces_root: incidents,
        agent: {
          command: cli,
          model: 'sonnet',
          timeout: '3m',
          min_report_bytes: 40,
          report_sections: ['Summary', 'Root Cause'],
        },
        providers: { anthropic_base_url: provider.url },
        skills: { sources: [], cache_dir: path.join(root.dir, 'skills'), disable_triage_preload: true },
        http: { port: 0 },
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
        'process',
        '--agent',
        'claude',
      ],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
          HOME: root.dir,
          ANTHROPIC_API_KEY: API_KEY,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    daemon.stdout?.on('data', (c: Buffer) => (logs += c.toString()));
    daemon.stderr?.on('data', (c: Buffer) => (logs += c.toString()));
    const tail = () => `daemon output (tail): ${logs.slice(-3000)}`;

    const incident = {
      incidentId: 'e2e-process-1',
      cluster: 'prod-1',
      namespace: 'shop',
      resource: { apiVersion: 'v1', kind: 'Pod', name: 'api-1', namespace: 'shop' },
      faultType: 'CrashLoop',
      severity: 'high',
      timestamp: '2026-11-22T01:00:00Z',
    };
    await writeFile(path.join(ws, 'incident.json.tmp'), JSON.stringify(incident, null, 2));
    await rename(path.join(ws, 'incident.json.tmp'), path.join(ws, 'incident.json'));

    const state = await until(
      'state.json final',
      150_000,
      async () => {
        const s = await readFile(path.join(ws, '.triage', 'state.json'), 'utf8').then(
          (t) => JSON.parse(t) as { state: string; runs: { id: string }[] },
          () => undefined,
        );
        return s && ['succeeded', 'failed', 'rejected'].includes(s.state) ? s : undefined;
      },
      tail,
    );
    const bundle = path.join(ws, '.triage', 'runs', state.runs.at(-1)!.id);
    const result = JSON.parse(await readFile(path.join(bundle, 'result.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(state.state, `${JSON.stringify(result)} ${tail()}`).toBe('succeeded');
    expect(result).toMatchObject({
      status: 'succeeded',
      exitCode: 0,
      agent: 'claude',
      engine: 'process',
      agentStatus: 'succeeded',
      report: { path: report, missingSections: [] },
    });
    // Two model calls (tool call, then the answer), each reporting ANTHROPIC_USAGE.
    expect((result.tokens as { input: number }).input).toBeGreaterThanOrEqual(ANTHROPIC_USAGE.input_tokens);

    // The preloaded context went out in the system prompt, byte-identical to prompt-sent.md's incident.
    const calls = messageRequests(provider);
    expect(
      findRequestContaining(calls, '"incidentId": "e2e-process-1"'),
      'incident in a /v1/messages body',
    ).toBeDefined();
    const invocation = await readFile(path.join(bundle, 'invocation.json'), 'utf8');
    expect(invocation).not.toContain(API_KEY);
    expect(await readFile(path.join(bundle, 'agent-stdout.log'), 'utf8')).not.toContain(API_KEY);
  });
});
