// End to end with the real Gemini CLI: `triage-runner daemon --engine process --agent gemini` against
// the local Gemini API stand-in. A scripted model first asks its shell tool to write the report, then
// answers; state.json shows the run's progress meanwhile, and a refused key ends the run as auth_failed.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireCli } from '../support/agent-clis.js';
import { dropIncident, startCliDaemon, waitForFinalRun, type CliDaemon } from '../support/cli-daemon.js';
import { watchProgress } from '../support/progress-watch.js';
import { GEMINI_ANSWER, startScriptedGemini } from '../support/providers/gemini.js';
import type { FakeProvider } from '../support/providers/server.js';
import { tempDir } from '../support/runs.js';

const cli = requireCli('gemini');
const API_KEY = 'gemini-e2e-process-0123456789abcdef';

const incident = (id: string, name: string) => ({
  incidentId: id,
  cluster: 'prod-1',
  namespace: 'shop',
  resource: { apiVersion: 'v1', kind: 'Pod', name, namespace: 'shop' },
  faultType: 'CrashLoop',
  severity: 'high',
  timestamp: '2026-11-22T01:00:00Z',
});

describe.skipIf(!cli)('triage-runner daemon --engine process --agent gemini (real Gemini CLI)', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let provider: FakeProvider;
  let daemon: CliDaemon;
  const incidents = () => path.join(root.dir, 'incidents');
  const report = path.join('output', 'investigation.md');

  beforeAll(async () => {
    root = await tempDir('triage-e2e-gemini-');
    // The agent's cwd is its workspace: the shell tool writes the report relative to it.
    provider = await startScriptedGemini([
      `mkdir -p output && printf '# Report\\n\\n## Summary\\nslow.\\n\\n## Root Cause\\nslow model.\\n' > ${report}`,
    ]);
    daemon = await startCliDaemon({
      dir: root.dir,
      config: {
        workspaces_root: incidents(),
        agent: { command: cli, timeout: '3m', min_report_bytes: 20, report_sections: ['Summary'] },
        providers: { gemini_base_url: provider.url },
      },
      args: ['--engine', 'process', '--agent', 'gemini'],
      env: {
        PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        HOME: root.dir,
        GEMINI_API_KEY: API_KEY,
      },
    });
  }, 90_000);

  afterAll(async () => {
    await daemon?.stop();
    await provider?.close();
    await root?.cleanup();
  });

  it('records progress in state.json while the real CLI works and keeps its answer', async () => {
    const ws = path.join(incidents(), 'slow-model-1');
    await mkdir(ws, { recursive: true });
    provider.delayMs = 3000;
    const watch = watchProgress(ws);
    let seen;
    try {
      await dropIncident(ws, incident('e2e-gemini-progress-1', 'slow-1'));
      const { state, bundle, result = {} } = await waitForFinalRun(ws, 150_000, daemon.tail);
      expect(state.state, `${JSON.stringify(result)} ${daemon.tail()}`).toBe('succeeded');
      // The event stream is kept in the run's log, without the key.
      const stdoutLog = await readFile(path.join(bundle, 'agent-stdout.log'), 'utf8');
      expect(stdoutLog).toContain('"type":"tool_use"');
      expect(stdoutLog).not.toContain(API_KEY);
      expect(result).toMatchObject({ agent: 'gemini', agentStatus: 'succeeded', turns: 2 });
      expect(JSON.stringify(result)).toContain(GEMINI_ANSWER);
    } finally {
      seen = await watch.stop();
      provider.delayMs = undefined;
    }
    // The shell tool's turn is reported while the (slow) model works on its answer.
    expect(
      seen.some((p) => p.turns === 1 && p.lastTool === 'run_shell_command'),
      JSON.stringify(seen),
    ).toBe(true);
    expect(new Set(seen.map((p) => p.elapsedMs)).size, JSON.stringify(seen)).toBeGreaterThanOrEqual(2);
  });

  it('ends a run whose API key the model API refuses as auth_failed, without retrying it', async () => {
    const ws = path.join(incidents(), 'bad-key-1');
    provider.failWith = 401;
    const before = provider.requests.length;
    try {
      await dropIncident(ws, incident('e2e-gemini-401-1', 'k-1'));
      const { state, result = {} } = await waitForFinalRun(ws, 60_000, daemon.tail);
      expect(state.state).toBe('failed');
      expect(result).toMatchObject({ status: 'failed', agentStatus: 'auth_failed' });
      // Ended by the CLI on the 401, not by agent.timeout: one model call was made.
      expect(provider.requests.slice(before).filter((r) => r.url.includes('GenerateContent'))).toHaveLength(
        1,
      );
      expect(String(result.error)).toMatch(/401/);
    } finally {
      provider.failWith = undefined;
    }
  });
});
