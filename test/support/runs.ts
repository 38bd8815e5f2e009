// Fixtures for run-pipeline and engine tests: a loaded config rooted in a temp folder, a real
// workspace read from disk, an empty skills cache, and a small adapter that runs the fake agent.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentAdapter, AgentOutcome, AgentRunOutput } from '../../src/agents/types.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { SkillsSnapshot } from '../../src/context/types.js';
import type { SkillsCacheLike } from '../../src/run/pipeline.js';
import { readWorkspace, type Workspace } from '../../src/workspace/incident.js';
import type { RunResult } from '../../src/workspace/run-record.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A config as the daemon loads it (paths absolute), with the repo's prompts/personas and no skills sources. */
export function testConfig(root: string, flags: Record<string, unknown> = {}): Config {
  const base: Record<string, unknown> = {
    workspaces_root: path.join(root, 'incidents'),
    skills: { sources: [], cache_dir: path.join(root, 'skills-cache'), disable_triage_preload: true },
    system_prompt_file: path.join(REPO_ROOT, 'configs/triage-system-prompt.md'),
    user_prompt_file: path.join(REPO_ROOT, 'configs/user-prompt.md'),
    personas_dir: path.join(REPO_ROOT, 'configs/personas'),
    briefs_dir: path.join(REPO_ROOT, 'configs/briefs'),
    boot_file: path.join(REPO_ROOT, 'configs/boot.yml'),
    agent: { min_report_bytes: 50, report_sections: ['Summary', 'Root Cause'] },
    // Tests about cluster access turn it on with a stand-in kubectl.
    kubectl: { access_check: false },
  };
  const merged = deepMerge(base, flags);
  return loadConfig({ env: {}, flags: merged, cwd: root, packageRoot: REPO_ROOT }).config;
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] =
      v &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      prev &&
      typeof prev === 'object' &&
      !Array.isArray(prev)
        ? deepMerge(prev as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

let seq = 0;

/** Writes incident.json under `<root>/incidents/<folder>` and reads it back the way intake does. */
export async function makeWorkspace(root: string, fields: Record<string, unknown> = {}): Promise<Workspace> {
  seq++;
  const folder = `incident-${process.pid}-${seq}`;
  const dir = path.join(root, 'incidents', folder);
  await mkdir(dir, { recursive: true });
  const incident = {
    incidentId: `inc-${process.pid}-${seq}`,
    cluster: 'prod-1',
    namespace: 'shop',
    resource: { apiVersion: 'v1', kind: 'Pod', name: `web-${seq}`, namespace: 'shop' },
    faultType: 'CrashLoop',
    severity: 'high',
    timestamp: '2026-11-22T01:00:00Z',
    ...fields,
  };
  await writeFile(path.join(dir, 'incident.json'), JSON.stringify(incident, null, 2));
  const read = await readWorkspace(dir, { maxBytes: 1024 * 1024 });
  if (read.kind !== 'ok') throw new Error(`test workspace ${dir} did not read back: ${JSON.stringify(read)}`);
  return read.workspace;
}

/** A result.json as a succeeded run writes it (the fixed fields), with `over` on top. */
export function sampleRunResult(over: Partial<RunResult> = {}): RunResult {
  return {
    status: 'succeeded',
    exitCode: 0,
    agent: 'claude',
    engine: 'process',
    startedAt: '2026-03-01T10:15:00.000Z',
    finishedAt: '2026-03-01T10:19:12.000Z',
    durationMs: 252_000,
    tokens: { input: 100, output: 10 },
    report: { path: '/workspace/output/investigation.md', bytes: 0, missingSections: [] },
    ...over,
  };
}

/** A skills cache with no sources: every run gets an empty snapshot. */
export function emptySkills(): SkillsCacheLike & { released: number } {
  const cache = {
    released: 0,
    acquire: async (): Promise<SkillsSnapshot> => ({
      sources: [],
      unavailable: [],
      release: () => {
        cache.released++;
      },
    }),
    readiness: async () => ({ ready: true, sources: [] }),
  };
  return cache;
}

/** Reads the fake agent's JSON result line (claude's shape) from stdout. */
export function parseFakeAgent(output: AgentRunOutput): AgentOutcome {
  const line = output.stdout.trim().split('\n').at(-1) ?? '';
  let parsed: {
    is_error?: boolean;
    num_turns?: number;
    usage?: { input_tokens?: number; output_tokens?: number };
    total_cost_usd?: number;
  } = {};
  try {
    parsed = JSON.parse(line) as typeof parsed;
  } catch {
    // not JSON: counted as a failure below
  }
  const ok = output.exitCode === 0 && parsed.is_error === false;
  return {
    status: output.timedOut ? 'timed_out' : ok ? 'succeeded' : 'failed',
    exitCode: output.exitCode,
    ...(parsed.num_turns !== undefined ? { turns: parsed.num_turns } : {}),
    tokens: { input: parsed.usage?.input_tokens ?? 0, output: parsed.usage?.output_tokens ?? 0 },
    ...(parsed.total_cost_usd !== undefined ? { costUsd: parsed.total_cost_usd } : {}),
    ...(ok ? {} : { error: `fake agent exited ${String(output.exitCode)}` }),
  };
}

/**
 * An adapter running `command` (the fake agent) with the user prompt on stdin and the system prompt as a
 * file; `env` is passed through (FAKE_AGENT_* knobs), secrets as secretEnv.
 */
export function fakeAdapter(command: string, env: Record<string, string> = {}): AgentAdapter {
  return {
    id: 'claude',
    placement: 'system',
    modelProvider: () => 'anthropic',
    skillsDirs: ['.claude/skills'],
    listsSkills: true,
    writableHomeDirs: ['.claude'],
    buildInvocation: (input) => ({
      command,
      args: ['-p', '--append-system-prompt-file', path.posix.join(input.paths.filesDir, 'system-prompt.md')],
      env: { ...env },
      secretEnv: Object.fromEntries(Object.entries(input.secrets).filter(([k]) => k === 'ANTHROPIC_API_KEY')),
      stdin: input.prompt.user,
      files: [{ path: 'system-prompt.md', content: input.prompt.system }],
    }),
    parseOutput: parseFakeAgent,
  };
}
