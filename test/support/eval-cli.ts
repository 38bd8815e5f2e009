// `triage-runner eval` as the e2e tests run it: the CLI from sources in its own process group, offline
// (the process engine, test/fixtures/evals/offline.yaml), killed with its agents when a test ends.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { killGroup } from './daemon-process.js';
import { REPO_ROOT } from './runs.js';

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
