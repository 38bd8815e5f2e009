// Contract: the real Claude, Codex and Gemini CLIs, configured by their adapters with the model
// gateway's provider URLs and a run token as their key, go through the gateway to local provider
// stand-ins: each call reaches the stand-in with the real key, never the token; model-calls.jsonl
// lists the stand-in's calls one for one (so every endpoint the CLI calls is one its token opens); the
// gateway's token counts equal what the CLI itself reports.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claude } from '../../src/agents/claude.js';
import { codex } from '../../src/agents/codex.js';
import { gemini } from '../../src/agents/gemini.js';
import type { AgentAdapter } from '../../src/agents/types.js';
import { readModelCalls } from '../../src/gateway/calls.js';
import { createGatewayHost, type GatewayHost } from '../../src/gateway/host.js';
import { openRunGateway } from '../../src/gateway/run.js';
import type { ProviderId } from '../../src/gateway/types.js';
import { makeAgentPaths, requireCli, runInvocation, type CliName } from '../support/agent-clis.js';
import { startAnthropic } from '../support/providers/anthropic.js';
import { startGemini } from '../support/providers/gemini.js';
import { startOpenAI } from '../support/providers/openai.js';
import type { FakeProvider } from '../support/providers/server.js';
import { gatewayConfig } from '../support/gateway/config.js';

const RUN_TIMEOUT_MS = 90_000;
const KEYS = {
  ANTHROPIC_API_KEY: 'sk-ant-contract-real-key',
  CODEX_API_KEY: 'sk-codex-contract-real-key',
  GEMINI_API_KEY: 'AIza-gemini-contract-real-key',
};

interface Case {
  cli: CliName;
  adapter: AgentAdapter;
  /** The provider the CLI calls: the only one its run token opens. */
  provider: ProviderId;
  model: string;
  start: () => Promise<FakeProvider>;
  /** The header the stand-in finds the key in, and how the real key looks there. */
  header: string;
  expected: (key: string) => string;
  /** The path of the provider base URL the gateway forwards to (records hold the path below it). */
  base?: string;
}

const CASES: Case[] = [
  {
    cli: 'claude',
    adapter: claude,
    provider: 'anthropic',
    model: 'sonnet',
    start: startAnthropic,
    header: 'x-api-key',
    expected: (k) => k,
  },
  {
    cli: 'codex',
    adapter: codex,
    provider: 'openai',
    model: 'gpt-5-codex',
    start: startOpenAI,
    header: 'authorization',
    expected: (k) => `Bearer ${k}`,
    base: '/v1',
  },
  {
    cli: 'gemini',
    adapter: gemini,
    provider: 'gemini',
    model: 'gemini-2.5-pro',
    start: startGemini,
    header: 'x-goog-api-key',
    expected: (k) => k,
  },
];

const KEY_OF: Record<CliName, string> = {
  claude: KEYS.ANTHROPIC_API_KEY,
  codex: KEYS.CODEX_API_KEY,
  gemini: KEYS.GEMINI_API_KEY,
};

describe.each(CASES)('$cli CLI through the model gateway', (c) => {
  const cli = requireCli(c.cli);
  let provider: FakeProvider;
  let host: GatewayHost;
  const roots: string[] = [];

  beforeAll(async () => {
    provider = await c.start();
    host = createGatewayHost({
      config: gatewayConfig({
        providers: {
          anthropic_base_url: provider.url,
          openai_base_url: `${provider.url}/v1`,
          gemini_base_url: provider.url,
        },
      }),
      secrets: KEYS,
      env: {},
    });
  });

  afterAll(async () => {
    await host?.close();
    await provider?.close();
    await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
  });

  it.skipIf(!cli)(
    'runs with the run token as its key; the stand-in sees only the real key; every call is recorded',
    async () => {
      const paths = await makeAgentPaths();
      roots.push(paths.root);
      const bundleDir = await mkdtemp(join(tmpdir(), 'triage-gateway-contract-'));
      roots.push(bundleDir);
      const run = openRunGateway({
        gateway: host.gateway,
        runId: `contract-${c.cli}`,
        provider: c.provider,
        bundleDir,
        route: { kind: 'tcp', url: await host.tcpUrl() },
        redact: (t) => t,
      });
      await run.start();
      const invocation = c.adapter.buildInvocation({
        prompt: {
          system: 'You investigate incidents.',
          user: 'The pod crash-loops. What do you check first?',
        },
        model: c.model,
        maxTurns: 3,
        extraArgs: [],
        paths,
        providers: run.providers,
        secrets: run.secrets(KEYS),
      });
      const handed = JSON.stringify({
        env: invocation.env,
        secretEnv: invocation.secretEnv,
        files: invocation.files,
      });
      for (const key of Object.values(KEYS)) expect(handed).not.toContain(key);
      expect(handed).toContain(run.session.token);

      const before = provider.requests.length;
      const output = await runInvocation(invocation, paths, dirname(cli ?? ''), RUN_TIMEOUT_MS);
      await run.stop();
      const outcome = c.adapter.parseOutput(output);
      expect(outcome, output.stderr).toMatchObject({ status: 'succeeded', exitCode: 0 });

      const seen = provider.requests.slice(before);
      expect(seen.length).toBeGreaterThan(0);
      for (const r of seen) {
        expect(r.headers[c.header]).toBe(c.expected(KEY_OF[c.cli]));
        expect(JSON.stringify(r.headers) + r.url).not.toContain(run.session.token);
      }
      const calls = await readModelCalls(join(bundleDir, 'model-calls.jsonl'));
      expect(calls.map((x) => `${x.method} ${c.base ?? ''}${x.path}`)).toEqual(
        seen.map((r) => `${r.method} ${r.url.split('?')[0] ?? ''}`),
      );
      const summary = run.summary();
      expect({ input: summary.tokens.input, output: summary.tokens.output }).toEqual(outcome.tokens);
      // Every endpoint the CLI called is one its run token opens: the gateway refused none.
      expect(summary.refused).toBe(0);
      // A dead token is refused.
      const after = await fetch(`${run.providers.anthropicBaseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': run.session.token },
        body: '{}',
      });
      expect(after.status).toBe(401);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
