// Acceptance, second half: the real `triage-runner daemon --engine process --agent claude` runs the
// REAL Claude Code CLI against a fake Anthropic API. The model answers with a Bash tool call that writes
// the report, then a final answer; the daemon collects it like any run.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireCli } from '../support/agent-clis.js';
import { dropIncident, startCliDaemon, waitForFinalRun, type CliDaemon } from '../support/cli-daemon.js';
import {
  ANTHROPIC_USAGE,
  messageRequests,
  startAnthropic,
  type AnthropicFake,
} from '../support/providers/anthropic.js';
import { findRequestContaining } from '../support/providers/server.js';
import { freePort } from '../support/net.js';
import { tempDir } from '../support/runs.js';
import { hasRepeatedKey } from '../../src/log/logger.js';
import { readModelCalls } from '../../src/gateway/calls.js';
import type { ModelCallRecord } from '../../src/gateway/types.js';

const cli = requireCli('claude');
const API_KEY = 'sk-ant-e2e-process-0123456789abcdef';

describe.skipIf(!cli)('triage-runner daemon --engine process --agent claude (real Claude CLI)', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let provider: AnthropicFake;
  let daemon: CliDaemon | undefined;

  beforeAll(async () => {
    root = await tempDir('triage-e2e-process-');
    provider = await startAnthropic();
  });

  afterAll(async () => {
    await daemon?.stop();
    await provider?.close();
    await root?.cleanup();
  });

  it('investigates a dropped incident with the real CLI: report written by its Bash tool, usage parsed', async () => {
    const incidents = path.join(root.dir, 'incidents');
    const ws = path.join(incidents, 'crashloop-api-1');
    await mkdir(ws, { recursive: true });
    const report = path.join(ws, 'output', 'investigation.md');
    provider.toolCommand = `printf '# Report\\n\\n## Summary\\nThe api pod crash-loops on a missing ConfigMap key.\\n\\n## Root Cause\\nKey DB_URL absent.\\n' > ${report}`;

    const httpPort = await freePort();
    daemon = await startCliDaemon({
      dir: root.dir,
      config: {
        workspaces_root: incidents,
        agent: {
          command: cli,
          model: 'sonnet',
          timeout: '3m',
          min_report_bytes: 40,
          report_sections: ['Summary', 'Root Cause'],
        },
        providers: { anthropic_base_url: provider.url },
        http: { port: httpPort },
      },
      args: ['--engine', 'process', '--agent', 'claude'],
      env: {
        PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        HOME: root.dir,
        ANTHROPIC_API_KEY: API_KEY,
      },
    });
    const tail = daemon.tail;

    await dropIncident(ws, {
      incidentId: 'e2e-process-1',
      cluster: 'prod-1',
      namespace: 'shop',
      resource: { apiVersion: 'v1', kind: 'Pod', name: 'api-1', namespace: 'shop' },
      faultType: 'CrashLoop',
      severity: 'high',
      timestamp: '2026-11-22T01:00:00Z',
    });

    const { state, bundle, result = {} } = await waitForFinalRun(ws, 150_000, tail);
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

    // The seed's measures, from the gateway's record: the first investigation turn ends with the first
    // answer that asked for a tool (the stand-in's Bash call), whatever the CLI printed.
    const recorded = await readModelCalls(path.join(bundle, 'model-calls.jsonl'));
    const toolAnswers = recorded.filter((c) => c.toolUse);
    expect(toolAnswers.length, JSON.stringify(recorded)).toBeGreaterThanOrEqual(1);
    expect(recorded.filter((c) => !c.toolUse).length).toBeGreaterThanOrEqual(1);
    const started = Date.parse(String(result.startedAt));
    const endOf = (c: ModelCallRecord) => Date.parse(c.at) + Math.round(c.latencyMs) - started;
    const measures = result.measures as Record<string, number>;
    const first = recorded[0]!;
    const sum = (kind: keyof ModelCallRecord['tokens']) => recorded.reduce((n, c) => n + c.tokens[kind], 0);
    const input = sum('input');
    expect(measures).toEqual({
      firstModelCallMs: Math.round(Date.parse(first.at) - started),
      firstTokenMs: Date.parse(first.at) + Math.round(first.ttfbMs!) - started,
      firstToolCallMs: endOf(toolAnswers[0]!),
      investigationMs: Math.max(...recorded.map(endOf)),
      firstCallInputTokens: first.tokens.input,
      inputTokens: input,
      outputTokens: sum('output'),
      cacheReadTokens: sum('cacheRead'),
      cacheWriteTokens: sum('cacheWrite'),
      cacheReadShare: Math.round((sum('cacheRead') / input) * 1000) / 1000,
      modelCalls: recorded.length,
      model: first.model,
    });
    expect(measures.firstModelCallMs).toBeLessThanOrEqual(measures.firstTokenMs!);
    expect(measures.firstModelCallMs).toBeLessThanOrEqual(measures.firstToolCallMs!);
    expect(measures.firstToolCallMs).toBeLessThanOrEqual(measures.investigationMs!);
    expect(result.gateway).toMatchObject({ firstCallInputTokens: first.tokens.input, model: first.model });

    // The same figures in the status API, on the incident's page and on /metrics.
    const base = `http://127.0.0.1:${httpPort}`;
    const api = (await (await fetch(`${base}/v1/incidents/crashloop-api-1`)).json()) as {
      measures?: unknown;
    };
    expect(api.measures).toEqual(measures);
    const page = await (await fetch(`${base}/incidents/crashloop-api-1`)).text();
    expect(page).toContain('<h2>Model calls</h2>');
    expect(page).toMatch(new RegExp(`<dd id="first-call-input">[^<]*\\(${first.tokens.input}\\)</dd>`));
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain(
      `triage_runner_model_tokens_total{kind="input",model="${first.model}"} ${input}`,
    );
    expect(metrics).toContain(
      `triage_runner_first_call_input_tokens_sum{model="${first.model}"} ${first.tokens.input}`,
    );
    expect(metrics).toMatch(/triage_runner_time_to_first_token_seconds_count 1\n/);

    // The preloaded context went out in the system prompt, byte-identical to prompt-sent.md's incident.
    const calls = messageRequests(provider);
    expect(
      findRequestContaining(calls, '"incidentId": "e2e-process-1"'),
      'incident in a /v1/messages body',
    ).toBeDefined();
    const invocation = await readFile(path.join(bundle, 'invocation.json'), 'utf8');
    expect(invocation).not.toContain(API_KEY);
    expect(await readFile(path.join(bundle, 'agent-stdout.log'), 'utf8')).not.toContain(API_KEY);

    // Every line the daemon logged for the whole run is JSON naming each key once.
    const lines = daemon
      .logs()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      expect(() => JSON.parse(line) as unknown, line).not.toThrow();
      expect(hasRepeatedKey(line), line).toBe(false);
    }
  });

  it('records progress in state.json while the real CLI works (turns, tokens, last tool, elapsed time)', async () => {
    if (!daemon) throw new Error('the first test starts the daemon');
    const incidents = path.join(root.dir, 'incidents');
    const ws = path.join(incidents, 'slow-model-1');
    await mkdir(ws, { recursive: true });
    const report = path.join(ws, 'output', 'investigation.md');
    provider.toolCommand = `mkdir -p ${path.dirname(report)} && printf '# Report\\n\\n## Summary\\nslow.\\n\\n## Root Cause\\nslow model.\\n' > ${report}`;
    provider.delayMs = 3000;
    const seen: { turns: number; lastTool?: string; elapsedMs: number; tokens: { input: number } }[] = [];
    let done = false;
    const watcher = (async () => {
      while (!done) {
        const state = await readFile(path.join(ws, '.triage', 'state.json'), 'utf8')
          .then((t) => JSON.parse(t) as { state: string; progress?: (typeof seen)[number] })
          .catch(() => undefined);
        if (state?.state === 'running' && state.progress) seen.push(state.progress);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      await dropIncident(ws, {
        incidentId: 'e2e-progress-1',
        cluster: 'prod-1',
        namespace: 'shop',
        resource: { apiVersion: 'v1', kind: 'Pod', name: 'slow-1', namespace: 'shop' },
        faultType: 'CrashLoop',
        severity: 'high',
        timestamp: '2026-11-22T01:00:00Z',
      });
      const { state } = await waitForFinalRun(ws, 150_000, daemon.tail);
      expect(state.state, daemon.tail()).toBe('succeeded');
    } finally {
      done = true;
      await watcher;
      provider.delayMs = undefined;
    }
    expect(
      seen.some((p) => p.turns >= 1 && p.lastTool === 'Bash' && p.tokens.input > 0),
      JSON.stringify(seen),
    ).toBe(true);
    const elapsed = [...new Set(seen.map((p) => p.elapsedMs))];
    expect(elapsed.length, JSON.stringify(seen)).toBeGreaterThanOrEqual(2);
  });

  it('ends a run whose API key the model API refuses as auth_failed, not at agent.timeout', async () => {
    if (!daemon) throw new Error('the first test starts the daemon');
    const ws = path.join(root.dir, 'incidents', 'bad-key-1');
    provider.failWith = 401;
    try {
      await dropIncident(ws, {
        incidentId: 'e2e-401-1',
        cluster: 'prod-1',
        namespace: 'shop',
        resource: { apiVersion: 'v1', kind: 'Pod', name: 'k-1', namespace: 'shop' },
        faultType: 'CrashLoop',
        severity: 'high',
        timestamp: '2026-11-22T01:00:00Z',
      });
      const { state, result = {} } = await waitForFinalRun(ws, 60_000, daemon.tail);
      expect(state.state).toBe('failed');
      expect(result).toMatchObject({ status: 'failed', agentStatus: 'auth_failed' });
      expect(String(result.error)).toMatch(/401|authentication/i);
    } finally {
      provider.failWith = undefined;
    }
  });
});
