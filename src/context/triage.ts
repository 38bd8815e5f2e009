import { constants, createReadStream } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import type { RunBundle } from '../workspace/bundle.js';
import { RUN_FILES } from '../workspace/layout.js';
import type { Config } from '../config/schema.js';
import type { Incident } from '../workspace/incident.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { runProcessGroup, type GroupResult } from '../util/process-group.js';
import { HeadTailCapture } from './capture.js';
import { hostToAgent, type PathMapping } from './paths.js';
import {
  adoptSavedProducts,
  collectTriageProducts,
  TRIAGE_REPORT_FILE,
  type TriageProduct,
} from './triage-products.js';
import type { SkillsSnapshot, TriageSummary } from './types.js';

// Runs the configured skill's triage script as a real process in its own process group and keeps a
// bounded, cleaned copy of its output for the prompt, while the full stream goes to the run's
// triage/output.log (redacted, capped). Every failure ends in a TriageSummary; the agent still runs.

export type TriageMode = { mode: 'run' } | { mode: 'reuse'; logPath: string } | { mode: 'skip' };

export interface TriageInput {
  config: Config;
  incident: Incident;
  skills: SkillsSnapshot;
  bundle: RunBundle;
  log: Logger;
  mode: TriageMode;
  signal?: AbortSignal;
  /** Environment the PATH and HOME are taken from (default process.env). */
  env?: Record<string, string | undefined>;
  now?: () => number;
  /** The full output's path as the agent sees it (AgentView), named in the prompt copy; default the host path. */
  agentLogPath?: string;
  /**
   * The full output's host path as reported in the summary and reasons; default the bundle's own file.
   * A preview (`context`) writes into a temporary bundle but names where a real run keeps it.
   */
  reportedLogPath?: string;
  /** Folders put before PATH (RunOverrides.pathPrepend). */
  pathPrepend?: string[];
  /**
   * The run's kubectl guard for the script (src/run/kubectl-guard.ts), put first on its PATH: its
   * `kubectl` calls go through the run's broker. The script keeps its KUBECONFIG for its other tools.
   */
  kubectlGuard?: string;
  /** The cluster registry entry's KUBECONFIG (src/clusters/access.ts); absent: the configured `kubeconfig`. */
  cluster?: ClusterKubeconfig;
  /** The triage folder as the agent sees it (AgentView.triageDir); default the host path. */
  agentTriageDir?: string;
  /** How host paths appear to the agent (AgentView.hostPaths): the script's output and products are rewritten with it. */
  hostPaths?: PathMapping[];
}

export interface TriageOutcome {
  summary: TriageSummary;
  /** Cleaned output kept for the prompt, then the script's triage-report.md when it wrote one ('' when there is none). */
  text: string;
  /** Files the script wrote into its output folder, relative to it (listed in the prompt by the agent's path). */
  products?: TriageProduct[];
  /** What the bounded capture dropped: the gap line's place in `text`, and the lines and bytes it stands for. */
  omitted?: { at: number; length: number; lines: number; bytes: number };
}

/** Substitutes `{triage_dir}`, `{namespace}` and `{incident_id}` in the configured arguments. */
export function triageArgs(
  args: readonly string[],
  values: { triageDir: string; namespace: string; incidentId: string },
): string[] {
  return args.map((a) =>
    a
      .replaceAll('{triage_dir}', values.triageDir)
      .replaceAll('{namespace}', values.namespace)
      .replaceAll('{incident_id}', values.incidentId),
  );
}

/** The KUBECONFIG a run's registry entry gives kubectl (undefined: kubectl's default). */
export interface ClusterKubeconfig {
  kubeconfig?: string;
}

/** The KUBECONFIG the triage script is given: its registry entry's, else the configured `kubeconfig`. */
export function triageKubeconfig(config: Config, cluster: ClusterKubeconfig | undefined): string | undefined {
  return cluster ? cluster.kubeconfig : config.kubeconfig;
}

/**
 * The script's environment: the incident's coordinates, kubeconfig and PATH, never the daemon's secrets.
 * TRIAGE_RUN_DIR (the run bundle) and TRIAGE_STAGE=triage let tools it calls record into the bundle.
 */
