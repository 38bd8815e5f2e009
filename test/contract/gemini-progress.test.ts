// Contract: the gemini adapter's progress reader, fed the real Gemini CLI's stdout as it arrives
// (stream-json), reports the turn and the tool of a scripted model's shell call while the CLI is still
// waiting for the model's next answer, the tokens with the result, and a 401 as an auth failure at once.
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { gemini } from '../../src/agents/gemini.js';
import type { ProgressUpdate } from '../../src/agents/shared/progress.js';
import type { AgentRunOutput } from '../../src/agents/types.js';
import { makeAgentPaths, requireCli, runInvocation } from '../support/agent-clis.js';
import { GEMINI_ANSWER, GEMINI_USAGE, startScriptedGemini } from '../support/providers/gemini.js';
import type { FakeProvider } from '../support/providers/server.js';

const cli = requireCli('gemini');
/** How long the scripted model takes to answer each call. */
const MODEL_DELAY_MS = 2000;
const roots: string[] = [];
let provider: FakeProvider | undefined;

/** Runs the real CLI against `p`, reading its stdout with the adapter's progress reader as it arrives. */
async function runWithProgress(
  p: FakeProvider,
): Promise<{ output: AgentRunOutput; seen: { atMs: number; update: ProgressUpdate }[]; ms: number }> {
  const paths = await makeAgentPaths();
  roots.push(paths.root);
  const invocation = gemini.buildInvocation({
    prompt: { system: 'Investigate.', user: 'Look at the pod.' },
    maxTurns: 5,
    extraArgs: [],
    paths,
    providers: { geminiBaseUrl: p.url },
    secrets: { GEMINI_API_KEY: 'gemini-contract-test-key' },
  });
  const reader = gemini.progress?.();
  if (!reader) throw new Error('the gemini adapter has no progress reader');
  const seen: { atMs: number; update: ProgressUpdate }[] = [];
  const start = Date.now();
  const output = await runInvocation(invocation, paths, dirname(cli ?? ''), 90_000, [], (chunk) => {
    const update = reader.push(chunk);
    if (update) seen.push({ atMs: Date.now() - start, update });
  });
  return { output, seen, ms: Date.now() - start };
}

describe.skipIf(!cli)('gemini CLI progress from its stream-json events', () => {
  afterEach(async () => {
    await provider?.close();
    provider = undefined;
  });
  afterAll(async () => {
    await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
  });

  it('reports the tool turn while the model still thinks, then the answer turn and the tokens', async () => {
    provider = await startScriptedGemini(['kubectl version --client || true']);
    provider.delayMs = MODEL_DELAY_MS;
    const { output, seen } = await runWithProgress(provider);
    expect(gemini.parseOutput(output), output.stderr).toMatchObject({
      status: 'succeeded',
      turns: 2,
      finalMessage: GEMINI_ANSWER,
    });

    const toolTurn = seen.find((s) => s.update.turns === 1 && s.update.lastTool === 'run_shell_command');
    const answerTurn = seen.find((s) => s.update.turns === 2);
    const withTokens = seen.find((s) => s.update.tokens !== undefined);
    expect(toolTurn, JSON.stringify(seen)).toBeDefined();
    expect(answerTurn, JSON.stringify(seen)).toBeDefined();
    // The tool turn was read before the second (delayed) model answer existed: it streamed.
    expect((answerTurn?.atMs ?? 0) - (toolTurn?.atMs ?? 0)).toBeGreaterThanOrEqual(MODEL_DELAY_MS - 500);
    // Two model calls, each reporting GEMINI_USAGE.
    expect(withTokens?.update.tokens).toEqual({
      input: 2 * GEMINI_USAGE.promptTokenCount,
      output: 2 * GEMINI_USAGE.candidatesTokenCount,
    });
  });

  it('reports a 401 from the model API as an auth failure and the CLI ends without retrying it', async () => {
    provider = await startScriptedGemini([]);
    provider.failWith = 401;
    const { output, seen } = await runWithProgress(provider);
    const failure = seen.find((s) => s.update.authFailure !== undefined);
    expect(failure?.update.authFailure, JSON.stringify(seen)).toMatch(/401.*GEMINI_API_KEY/);
    expect(gemini.parseOutput(output)).toMatchObject({ status: 'auth_failed', exitCode: 145 });
    // The CLI does not retry a 401: one model call, and it ends by itself (how fast is for bench/, not a test).
    expect(provider.requests.filter((r) => r.url.includes('GenerateContent'))).toHaveLength(1);
  });
});
