// The path-checking stand-in agent (test/images/agent-test/path-check) run through the real run
// pipeline: what it prints, the run it is part of, and, for the kubernetes engine whose Job never runs
// here, a folder that rebuilds the Job's file system from its volume mounts so the same script can check it.
import { execFile } from 'node:child_process';
import { cp, lstat, mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { AuditLog } from '../../src/audit/log.js';
import { runDirOf } from '../../src/workspace/layout.js';
import { readRunResult, type RunResult } from '../../src/workspace/run-record.js';
import { type AgentName, type Config, DEFAULT_REPORT_SECTIONS } from '../../src/config/schema.js';
import { createRunExecutor } from '../../src/run/pipeline.js';
import type { RunOutcome, RunOverrides } from '../../src/run/types.js';
import type { Engine } from '../../src/engines/types.js';
import { readWorkspace, type Workspace } from '../../src/workspace/incident.js';
import { silentLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { REPO_ROOT, testConfig } from './runs.js';

/** The stand-in on the host; the test image has it at /usr/local/bin/path-check. */
export const PATH_CHECK = path.join(REPO_ROOT, 'test/images/agent-test/path-check');
/** A skills source with the k8s4agents contracts (triage script, products, Stop-hook validator). */
export const SKILL_SOURCE = path.join(REPO_ROOT, 'test/fixtures/skill-source');
export const FIXTURE_SKILLS = ['k8s-troubleshooter', 'log-search'];
/**
 * The fewest paths a run's prompt names (workspace, report, triage output and products, skills,
 * persona, briefs): each library folder is said once and its files by name under it, so it is the
 * folders that path-check finds and tests, and the files are in the folders mounted whole.
 */
export const PROMPT_PATHS_AT_LEAST = 20;

export interface PathCheck {
  checked: number;
  missing: string[];
  skipped: string[];
  /** `~/<dir>` -> the folders the stand-in found in it. */
  skills: Record<string, string[]>;
}

/** Reads the stand-in's output; throws when its summary line is absent (it did not run). */
export function parsePathCheck(stdout: string): PathCheck {
  const summary = /^path-check: checked=(\d+) missing=(\d+) skipped=(\d+)$/m.exec(stdout);
  if (!summary) throw new Error(`no path-check summary in the agent's output:\n${stdout}`);
  const lines = (prefix: string) =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith(prefix))
      .map((l) => l.slice(prefix.length));
  const skills: Record<string, string[]> = {};
  for (const l of lines('skills: ')) {
    const [dir = '', names = ''] = l.split(': ');
    skills[dir] = names.trim().split(/\s+/).filter(Boolean);
  }
  return { checked: Number(summary[1]), missing: lines('missing: '), skipped: lines('skipped: '), skills };
}

/**
 * A workspace as a producer writes it (incident.json and incident_cluster_permissions.json), read back
 * the way intake does.
 */
export async function fidelityWorkspace(root: string, name: string): Promise<Workspace> {
  const dir = path.join(root, 'incidents', name);
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'incident.json'),
    JSON.stringify(
      {
        incidentId: `fidelity-${name}`,
        cluster: 'prod-1',
        namespace: 'shop',
        resource: { apiVersion: 'v1', kind: 'Pod', name: 'api-7d9f-x2k9q', namespace: 'shop' },
        faultType: 'CrashLoop',
        severity: 'high',
        timestamp: '2026-11-22T01:00:00Z',
      },
      null,
      2,
    ),
  );
  await writeFile(
    path.join(dir, 'incident_cluster_permissions.json'),
    JSON.stringify({ cluster_name: 'prod-1', can_get_pods: true, can_get_logs: true, warnings: [] }),
  );
  const read = await readWorkspace(dir, { maxBytes: 1024 * 1024 });
  if (read.kind !== 'ok') throw new Error(`workspace ${dir} did not read back: ${JSON.stringify(read)}`);
  return read.workspace;
}

/** A config running the stand-in with the fixture skills source, the triage script and the default report template. */
export function fidelityConfig(root: string, flags: Record<string, unknown> = {}): Config {
  return testConfig(root, {
    ...flags,
    agent: {
      report_sections: [...DEFAULT_REPORT_SECTIONS],
      min_report_bytes: 50,
      ...(flags.agent as Record<string, unknown> | undefined),
    },
    skills: {
      sources: [{ name: 'k8s4agents', path: path.join(root, 'skill-source'), scope: 'project' }],
      disable_triage_preload: false,
    },
  });
}

/** Copies the fixture skills source under `root` (the kubernetes engine shares only paths on its volume). */
export async function copySkillSource(root: string): Promise<void> {
  await cp(SKILL_SOURCE, path.join(root, 'skill-source'), { recursive: true });
}

export interface PipelineRun {
  outcome: RunOutcome;
  bundle: string;
  stdout: string;
  result: RunResult;
}