export function triageEnv(
  config: Config,
  incident: Incident,
  env: Record<string, string | undefined>,
  run: { runDir?: string; pathPrepend?: string[]; cluster?: ClusterKubeconfig; kubectlGuard?: string } = {},
): Record<string, string> {
  const out: Record<string, string> = {
    NAMESPACE: incident.namespace,
    INCIDENT_NAMESPACE: incident.namespace,
    INCIDENT_ID: incident.incidentId,
    CLUSTER: incident.cluster,
    PATH: [
      ...(run.kubectlGuard ? [run.kubectlGuard] : []),
      ...(run.pathPrepend ?? []),
      env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    ].join(':'),
    TRIAGE_STAGE: 'triage',
  };
  if (run.runDir) out.TRIAGE_RUN_DIR = run.runDir;
  // The run's registry entry, and nothing else: no KUBECONFIG of the daemon's own is passed on.
  const kubeconfig = triageKubeconfig(config, run.cluster);
  if (kubeconfig) out.KUBECONFIG = kubeconfig;
  if (env.HOME) out.HOME = env.HOME;
  return out;
}

export async function runTriage(input: TriageInput): Promise<TriageOutcome> {
  const { config, mode } = input;
  if (mode.mode === 'skip')
    return { summary: { status: 'disabled', reason: 'triage skipped for this run' }, text: '' };
  if (config.skills.disable_triage_preload && mode.mode === 'run') {
    return { summary: { status: 'disabled', reason: 'skills.disable_triage_preload is true' }, text: '' };
  }
  if (mode.mode === 'reuse') return reuseTriage(input, mode.logPath);
  return executeTriage(input);
}

const gapLine = (logPath: string) => (bytes: number, lines: number) =>
  `[triage-runner: ${lines} lines (${bytes} bytes) of triage output omitted here (context.triage_prompt_cap); full output: ${logPath}]`;

/**
 * The prompt copy of a capture, with what it dropped. `rewrite` applies to the script's text on each
 * side of the gap line (which is ours and already names the agent's path).
 */
function captured(
  capture: HeadTailCapture,
  logPath: string,
  rewrite: (text: string) => string = (text) => text,
): Pick<TriageOutcome, 'text' | 'omitted'> & { bytes: number; lines: number } {
  const c = capture.finish(gapLine(logPath));
  if (!c.gap) return { text: rewrite(c.text), bytes: c.bytes, lines: c.lines };
  const head = rewrite(c.text.slice(0, c.gap.at));
  const gap = c.text.slice(c.gap.at, c.gap.at + c.gap.length);
  const tail = rewrite(c.text.slice(c.gap.at + c.gap.length));
  return {
    text: `${head}${gap}${tail}`,
    bytes: c.bytes,
    lines: c.lines,
    omitted: { ...c.gap, at: head.length, bytes: c.droppedBytes },
  };
}

/** The stdout copy followed by the script's own report, under a line naming where the agent reads it. */
function withReport(text: string, report: string | undefined, agentPath: string): string {
  if (report === undefined || report.trim() === '') return text;
  const stdout = text.replace(/\s+$/, '');
  return `${stdout}${stdout ? '\n\n' : ''}----- ${agentPath} -----\n${report.replace(/\s+$/, '')}\n`;
}

