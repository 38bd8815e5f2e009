// `triage-runner eval` as the e2e tests run it: the CLI from sources in its own process group, offline
// (the process engine, test/fixtures/evals/offline.yaml), killed with its agents when a test ends.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { killGroup } from './daemon-process.js';
import { loadScripts, startScriptedModel, type ScriptedModel } from './providers/scripted-anthropic.js';
import { REPO_ROOT, tempDir } from './runs.js';

/** `eval <target> --engine process --config <offline config> --out <out> --min-score <min> ...extra`. */
export const offlineArgs = (target: string, out: string, minScore: string, ...extra: string[]) => [
  target,
  ...extra,
  '--engine',
  'process',
  '--config',
  'test/fixtures/evals/offline.yaml',
  '--out',
  out,
  '--min-score',
  minScore,
];

/** Eval processes still running: a test that fails or times out kills them (and their agents) after it. */
const running = new Set<number>();

export function killEvals(): void {
  for (const pid of running) killGroup(pid);
  running.clear();
}

/** Runs `triage-runner eval` in its own process group; killed with its agents after `timeoutMs`. */
export async function runEvalCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts'), 'eval', ...args],
    {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  const pid = child.pid as number;
  running.add(pid);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const timer = setTimeout(killEvals, timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  running.delete(pid);
  return { code, stdout, stderr };
}

/** What an offline eval test runs against: a temp root, the scripted model playing the shipped scripts, the CLI's environment. */
export interface OfflineEval {
  root: { dir: string; cleanup: () => Promise<void> };
  model: ScriptedModel;
  env: Record<string, string>;
}

/**
 * Registers, in the calling `describe`, the set-up of an offline eval (the scripted model over the
 * shipped suite's scripts, a HOME in a temp root, the CLI pointed at the model) and its tear-down
 * (every eval process killed after each test). The returned object is filled in before the tests run.
 */
export function offlineEval(prefix: string, cli: string, apiKey: string): OfflineEval {
  const harness = {} as OfflineEval;
  beforeAll(async () => {
    harness.root = await tempDir(prefix);
    harness.model = await startScriptedModel(
      await loadScripts(
        path.join(REPO_ROOT, 'test/fixtures/evals/scripted'),
        path.join(REPO_ROOT, 'examples', 'evals'),
      ),
    );
    const home = harness.root.dir;
    harness.env = {
      PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: home,
      ANTHROPIC_API_KEY: apiKey,
      ANTHROPIC_BASE_URL: harness.model.url,
      TRIAGE_RUNNER_AGENT_COMMAND: cli,
      SKILLS_CACHE_DIR: path.join(home, 'skills'),
    };
  });
  afterEach(killEvals);
  afterAll(async () => {
    killEvals();
    await harness.model?.close();
    await harness.root?.cleanup();
  });
  return harness;
}
