import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from '../shared/zod.js';
import type { ValidatorRecord, ValidatorVerdict } from '../workspace/run-record.js';
import type { Config } from '../config/schema.js';
import { errorMessage } from '../util/errors.js';
import { runProcessGroup } from '../util/process-group.js';
import { readOwnFile } from '../util/safe-path.js';
import { stripAnsi } from './capture.js';
import { SKILL_FILE, inside } from './disclosure/skill-file.js';
import type { SkillsSnapshot } from './types.js';

export type { ValidatorRecord, ValidatorVerdict } from '../workspace/run-record.js';

// The triage skill's own report validator. A skill may declare commands to run when the agent stops
// (`skill-hooks.json`, Claude Code's hook format: `{"hooks":{"Stop":[{"hooks":[{"type":"command",
// "command":"./scripts/validate-report.sh","timeout":10}]}]}}`); k8s4agents declares validate-report.sh,
// which checks the report against the skill's template (exit 0 compliant, 1 missing file or heading,
// 2 warnings only). The daemon runs that command itself after the agent, on the host like the triage
// script: every CLI gets the same check, whether or not it runs hooks, and the result is recorded.

export const SKILL_HOOKS_FILE = 'skill-hooks.json';
const MAX_HOOKS_BYTES = 64 * 1024;
const TAIL_BYTES = 2048;
const TAIL_LINES = 30;
/** Characters that would need a shell; a hook command using them is not run. */
const SHELL_SYNTAX = /[;&|$`<>(){}*?'"\\!#~\n]/;

const hooksSchema = z.looseObject({
  hooks: z.looseObject({
    Stop: z
      .array(
        z.looseObject({
          hooks: z.array(
            z.looseObject({
              type: z.string(),
              command: z.string().optional(),
              timeout: z.number().positive().optional(),
            }),
          ),
        }),
      )
      .optional(),
  }),
});

/** A validator the daemon can run: the skill's declared command, resolved inside the skill folder. */
export interface ReportValidator {
  /** The skill, as `<source>/<folder>` (e.g. `k8s4agents/skills/k8s-troubleshooter`). */
  skill: string;
  /** The command as the skill declares it. */
  command: string;
  /** Host path of the program, inside the skill folder. */
  program: string;
  /** Arguments the command declares (the report path is appended). */
  args: string[];
  /** The hook's timeout (Claude Code hooks count seconds), capped by skills.triage.validator_timeout. */
  timeoutMs: number;
}

export type ValidatorLookup =
  | { kind: 'none'; reason: string }
  | { kind: 'unusable'; reason: string }
  | { kind: 'found'; validator: ReportValidator };

/** The folder of the skill holding `file`: the nearest folder up to `root` with a SKILL.md. */
async function skillFolderOf(root: string, file: string): Promise<string | undefined> {
  for (let dir = path.dirname(file); inside(root, dir); dir = path.dirname(dir)) {
    if ((await stat(path.join(dir, SKILL_FILE)).catch(() => undefined))?.isFile()) return dir;
    if (dir === root) break;
  }
  return undefined;
}

/**
 * Finds the report validator the triage skill (the skill holding skills.triage.script) declares. `none`
 * when there is nothing to run (disabled, no such skill, no skill-hooks.json or no Stop command);
 * `unusable` when a declaration exists but cannot be run safely, with the reason.
 */
export async function findReportValidator(
  config: Config,
  snapshot: Pick<SkillsSnapshot, 'sources'>,
): Promise<ValidatorLookup> {
  const t = config.skills.triage;
  if (!t.validate_report) return { kind: 'none', reason: 'skills.triage.validate_report is false' };
  const source = snapshot.sources.find((s) => s.name === t.skill);
  if (!source) return { kind: 'none', reason: `skills source ${t.skill} is not available` };
  const root = await realpath(source.dir).catch(() => undefined);
  if (!root) return { kind: 'none', reason: `skills source ${t.skill} cannot be read` };
  const skillDir = await skillFolderOf(root, path.resolve(root, t.script));
  if (!skillDir) return { kind: 'none', reason: `no SKILL.md above ${t.script} in ${t.skill}` };
  const skill = path.posix.join(t.skill, path.relative(root, skillDir).split(path.sep).join('/'));
  const hooksFile = path.join(skillDir, SKILL_HOOKS_FILE);
  const read = await readOwnFile(hooksFile, MAX_HOOKS_BYTES);
  if (read.kind === 'missing') return { kind: 'none', reason: `${skill} has no ${SKILL_HOOKS_FILE}` };
  if (read.kind === 'refused') return { kind: 'unusable', reason: read.reason };
  let parsed;
  try {
    parsed = hooksSchema.safeParse(JSON.parse(read.text));
  } catch (err) {
    return { kind: 'unusable', reason: `${hooksFile} is not valid JSON (${errorMessage(err)})` };
  }
  if (!parsed.success)
    return {
      kind: 'unusable',
      reason: `${hooksFile} does not have the hooks shape ({"hooks":{"Stop":[{"hooks":[…]}]}})`,
    };
  const hook = parsed.data.hooks.Stop?.flatMap((h) => h.hooks).find((h) => h.type === 'command' && h.command);
  if (!hook?.command) return { kind: 'none', reason: `${skill} declares no Stop command` };
  const command = hook.command.trim();
  if (SHELL_SYNTAX.test(command))
    return {
      kind: 'unusable',
      reason: `Stop command ${JSON.stringify(command)} needs a shell; only "<program> [args]" is run`,
    };
  const [first = '', ...args] = command.split(/\s+/);
  const program = path.resolve(skillDir, first);
  const real = await realpath(program).catch(() => undefined);
  if (path.isAbsolute(first) || !real || !inside(skillDir, real))
    return { kind: 'unusable', reason: `Stop command ${first} is not a file inside ${skill}` };
  if (!(await stat(real)).isFile())
    return { kind: 'unusable', reason: `Stop command ${first} in ${skill} is not a regular file` };
  try {
    await access(real, constants.X_OK);
  } catch {
    return { kind: 'unusable', reason: `Stop command ${first} in ${skill} is not executable` };
  }
  const declared = hook.timeout !== undefined ? hook.timeout * 1000 : Number.POSITIVE_INFINITY;
  return {
    kind: 'found',
    validator: { skill, command, program: real, args, timeoutMs: Math.min(declared, t.validator_timeout) },
  };
}

/** exit 0 compliant, 2 warnings only, 1 non-compliant (the k8s4agents contract); anything else failed. */
export function verdictOf(exitCode: number | null): ValidatorVerdict {
  return exitCode === 0
    ? 'compliant'
    : exitCode === 2
      ? 'warnings'
      : exitCode === 1
        ? 'non_compliant'
        : 'failed';
}

function tail(chunks: Buffer[]): string {
  const text = stripAnsi(Buffer.concat(chunks).toString('utf8'));
  return text.split('\n').slice(-TAIL_LINES).join('\n').trim();
}

/**
 * Runs the validator in the incident workspace with the report's path relative to it (the k8s4agents
 * validator's default is `output/report.md` relative to its working directory), in its own process
 * group with the timeout; never throws.
 */
export async function runReportValidator(
  v: ReportValidator,
  input: {
    workspaceDir: string;
    reportHostPath: string;
    env: Record<string, string | undefined>;
    redact: (text: string) => string;
    signal?: AbortSignal;
    killGraceMs: number;
    marker: string;
  },
): Promise<ValidatorRecord> {
  const chunks: Buffer[] = [];
  let held = 0;
  const report = path.relative(input.workspaceDir, input.reportHostPath).split(path.sep).join('/');
  const env: Record<string, string> = { PATH: input.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  for (const key of ['HOME', 'LANG', 'LC_ALL', 'TZ'] as const) {
    const value = input.env[key];
    if (value !== undefined) env[key] = value;
  }
  const result = await runProcessGroup({
    command: v.program,
    args: [...v.args, report],
    cwd: input.workspaceDir,
    env,
    timeoutMs: v.timeoutMs,
    killGraceMs: input.killGraceMs,
    signal: input.signal,
    marker: input.marker,
    onData: (chunk) => {
      chunks.push(chunk);
      held += chunk.length;
      while (held > TAIL_BYTES * 4 && chunks.length > 1) held -= chunks.shift()?.length ?? 0;
    },
  });
  const base = { skill: v.skill, command: v.command, durationMs: result.durationMs };
  const outputTail = input.redact(tail(chunks).slice(-TAIL_BYTES));
  if (result.error)
    return { ...base, verdict: 'failed', exitCode: null, reason: `could not be started: ${result.error}` };
  if (result.aborted)
    return {
      ...base,
      verdict: 'failed',
      exitCode: result.exitCode,
      outputTail,
      reason: 'interrupted: the daemon is shutting down',
    };
  if (result.timedOut)
    return {
      ...base,
      verdict: 'failed',
      exitCode: result.exitCode,
      timedOut: true,
      outputTail,
      reason: `timed out after ${v.timeoutMs} ms and was stopped`,
    };
  return {
    ...base,
    verdict: verdictOf(result.exitCode),
    exitCode: result.exitCode,
    ...(result.signal ? { signal: result.signal } : {}),
    outputTail,
  };
}