async function reuseTriage(input: TriageInput, source: string): Promise<TriageOutcome> {
  const logPath = input.reportedLogPath ?? input.bundle.path(RUN_FILES.triageLog);
  try {
    const info = await stat(source);
    if (!info.isFile()) throw new Error('not a regular file');
  } catch (err) {
    const reason = `saved triage output ${source} cannot be read (${errorMessage(err)}); pass an existing file to --reuse-triage`;
    input.log.warn({ path: source }, 'saved triage output unreadable');
    return { summary: { status: 'missing', reason }, text: '' };
  }
  const capture = new HeadTailCapture(input.config.context.triage_prompt_cap);
  for await (const chunk of createReadStream(source)) capture.push(chunk as Buffer);
  // The products saved beside the output come along; the folder the saved text names for them becomes
  // this run's triage folder, where the agent finds them.
  const agentDir = input.agentTriageDir ?? input.bundle.path(RUN_FILES.triageDir);
  const { originalDir } = await adoptSavedProducts({
    savedDir: path.dirname(source),
    outputFile: path.basename(source),
    text: capture.finish(() => '').text,
    bundle: input.bundle,
    log: input.log,
  });
  const rewrite = hostToAgent([
    ...(input.hostPaths ?? []),
    ...(originalDir ? [{ host: originalDir, agent: agentDir }] : []),
  ]);
  const out = input.bundle.openLog(RUN_FILES.triageLog, input.config.context.triage_log_cap, rewrite);
  try {
    for await (const chunk of createReadStream(source)) out.write(chunk as Buffer);
  } finally {
    await out.close();
  }
  const { bytes, lines, ...kept } = captured(capture, input.agentLogPath ?? logPath, rewrite);
  const products = await withProducts(input, kept, rewrite, agentDir);
  return {
    summary: {
      status: 'reused',
      bytes,
      lines,
      logPath,
      reason: `reused saved output ${source}`,
      ...products.counts,
    },
    ...products.kept,
  };
}

/** The script's products in the triage folder: the report joined after stdout, every file listed. */
async function withProducts(
  input: TriageInput,
  stdout: Pick<TriageOutcome, 'text' | 'omitted'>,
  rewrite: (text: string) => string,
  agentDir: string,
): Promise<{
  kept: Pick<TriageOutcome, 'text' | 'omitted' | 'products'>;
  counts: { products: number; reportPreloaded: boolean };
}> {
  const products = await collectTriageProducts({
    bundle: input.bundle,
    rewrite,
    reportCap: input.config.context.triage_prompt_cap,
    log: input.log,
  });
  return {
    kept: {
      ...stdout,
      text: withReport(stdout.text, products.report, path.posix.join(agentDir, TRIAGE_REPORT_FILE)),
      products: products.files,
    },
    counts: { products: products.files.length, reportPreloaded: products.report !== undefined },
  };
}

/** What the script's run left: the process result, its duration and the prompt copy of its output. */
interface TriageRun {
  result: GroupResult;
  durationMs: number;
  bytes: number;
  lines: number;
  logPath: string;
  kept: Pick<TriageOutcome, 'text' | 'omitted' | 'products'>;
  counts: { products: number; reportPreloaded: boolean };
}

async function executeTriage(input: TriageInput): Promise<TriageOutcome> {
  const located = await locateScript(input);
  if ('summary' in located) return located;
  const run = await spawnScript(input, located.script);
  return judgeTriage(input, located.script, run);
}

/**
 * The configured triage script inside its skills source, checked to be a regular, executable file;
 * otherwise the outcome that says why it cannot run.
 */
async function locateScript(input: TriageInput): Promise<{ script: string } | TriageOutcome> {
  const { config, log } = input;
  const t = config.skills.triage;
  const source = input.skills.sources.find((s) => s.name === t.skill);
  if (!source) {
    const why = input.skills.unavailable.find((u) => u.name === t.skill);
    const reason = why
      ? `skills source ${t.skill} unavailable: ${why.reason}`
      : `skills source ${t.skill} (skills.triage.skill) is not configured in skills.sources; add it or set skills.disable_triage_preload`;
    log.warn({ skill: t.skill }, 'triage skipped: skills source unavailable');
    return { summary: { status: 'missing', reason }, text: '' };
  }
  const script = path.resolve(source.dir, t.script);
  const rel = path.relative(source.dir, script);
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    return {
      summary: {
        status: 'missing',
        reason: `skills.triage.script ${t.script} points outside source ${t.skill}`,
      },
      text: '',
    };
  }
  try {
    const info = await stat(script);
    if (!info.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTFILE' });
  } catch (err) {
    const reason = `triage script ${t.script} not found in skills source ${t.skill} at commit ${source.commit} (${script}): ${errorMessage(err)}; check skills.triage.script`;
    log.warn({ script }, 'triage script missing');
    return { summary: { status: 'missing', reason }, text: '' };
  }
  try {
    await access(script, constants.X_OK);
  } catch {
    const reason = `triage script ${script} is not executable; run chmod +x on it in the skill repository`;
    log.warn({ script }, 'triage script not executable');
    return { summary: { status: 'not_executable', reason }, text: '' };
  }
  return { script };
}