export interface FidelityRun extends PipelineRun {
  prompt: { system: string; user: string };
}

export interface PipelineInput {
  config: Config;
  engine: Engine;
  agent: AgentName;
  workspace: Workspace;
  runId: string;
  attempt?: number;
  overrides?: RunOverrides;
  signal?: AbortSignal;
  /** API keys handed to the agent (a real CLI against a local model server). */
  secrets?: Record<string, string>;
}

/** Runs one incident through the real pipeline with `agent`'s adapter; the run record and what the agent printed. */
export async function runPipeline(input: PipelineInput): Promise<PipelineRun> {
  const executor = createRunExecutor({
    config: input.config,
    log: silentLogger(),
    redactor: new Redactor(),
    secrets: input.secrets ?? {},
    audit: new AuditLog(),
    env: { PATH: process.env.PATH },
    engine: input.engine,
  });
  try {
    const outcome = await executor.run({
      workspace: input.workspace,
      runId: input.runId,
      attempt: input.attempt ?? 1,
      signal: input.signal ?? new AbortController().signal,
      log: silentLogger(),
      overrides: { agent: input.agent, ...input.overrides },
    });
    const bundle = runDirOf(input.workspace.dir, input.runId);
    const stdout = await readFile(path.join(bundle, 'agent-stdout.log'), 'utf8').catch(() => '');
    const result = await readRunResult(bundle);
    if (!result.ok) throw new Error(result.problem);
    return { outcome, bundle, stdout, result: result.value };
  } finally {
    await executor.close?.();
  }
}

/** runPipeline, plus the prompt the run sent (agent.command is e.g. the path-checking stand-in). */
export async function runFidelity(input: PipelineInput): Promise<FidelityRun> {
  const run = await runPipeline(input);
  const prompt = JSON.parse(
    await readFile(path.join(run.bundle, 'prompt.json'), 'utf8'),
  ) as FidelityRun['prompt'];
  return { ...run, prompt };
}

interface JobMount {
  name: string;
  mountPath: string;
  subPath?: string;
}

/**
 * Rebuilds a Job's file system under `dir` from its volume mounts, shallowest first: a mount of the
 * workspaces claim becomes a symlink to `<volumeRoot>/<subPath>`, an emptyDir an empty folder. A mount
 * that lands inside an earlier symlinked mount must already be there (the same host folder).
 */
export async function emulateJobFiles(job: unknown, volumeRoot: string, dir: string): Promise<void> {
  const spec = (job as { spec: { template: { spec: { containers: { volumeMounts: JobMount[] }[] } } } }).spec
    .template.spec;
  const mounts = [...(spec.containers[0]?.volumeMounts ?? [])].sort(
    (a, b) => a.mountPath.split('/').length - b.mountPath.split('/').length,
  );
  for (const m of mounts) {
    const at = path.join(dir, m.mountPath);
    const exists = await lstat(at).catch(() => undefined);
    if (m.subPath === undefined) {
      if (!exists) await mkdir(at, { recursive: true });
      continue;
    }
    const source = path.join(volumeRoot, m.subPath);
    if (exists) {
      const same = await realSame(at, source);
      if (!same) throw new Error(`mount ${m.mountPath} lands inside another mount at a different folder`);
      continue;
    }
    await mkdir(path.dirname(at), { recursive: true });
    await symlink(source, at);
  }
}

async function realSame(a: string, b: string): Promise<boolean> {
  const [ra, rb] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return ra === rb;
}

const run = promisify(execFile);

/** Runs the stand-in on the host against the emulated Job file system, with the Job's args and env (and stdin). */
export async function pathCheckJob(job: unknown, root: string): Promise<PathCheck & { stdout: string }> {
  const c = (
    job as {
      spec: {
        template: {
          spec: { containers: { args: string[]; env: { name: string; value?: string }[] }[] };
        };
      };
    }
  ).spec.template.spec.containers[0];
  if (!c) throw new Error('the Job has no container');
  const env = Object.fromEntries(c.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
  // args = [the CLI, ...its args] behind `sh -c 'exec "$0" "$@" < stdin'`.
  const [, ...args] = c.args;
  const stdin = path.join(root, 'run/triage-runner/stdin');
  const { stdout } = await run(
    'sh',
    ['-c', 'stdin=$1; shift; exec sh "$0" "$@" < "$stdin"', PATH_CHECK, stdin, ...args],
    {
      env: {
        PATH: process.env.PATH,
        HOME: env.HOME ?? '/home/agent',
        PATH_CHECK_ROOT: root,
        ...(env.CODEX_HOME ? { CODEX_HOME: env.CODEX_HOME } : {}),
        ...(env.TRIAGE_OUTPUT_DIR ? { TRIAGE_OUTPUT_DIR: env.TRIAGE_OUTPUT_DIR } : {}),
      },
    },
  );
  return { ...parsePathCheck(stdout), stdout };
}
