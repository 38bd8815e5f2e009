// Contract: each real CLI, configured by its adapter, offers its model only the tools on the adapter's
// allowlist (what an investigation needs, plus `agent.extra_tools`, less what the persona refuses),
// read from the tool definitions of the first model request the stand-in receives. A CLI upgrade that
// starts offering another tool (each definition is sent with every model call) fails here, and so does
// one that stops offering what an investigation needs.
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentAdapter, InvocationInput } from '../../src/agents/types.js';
import { toolPermissions } from '../../src/kubectl/policy/permissions.js';
import { loadToolPolicy } from '../../src/kubectl/policy/policy.js';
import {
  AGENT_TOOLS,
  INVESTIGATION_TOOLS,
  type AgentTool,
  type ExtraAgentTool,
  type ToolPermissions,
} from '../../src/shared/types.js';
import { fixtureSkillMounts, makeAgentPaths, requireCli, runInvocation } from '../support/agent-clis.js';
import { CLI_STAND_INS, type CliStandIn } from '../support/cli-stand-ins.js';
import type { RecordedRequest } from '../support/providers/server.js';
import { REPO_ROOT } from '../support/runs.js';

const RUN_TIMEOUT_MS = 90_000;
const roots: string[] = [];
afterAll(async () => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

interface Case extends CliStandIn {
  /** The model requests of the conversation, first one first. */
  conversation: (requests: RecordedRequest[]) => RecordedRequest[];
  /** The tool definitions of a request body. */
  tools: (body: Record<string, unknown>) => unknown[];
}

const list = (v: unknown): Record<string, unknown>[] =>
  Array.isArray(v) ? (v as Record<string, unknown>[]) : [];

const CASES: Case[] = [
  {
    ...CLI_STAND_INS.claude,
    conversation: (rs) => rs.filter((r) => (JSON.parse(r.body) as { stream?: boolean }).stream),
    tools: (b) => list(b.tools),
  },
  { ...CLI_STAND_INS.codex, conversation: (rs) => rs, tools: (b) => list(b.tools) },
  {
    ...CLI_STAND_INS.gemini,
    conversation: (rs) => rs.filter((r) => r.url.includes(':streamGenerateContent')),
    tools: (b) => list(b.tools).flatMap((t) => list(t.functionDeclarations)),
  },
];

/** The tool names of the CLI's first model request, run with the fixture skills laid out. */
async function firstRequestTools(
  c: Case,
  cli: string,
  extra: Pick<InvocationInput, 'permissions' | 'extraTools'>,
): Promise<string[]> {
  const provider = await c.start();
  try {
    const paths = await makeAgentPaths();
    roots.push(paths.root);
    const { mounts } = await fixtureSkillMounts(c.adapter, paths);
    const invocation = c.adapter.buildInvocation({
      prompt: { system: 'You investigate incidents.', user: 'The pod crash-loops. What do you check first?' },
      ...(c.model ? { model: c.model } : {}),
      maxTurns: 3,
      extraArgs: [],
      paths,
      providers: c.providers(provider.url),
      secrets: c.secrets,
      ...extra,
    });
    const output = await runInvocation(invocation, paths, dirname(cli), RUN_TIMEOUT_MS, mounts);
    expect(c.adapter.parseOutput(output), output.stderr).toMatchObject({ status: 'succeeded' });
    const first = c.conversation(c.requests(provider))[0];
    expect(first, `a model request from ${c.cli}`).toBeDefined();
    const body = JSON.parse(first?.body ?? '{}') as Record<string, unknown>;
    return c.tools(body).map((t) => String((t as { name?: unknown }).name ?? (t as { type?: unknown }).type));
  } finally {
    await provider.close();
  }
}

/** The adapter's allowlisted names for one kind alone (with no kind at all: the CLI's fixed ones). */
function namesOf(adapter: AgentAdapter, permissions: ToolPermissions, kind?: AgentTool): string[] {
  const only = (keep?: AgentTool) =>
    adapter.toolNames?.({
      permissions: { ...permissions, deniedTools: AGENT_TOOLS.filter((t) => t !== keep) },
    }) ?? [];
  const fixed = only();
  return kind === undefined ? fixed : only(kind).filter((name) => !fixed.includes(name));
}

describe.each(CASES)('$cli CLI tool allowlist', (c) => {
  const cli = requireCli(c.cli);

  it.skipIf(!cli)(
    "offers only the allowlisted tools under the shipped persona's policy, each kind an investigation needs among them",
    async () => {
      const policy = await loadToolPolicy(join(REPO_ROOT, 'configs/personas'), 'kubernetes-sre');
      const input = { permissions: toolPermissions(policy) };
      const allowed = c.adapter.toolNames?.(input) ?? [];
      const offered = await firstRequestTools(c, cli ?? '', input);
      expect(offered.filter((name) => !allowed.includes(name))).toEqual([]);
      // Every kind an investigation needs for which this CLI has a tool of its own is offered.
      for (const kind of INVESTIGATION_TOOLS) {
        const names = namesOf(c.adapter, input.permissions, kind);
        if (names.length > 0)
          expect(
            offered.filter((n) => names.includes(n)),
            kind,
          ).not.toEqual([]);
      }
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it.skipIf(!cli)(
    'offers the web and sub-agent tools only when agent.extra_tools turns them on',
    async () => {
      const extraTools: ExtraAgentTool[] = ['web', 'subagent'];
      const plain = c.adapter.toolNames?.({}) ?? [];
      const allowed = c.adapter.toolNames?.({ extraTools }) ?? [];
      const added = allowed.filter((name) => !plain.includes(name));
      expect(added.length).toBeGreaterThan(0);
      const offered = await firstRequestTools(c, cli ?? '', { extraTools });
      expect(offered.filter((name) => !allowed.includes(name))).toEqual([]);
      expect(offered.filter((name) => added.includes(name)).length).toBeGreaterThan(0);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
