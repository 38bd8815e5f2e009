// An agent that is `sh -c <script>` in the test image, run through the real pipeline and docker
// engine: for tests that probe what the agent's container can see and do.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { runDirOf } from '../../src/workspace/layout.js';
import { AuditLog } from '../../src/audit/log.js';
import type { Config } from '../../src/config/schema.js';
import type { Engine } from '../../src/engines/types.js';
import { createRunExecutor, type ExecutorDeps } from '../../src/run/pipeline.js';
import type { RunExecutor, RunOutcome, RunOverrides } from '../../src/run/types.js';
import type { Workspace } from '../../src/workspace/incident.js';
import { createDockerEngine } from '../../src/engines/docker/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { emptySkills, fakeAdapter } from './runs.js';

/** Script lines that end the run like Claude: a report with Summary and Root Cause, stdin drained, the result JSON. */
export const FINISH_LIKE_CLAUDE = [
  "printf '# Report\\n\\n## Summary\\n%s\\n\\n## Root Cause\\nx\\n' \"$(head -c 120 /dev/zero | tr '\\0' a)\" > /workspace/output/investigation.md",
  'cat >/dev/null',
  'echo \'{"type":"result","subtype":"success","is_error":false,"num_turns":1,"usage":{"input_tokens":1,"output_tokens":1}}\'',
];

/** FINISH_LIKE_CLAUDE for an agent on the daemon's host: the report goes to $TRIAGE_OUTPUT_DIR. */
export const FINISH_ON_HOST = FINISH_LIKE_CLAUDE.map((l) =>
  l.replace('/workspace/output/investigation.md', '"$TRIAGE_OUTPUT_DIR/investigation.md"'),
);

export function shScriptExecutor(
  config: Config,
  script: string,
  engine: Engine = createDockerEngine(config, silentLogger()),
  env: Record<string, string | undefined> = {},
  /** 'configured': the skills cache of config.skills (a triage script runs); else none. */
  skills: 'none' | 'configured' = 'none',
  /** More of the executor's dependencies (the Prometheus endpoints, where the pipeline reports to /metrics). */
  extra: Partial<ExecutorDeps> = {},
): RunExecutor {
  const adapter = fakeAdapter('sh');
  return createRunExecutor({
    config,
    log: silentLogger(),
    redactor: new Redactor(),
    secrets: {},
    audit: new AuditLog(),
    env,
    engine,
    ...(skills === 'none' ? { skills: emptySkills() } : {}),
    agents: () => ({
      ...adapter,
      buildInvocation: (input) => ({ ...adapter.buildInvocation(input), args: ['-c', script] }),
    }),
    ...extra,
  });
}

/** One first attempt of a run by `executor`, never aborted. */
export const runOnce = (
  executor: RunExecutor,
  workspace: Workspace,
  runId: string,
  overrides?: RunOverrides,
): Promise<RunOutcome> =>
  executor.run({
    workspace,
    runId,
    attempt: 1,
    signal: new AbortController().signal,
    log: silentLogger(),
    ...(overrides ? { overrides } : {}),
  });

/** Runs `lines` (then FINISH_LIKE_CLAUDE) as the agent; returns the outcome, the bundle and the agent's stdout. */
export async function runShAgent(
  config: Config,
  workspace: Workspace,
  runId: string,
  lines: string[],
  overrides?: RunOverrides,
  engine?: Engine,
  env?: Record<string, string | undefined>,
  extra?: Partial<ExecutorDeps>,
): Promise<{ outcome: RunOutcome; bundle: string; stdout: string }> {
  const finish = engine?.placement === 'host' ? FINISH_ON_HOST : FINISH_LIKE_CLAUDE;
  const executor = shScriptExecutor(config, [...lines, ...finish].join('\n'), engine, env, 'none', extra);
  const outcome = await runOnce(executor, workspace, runId, overrides);
  const bundle = runDirOf(workspace.dir, runId);
  return { outcome, bundle, stdout: await readFile(path.join(bundle, 'agent-stdout.log'), 'utf8') };
}
