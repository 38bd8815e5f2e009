// The real agent CLIs for contract tests: where they are installed (.ci/install-agent-clis.sh), how to
// run an adapter's invocation as a real child process (no shell), and prompts built to break quoting.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import type { AgentInvocation, AgentPaths, AgentRunOutput } from '../../src/agents/types.js';

export type CliName = 'claude' | 'codex' | 'gemini';

/** The bin folder holding the CLIs: TRIAGE_RUNNER_CLI_BIN, else the install script's default cache. */
export function cliBinDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TRIAGE_RUNNER_CLI_BIN) return env.TRIAGE_RUNNER_CLI_BIN;
  const cache = env.TRIAGE_RUNNER_CLI_CACHE ?? join(homedir(), '.cache', 'triage-runner', 'agent-clis');
  return join(cache, 'node_modules', '.bin');
}

/**
 * The CLI's path, or undefined when it is not installed (the test file then skips). With CI set a
 * missing CLI is an error: CI never silently skips a contract test.
 */
export function requireCli(name: CliName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = join(cliBinDir(env), name);
  if (existsSync(path)) return path;
  if (env.CI) {
    throw new Error(
      `agent CLI "${name}" not found at ${path} while CI is set: run bash .ci/install-agent-clis.sh ` +
        '(or point TRIAGE_RUNNER_CLI_BIN at a folder holding claude, codex and gemini)',
    );
  }
  return undefined;
}

/** A per-test sandbox: HOME, the read-only files folder, and the workspace the agent runs in. */
export async function makeAgentPaths(): Promise<AgentPaths & { root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'triage-contract-'));
  const paths = {
    root,
    home: join(root, 'home'),
    workspaceDir: join(root, 'workspace'),
    reportPath: join(root, 'workspace', 'output', 'investigation.md'),
    filesDir: join(root, 'files'),
  };
  await Promise.all(
    [paths.home, paths.filesDir, dirname(paths.reportPath)].map((d) => mkdir(d, { recursive: true })),
  );
  return paths;
}

/** Writes the invocation's files where the pipeline would: under HOME or under the files folder. */
export async function writeInvocationFiles(invocation: AgentInvocation, paths: AgentPaths): Promise<void> {
  for (const file of invocation.files) {
    const target = join(file.inHome ? paths.home : paths.filesDir, file.path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.content);
  }
}

/**
 * Runs the invocation as the process engine would: the CLI from `binDir`, no shell, cwd = workspace,
 * only PATH plus the invocation's env and secretEnv, stdin written at once and closed.
 */
export async function runInvocation(
  invocation: AgentInvocation,
  paths: AgentPaths,
  binDir: string,
  timeoutMs: number,
): Promise<AgentRunOutput> {
  await writeInvocationFiles(invocation, paths);
  const result = await execa(join(binDir, invocation.command), invocation.args, {
    cwd: paths.workspaceDir,
    env: { PATH: `${binDir}:${process.env.PATH ?? ''}`, ...invocation.env, ...invocation.secretEnv },
    extendEnv: false,
    input: invocation.stdin,
    reject: false,
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: 256 * 1024 * 1024,
    stripFinalNewline: false,
  });
  return {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    timedOut: result.timedOut,
    stdout: result.stdout,
    stderr: result.stderr,
  };
}

/**
 * Text that breaks shell quoting and argv limits: quotes, `$()`, backticks, backslashes, tabs,
 * LF and CRLF line ends, leading and trailing white space, non-ASCII and `@` words (none naming a file), repeated to about `bytes` UTF-8 bytes, with a unique label at
 * both ends so a test can tell the parts apart.
 */
export function hostilePrompt(label: string, bytes: number): string {
  const chunk =
    `line with "double" and 'single' quotes, $(rm -rf /) and \`uname -a\` and \${HOME} and \\ backslash\n` +
    `\ttab, é ü ß, 日本語, emoji 🚨🔥, oncall@example.com and @oncall, 100% <tag> & | ; > < * ? ~ !\r\n`;
  const body: string[] = [`  BEGIN-${label}\n`];
  let size = Buffer.byteLength(body[0] ?? '');
  for (let i = 0; size < bytes; i++) {
    const line = `${i}: ${chunk}`;
    body.push(line);
    size += Buffer.byteLength(line);
  }
  body.push(`END-${label}\n\n`);
  return body.join('');
}
