// Issue 26: a process-engine run adopted after the daemon was SIGKILLed keeps its model gateway. The
// agent was given the old daemon's TCP address and a run token; the new daemon knows the token by the
// hash in the run's manifest and listens again on that address, so the agent's calls after the restart
// go through, with the real key, into the same model-calls.jsonl. When the address is taken, the run
// says so in its result and the audit. Real daemon processes, a real agent process, a real SIGKILL.
import { createServer, type Server } from 'node:http';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readModelCalls } from '../../../src/gateway/calls.js';
import type { CliDaemon } from '../../support/cli-daemon.js';
import { dropByRename, incidentJson, tempRoot, waitFor, waitForState } from '../../support/incidents.js';
import { messageRequests, startAnthropic, type AnthropicFake } from '../../support/providers/anthropic.js';
import { auditEvents, startProcessDaemon } from '../hardening/support.js';

const MODEL_AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'model-agent.mjs');
const REAL_KEY = 'sk-ant-api03-adopted-run-real-key-000000';

let dir: string;
let cleanup: () => Promise<void>;
let model: AnthropicFake;
const daemons: CliDaemon[] = [];
let squatter: Server | undefined;

beforeEach(async () => {
  ({ root: dir, cleanup } = await tempRoot('triage-gw-adopt-'));
  model = await startAnthropic();
});
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  await new Promise((r) => (squatter ? squatter.close(r) : r(undefined)));
  squatter = undefined;
  await model.close();
  await cleanup();
});

const start = async (root: string) => {
  const daemon = await startProcessDaemon(
    dir,
    root,
    {
      agent: {
        command: MODEL_AGENT,
        min_report_bytes: 10,
        report_sections: ['Summary'],
        stop_grace: '300ms',
      },
      providers: { anthropic_base_url: model.url },
    },
    { ANTHROPIC_API_KEY: REAL_KEY },
  );
  daemons.push(daemon);
  return daemon;
};

const agentCalls = async (workspace: string) =>
  (await readFile(path.join(workspace, 'model-calls.log'), 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean);

/** Records in the run's model-calls.jsonl (0 before the run folder exists). */
const recordedCalls = async (workspace: string): Promise<number> => {
  const runs = path.join(workspace, '.triage', 'runs');
  const [runId] = await readdir(runs).catch(() => [] as string[]);
  if (!runId) return 0;
  const text = await readFile(path.join(runs, runId, 'model-calls.jsonl'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).length;
};

/** Waits until the new daemon has adopted the run and taken its gateway back (or failed to). */
const resumedAt = (workspace: string, daemon: CliDaemon) =>
  waitFor(
    "the new daemon to take the run's gateway back",
    async () => (await auditEvents(workspace)).some((e) => e.type === 'gateway_resumed'),
    60_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}. ${daemon.tail()}`);
  });

/** Runs one incident to the agent's first model call, SIGKILLs the daemon, and returns the workspace. */
async function firstCallThenKill(root: string): Promise<{ workspace: string; runDir: string }> {
  const workspace = await dropByRename(root, 'inc', incidentJson({ incidentId: 'adopt-gw' }));
  await writeFile(path.join(workspace, 'hold'), '');
  const first = await start(root);
  // The agent has its answer, and the gateway has recorded the call (it appends the record once the
  // answer has streamed through, a moment after the agent has it: a kill in between loses that line).
  await waitFor(
    'the agent to make its first model call, recorded by the gateway',
    async () => (await agentCalls(workspace)).length >= 1 && (await recordedCalls(workspace)) >= 1,
    60_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}. ${first.tail()}`);
  });
  const exited = new Promise((r) => first.child.once('exit', r));
  first.child.kill('SIGKILL'); // the daemon only: the agent leads its own process group
  await exited;
  const runs = path.join(workspace, '.triage', 'runs');
  const [runId] = await readdir(runs);
  return { workspace, runDir: path.join(runs, runId!) };
}

describe('a process-engine run adopted after a daemon SIGKILL', () => {
  it('keeps its model gateway: the agent calls the same address with the same token, through to the provider with the real key, into the same model-calls.jsonl', async () => {
    const root = path.join(dir, 'incidents');
    const { workspace, runDir } = await firstCallThenKill(root);
    const manifest = JSON.parse(await readFile(path.join(runDir, 'manifest.json'), 'utf8')) as {
      gateway?: { tokenSha256: string; url?: string };
    };
    expect(manifest.gateway?.tokenSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.gateway?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await readFile(path.join(runDir, 'manifest.json'), 'utf8')).not.toContain('trg-');

    const second = await start(root);
    await resumedAt(workspace, second);
    await rm(path.join(workspace, 'hold'));
    const state = await waitForState(workspace, ['succeeded', 'failed'], 60_000).catch((err: Error) => {
      throw new Error(`${err.message}. ${second.tail()}`);
    });
    expect(state.state).toBe('succeeded');
    expect(await agentCalls(workspace)).toEqual(['1 200', '2 200']);
    // Both calls reached the provider with the real key, never the run token.
    const seen = messageRequests(model).map((r) => r.headers['x-api-key']);
    expect(seen).toEqual([REAL_KEY, REAL_KEY]);
    const calls = await readModelCalls(path.join(runDir, 'model-calls.jsonl'));
    expect(calls.map((c) => ({ path: c.path, status: c.status, input: c.tokens.input }))).toEqual([
      { path: '/v1/messages', status: 200, input: 1234 },
      { path: '/v1/messages', status: 200, input: 1234 },
    ]);
    const result = JSON.parse(await readFile(path.join(runDir, 'result.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(result).toMatchObject({ adopted: true, gateway: { calls: 2, source: 'gateway' } });
    expect(result.gateway).not.toHaveProperty('lost');
    const resumed = (await auditEvents(workspace)).filter((e) => e.type === 'gateway_resumed');
    expect(resumed).toMatchObject([{ address: manifest.gateway?.url, listening: true }]);
  }, 180_000);

  it('says so in result.json and the audit when the address is taken, and still ends the run by its outcome', async () => {
    const root = path.join(dir, 'incidents');
    const { workspace, runDir } = await firstCallThenKill(root);
    const manifest = JSON.parse(await readFile(path.join(runDir, 'manifest.json'), 'utf8')) as {
      gateway: { url: string };
    };
    // Another program takes the old gateway's port while no daemon runs.
    squatter = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((resolve) =>
      squatter!.listen(Number(new URL(manifest.gateway.url).port), '127.0.0.1', resolve),
    );

    const second = await start(root);
    await resumedAt(workspace, second);
    await rm(path.join(workspace, 'hold'));
    await waitForState(workspace, ['succeeded', 'failed'], 60_000).catch((err: Error) => {
      throw new Error(`${err.message}. ${second.tail()}`);
    });
    expect(await agentCalls(workspace)).toEqual(['1 200', '2 503']);
    expect(messageRequests(model)).toHaveLength(1);
    const result = JSON.parse(await readFile(path.join(runDir, 'result.json'), 'utf8')) as {
      gateway?: { calls: number; lost?: string };
    };
    expect(result.gateway?.calls).toBe(1);
    expect(result.gateway?.lost).toContain(`could not listen again on ${manifest.gateway.url}`);
    const resumed = (await auditEvents(workspace)).filter((e) => e.type === 'gateway_resumed');
    expect(resumed).toMatchObject([{ address: manifest.gateway.url, listening: false }]);
    expect(String(resumed[0]?.reason)).toContain('EADDRINUSE');
  }, 180_000);
});