/** Runs the script in its own process group, its output streamed to the log and the prompt's capture. */
async function spawnScript(input: TriageInput, script: string): Promise<TriageRun> {
  const { config, incident } = input;
  const now = input.now ?? Date.now;
  const t = config.skills.triage;
  const triageDir = input.bundle.path(RUN_FILES.triageDir);
  const logPath = input.reportedLogPath ?? input.bundle.path(RUN_FILES.triageLog);
  // The script runs on the host and is given the host folder; what it prints and writes is rewritten to
  // the agent's paths (the log too: the prompt points the agent at it).
  const args = triageArgs(t.args, {
    triageDir,
    namespace: incident.namespace,
    incidentId: incident.incidentId,
  });
  const capture = new HeadTailCapture(config.context.triage_prompt_cap);
  const rewrite = hostToAgent(input.hostPaths ?? []);
  const out = input.bundle.openLog(RUN_FILES.triageLog, config.context.triage_log_cap, rewrite);
  const started = now();
  const result = await runProcessGroup({
    command: script,
    args,
    cwd: triageDir,
    env: triageEnv(config, incident, input.env ?? process.env, {
      runDir: input.bundle.dir,
      ...(input.pathPrepend ? { pathPrepend: input.pathPrepend } : {}),
      ...(input.cluster ? { cluster: input.cluster } : {}),
      ...(input.kubectlGuard ? { kubectlGuard: input.kubectlGuard } : {}),
    }),
    timeoutMs: t.timeout,
    killGraceMs: t.kill_grace,
    signal: input.signal,
    onData: (chunk) => {
      capture.push(chunk);
      out.write(chunk);
    },
    // Everything the script starts carries the run's marker: a setsid grandchild is stopped with it.
    marker: `triage-${path.basename(input.bundle.dir)}`,
  });
  await out.close();
  const durationMs = now() - started;
  const { bytes, lines, ...stdout } = captured(capture, input.agentLogPath ?? logPath, rewrite);
  const { kept, counts } = await withProducts(input, stdout, rewrite, input.agentTriageDir ?? triageDir);
  return { result, durationMs, bytes, lines, logPath, kept, counts };
}

/** The summary of a finished script: ok, or why it failed (could not start, timed out, cancelled, exit code). */
function judgeTriage(input: TriageInput, script: string, run: TriageRun): TriageOutcome {
  const { log } = input;
  const t = input.config.skills.triage;
  const { result, durationMs, bytes, lines, logPath, kept, counts } = run;
  const base = {
    exitCode: result.exitCode,
    signal: result.signal,
    durationMs,
    bytes,
    lines,
    logPath,
    ...counts,
  };
  if (result.error) {
    const reason = `triage script ${script} could not be started: ${result.error}; check that the interpreter on its #! line is installed on the daemon's host`;
    log.warn({ script, err: result.error }, 'triage script failed to start');
    return { summary: { status: 'failed', reason, ...base }, ...kept };
  }
  if (result.timedOut) {
    const reason = `triage script timed out after ${t.timeout} ms (skills.triage.timeout); its process group was terminated; output below is partial`;
    log.warn({ script, timeoutMs: t.timeout }, 'triage script timed out');
    return { summary: { status: 'timed_out', reason, ...base }, ...kept };
  }
  if (result.aborted) {
    return {
      summary: { status: 'failed', reason: 'triage interrupted: the run was cancelled', ...base },
      ...kept,
    };
  }
  if (result.exitCode !== 0) {
    const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
    const reason = `triage script ${how}; see ${logPath} (a typical cause is a cluster the script cannot reach)`;
    log.warn({ script, exitCode: result.exitCode, signal: result.signal }, 'triage script failed');
    return { summary: { status: 'failed', reason, ...base }, ...kept };
  }
  log.info({ script, durationMs, bytes, lines }, 'triage script finished');
  return { summary: { status: 'ok', ...base }, ...kept };
}
