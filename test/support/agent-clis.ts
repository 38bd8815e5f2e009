// The real agent CLIs for contract tests: where they are installed (.ci/install-agent-clis.sh), how to
// run an adapter's invocation through the process engine (a real child process, no shell), and prompts built to break quoting.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type {
  AgentAdapter,
  AgentInvocation,
  AgentOutcome,
  AgentPaths,
  AgentRunOutput,
} from '../../src/agents/types.js';
import { loadConfig } from '../../src/config/load.js';
import { indexSkills, type SkillEntry } from '../../src/context/disclosure/skills-index.js';
import { skillMounts } from '../../src/run/layout.js';
import type { Mount } from '../../src/engines/types.js';
import { createProcessEngine } from '../../src/engines/process.js';
import { isWaitTimeout } from '../../src/engines/labels.js';
import { silentLogger } from '../../src/log/logger.js';

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
 * Runs the invocation through the real process engine (the engine the daemon uses for `--engine
 * process`): the CLI from `binDir`, no shell, cwd = workspace, HOME = the sandbox's home, only the
 * engine's allowlisted variables plus the invocation's env and secretEnv, stdin written at once and closed.
 */
export async function runInvocation(
  invocation: AgentInvocation,
  paths: AgentPaths & { root?: string },
  binDir: string,
  timeoutMs: number,
  mounts: Mount[] = [],
  /** Sees each stdout chunk as it arrives (a progress reader under test). */
  onStdout?: (chunk: Buffer) => void,
): Promise<AgentRunOutput> {
  await writeInvocationFiles(invocation, paths);
  const root = paths.root ?? dirname(paths.home);
  const config = loadConfig({ env: {}, cwd: root, flags: { workspaces_root: root } }).config;
  const engine = createProcessEngine(config, silentLogger(), {
    env: { PATH: `${binDir}:${process.env.PATH ?? ''}` },
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const runId = `contract-${randomUUID()}`;
  const handle = await engine.start({
    runId,
    incidentId: 'contract',
    labels: {},
    image: '',
    command: join(binDir, invocation.command),
    args: invocation.args,
    env: { ...invocation.env, HOME: paths.home },
    secretEnv: invocation.secretEnv,
    stdin: invocation.stdin,
    workdir: paths.workspaceDir,
    mounts,
    tmpfs: [],
    stateDir: join(root, 'state', runId),
    onStdout: (c) => {
      stdout.push(c);
      onStdout?.(c);
    },
    onStderr: (c) => void stderr.push(c),
  });
  let timedOut = false;
  let exit;
  try {
    exit = await engine.wait(handle, timeoutMs);
  } catch (err) {
    if (!isWaitTimeout(err)) throw err;
    timedOut = true;
    await engine.signal(handle, 'SIGKILL');
    exit = await engine.wait(handle, 10_000);
  } finally {
    await engine.remove(handle);
    await engine.close();
  }
  return {
    exitCode: exit.exitCode,
    signal: exit.signal,
    timedOut,
    stdout: Buffer.concat(stdout).toString('utf8'),
    stderr: Buffer.concat(stderr).toString('utf8'),
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

/** The skills of the fixture skills source (test/fixtures/skill-source), indexed as a run indexes them. */
export async function fixtureSkills(skillsDir: string): Promise<SkillEntry[]> {
  const source = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'skill-source');
  const index = await indexSkills({
    snapshot: { sources: [{ name: 'k8s4agents', scope: 'project', dir: source, commit: 'local:fixture' }] },
    maxSkillFileBytes: 256 * 1024,
    skillsDir,
    log: silentLogger(),
  });
  return index.skills;
}

/** The fixture skills laid out for `adapter` under the sandbox's HOME, as the run pipeline lays them out. */
export async function fixtureSkillMounts(
  adapter: Pick<AgentAdapter, 'skillsDirs'>,
  paths: AgentPaths,
): Promise<{ skills: SkillEntry[]; mounts: Mount[] }> {
  const skills = await fixtureSkills(join(paths.home, adapter.skillsDirs[0] ?? ''));
  return { skills, mounts: skillMounts(paths.home, adapter, skills) };
}

/** The marker the skills-listing contract tests put in the user part, to find the main model request. */
export const SKILLS_MARKER = 'USER-skills-listing';

/**
 * Runs `adapter`'s CLI with the fixture skills laid out under HOME as a run lays them out; returns the
 * adapter's reading of the output and, per skill, how often its description is in the model request
 * that carries SKILLS_MARKER (1: the CLI lists it, once).
 */
export async function runWithFixtureSkills(input: {
  adapter: AgentAdapter;
  invocationInput: Parameters<AgentAdapter['buildInvocation']>[0];
  paths: AgentPaths & { root?: string };
  binDir: string;
  timeoutMs: number;
  requests: () => { body: string }[];
}): Promise<{ outcome: AgentOutcome; listings: Record<string, number>; body: string; mounts: Mount[] }> {
  const { skills, mounts } = await fixtureSkillMounts(input.adapter, input.paths);
  const output = await runInvocation(
    input.adapter.buildInvocation(input.invocationInput),
    input.paths,
    input.binDir,
    input.timeoutMs,
    mounts,
  );
  const outcome = input.adapter.parseOutput(output);
  const body = input.requests().find((r) => r.body.includes(SKILLS_MARKER))?.body ?? '';
  return { outcome, listings: skillListings(body, skills), body, mounts };
}

/** How often each skill's description occurs in `body` (a model request): 1 when the CLI lists it once. */
export function skillListings(body: string, skills: readonly SkillEntry[]): Record<string, number> {
  return Object.fromEntries(skills.map((s) => [s.name, body.split(s.description).length - 1]));
}
