import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { RUN_FILES } from '../audit/bundle.js';
import { replayDir, runDirOf, runsDir, triageDir, workspaceOfRunDir } from '../shared/triage-paths.js';
import type { AuditLog } from '../audit/log.js';
import { readRunManifest, readRunResult } from '../audit/run-record.js';
import { AGENT_NAMES, ENGINE_NAMES, type AgentName, type EngineName } from '../config/schema.js';
import { promptDigest } from '../context/build.js';
import { savedTriageFiles } from '../context/triage-products.js';
import type { PromptParts } from '../context/types.js';
import { INCIDENT_FILE, PERMISSIONS_FILE, readWorkspace } from '../intake/read.js';
import type { Workspace } from '../intake/types.js';
import type { Logger } from '../log/logger.js';
import { writeFileAtomic } from '../util/fs.js';
import type { RunExecutor, RunOutcome, RunOverrides } from './types.js';
import { compactStamp } from '../util/time.js';

// `replay`: re-runs a saved incident (a workspace, a run bundle or an example) into a NEW workspace
// through the daemon's own pipeline, and says whether the prompt came out byte-identical.

/** Where an example keeps the triage output it ships with (a newcomer replays it without a cluster). */
export const SAVED_TRIAGE_LOG = path.join('saved-triage', 'output.log');
/** Inside the replay workspace: what was replayed, with which choices. */

export type ReplaySourceKind = 'workspace' | 'bundle' | 'example';

/** A replay's input, resolved from the path the user gave. */
export interface ReplaySource {
  kind: ReplaySourceKind;
  input: string;
  /** The folder holding incident.json (a bundle's workspace). */
  workspaceDir: string;
  /** The run bundle the original prompt and triage output come from, when there is one. */
  bundleDir?: string;
  /** Saved triage output to reuse: an example's saved-triage/output.log or the bundle's triage/output.log. */
  savedTriageLog?: string;
  /** The original run's prompt-sent.md. */
  originalPromptFile?: string;
  /** The agent of the original run, used when no agent is chosen. */
  originalAgent?: AgentName;
  /** The engine of the original run, used when no engine is chosen (the prompt's paths depend on it). */
  originalEngine?: EngineName;
  /** The cluster registry entry the original run investigated (its result.json), used when none is chosen. */
  originalCluster?: string;
}

/** Usage problems (bad input or output folder): the CLI maps them to exit 2. */
export class ReplayUsageError extends Error {
  override name = 'ReplayUsageError';
}

export type TriageChoice = 'reuse' | 'rerun' | 'auto';

export interface ReplayOptions {
  input: string;
  /** Default: `<cwd>/replays/<folder>-<UTC timestamp>`. */
  out?: string;
  cwd: string;
  agent?: AgentName;
  engine?: EngineName;
  model?: string;
  /** auto (default): reuse when a saved triage output exists, else run the script. */
  triage?: TriageChoice;
  /** Replace reuse/rerun with no triage at all (compare's no-preload variant). */
  skipTriage?: boolean;
  subjects?: string[];
  dryRun?: boolean;
  /**
   * The replay's run id. It is part of the prompt (the agent is told where the full triage output is),
   * so by default it is the original run's id, or one derived from the incident bytes when there is no
   * original run: replaying the same input twice then gives the same prompt.
   */
  runId?: string;
  /** Folders a replay must not write into besides the original (the daemon's workspaces root). */
  forbiddenRoots?: string[];
  maxIncidentBytes: number;
  /** Folders put first on PATH for the triage script and the agent (RunOverrides.pathPrepend). */
  pathPrepend?: string[];
  /** The cluster registry entry (or alias) to investigate; default: the one the original run used. */
  cluster?: string;
}

export interface ReplayDeps {
  executor: RunExecutor;
  log: Logger;
  audit?: AuditLog;
  signal?: AbortSignal;
  now?: () => number;
}

export interface PromptHash {
  sha256: string;
  file: string;
}

export interface ReplayResult {
  source: ReplaySource;
  outDir: string;
  runId: string;
  runDir: string;
  overrides: RunOverrides;
  outcome: RunOutcome;
  original?: PromptHash;
  /** Why the original prompt hash is unknown (no bundle, unreadable prompt-sent.md). */
  originalUnknown?: string;
  replayed?: PromptHash;
  identical?: boolean;
  /**
   * The prompts differ only in the workspace and run-bundle paths (the process engine shows the agent
   * host paths, which differ for a new workspace; container engines show `/workspace` and match).
   */
  identicalApartFromPaths?: boolean;
  /** The first difference, when the prompts differ: which part and which line. */
  difference?: string;
}

/** The hash replay compares: prepare's digest of both prompt parts (the `prompt sha256` row of prompt-sent.md). */
export const promptSha256 = (parts: PromptParts): string => promptDigest(parts);

const isDir = (p: string) =>
  stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
const isFile = (p: string) =>
  stat(p).then(
    (s) => s.isFile(),
    () => false,
  );

/** Works out what the input folder is: a run bundle, an example with saved triage, or a workspace. */
export async function resolveReplaySource(input: string): Promise<ReplaySource> {
  const dir = path.resolve(input);
  if (!(await isDir(dir)))
    throw new ReplayUsageError(`${dir} is not a folder; give a workspace, a run bundle or an example folder`);
  const workspaceDir = workspaceOfRunDir(dir);
  if (workspaceDir !== undefined) {
    if (!(await isFile(path.join(workspaceDir, INCIDENT_FILE)))) {
      throw new ReplayUsageError(
        `run bundle ${dir} belongs to ${workspaceDir}, which has no ${INCIDENT_FILE} to replay`,
      );
    }
    return { kind: 'bundle', input: dir, workspaceDir, ...(await bundleFacts(dir)) };
  }
  if (!(await isFile(path.join(dir, INCIDENT_FILE)))) {
    throw new ReplayUsageError(
      `${dir} has no ${INCIDENT_FILE}: give an incident workspace, a run bundle (<workspace>/.triage/runs/<run-id>) or an example (examples/incidents/<name>)`,
    );
  }
  const saved = path.join(dir, SAVED_TRIAGE_LOG);
  if (await isFile(saved)) return { kind: 'example', input: dir, workspaceDir: dir, savedTriageLog: saved };
  const latest = await latestBundle(dir);
  if (!latest) return { kind: 'workspace', input: dir, workspaceDir: dir };
  return {
    kind: 'workspace',
    input: dir,
    workspaceDir: dir,
    bundleDir: latest,
    ...(await bundleFacts(latest)),
  };
}

async function bundleFacts(bundleDir: string): Promise<Partial<ReplaySource>> {
  const out: Partial<ReplaySource> = { bundleDir };
  const triage = path.join(bundleDir, RUN_FILES.triageLog);
  if (
    await stat(triage).then(
      (s) => s.isFile() && s.size > 0,
      () => false,
    )
  )
    out.savedTriageLog = triage;
  const prompt = path.join(bundleDir, RUN_FILES.promptParts);
  if (await isFile(prompt)) out.originalPromptFile = prompt;
  // What the original ran with: the manifest (written at launch), else the context (a dry run).
  const manifest = await readRunManifest(bundleDir);
  const context = await readFile(path.join(bundleDir, RUN_FILES.context), 'utf8').then(
    (t) => JSON.parse(t) as { agent?: unknown },
    () => undefined,
  );
  const agent = manifest.ok ? manifest.value.agent : context?.agent;
  if (typeof agent === 'string' && (AGENT_NAMES as readonly string[]).includes(agent))
    out.originalAgent = agent as AgentName;
  const engine = manifest.ok ? manifest.value.engine : undefined;
  if (typeof engine === 'string' && (ENGINE_NAMES as readonly string[]).includes(engine))
    out.originalEngine = engine as EngineName;
  const result = await readRunResult(bundleDir);
  if (result.ok && result.value.cluster) out.originalCluster = result.value.cluster.name;
  return out;
}

/** The newest run bundle with a prompt (run ids sort by time). */
async function latestBundle(workspaceDir: string): Promise<string | undefined> {
  const runs = runsDir(workspaceDir);
  const ids = await readdir(runs).catch(() => [] as string[]);
  for (const id of ids.sort().reverse()) {
    if (await isFile(path.join(runs, id, RUN_FILES.promptParts))) return path.join(runs, id);
  }
  return undefined;
}

const inside = (child: string, parent: string) => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** Real path of `p`, or of its nearest existing ancestor joined with the rest (for folders not yet created). */
async function realish(p: string): Promise<string> {
  const rest: string[] = [];
  let current = path.resolve(p);
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(p);
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

/** Picks and checks the output folder: never the original's tree, never an existing non-empty folder. */
export async function chooseOutDir(
  source: ReplaySource,
  options: ReplayOptions,
  now: number,
): Promise<string> {
  const out = options.out
    ? path.resolve(options.cwd, options.out)
    : path.join(options.cwd, 'replays', `${path.basename(source.workspaceDir)}-${compactStamp(now)}`);
  const real = await realish(out);
  const originals = [source.workspaceDir, source.input];
  for (const original of originals) {
    const realOriginal = await realish(original);
    if (inside(real, realOriginal) || inside(realOriginal, real)) {
      throw new ReplayUsageError(
        `--out ${out} overlaps the original ${original}; a replay never writes into the original: choose a folder outside it`,
      );
    }
  }
  for (const root of options.forbiddenRoots ?? []) {
    if (inside(real, await realish(root))) {
      throw new ReplayUsageError(
        `--out ${out} is inside the workspaces root ${root}, where a running daemon would pick the replay up as a new incident: choose a folder outside it`,
      );
    }
  }
  const entries = await readdir(out).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    if (err.code === 'ENOTDIR')
      throw new ReplayUsageError(`--out ${out} is a file; give a new or empty folder`);
    throw err;
  });
  if (entries.length > 0)
    throw new ReplayUsageError(`--out ${out} already exists and is not empty; give a new or empty folder`);
  return out;
}

/**
 * Copies the incident (and permissions) byte for byte into the new workspace, plus the saved triage
 * output with the products the script saved beside it (triage-report.md, evidence/…), which the reused
 * output names: `<out>/.triage/replay/triage-input/`.
 */
async function copyInputs(source: ReplaySource, outDir: string): Promise<string | undefined> {
  await mkdir(replayDir(outDir), { recursive: true });
  await copyFile(path.join(source.workspaceDir, INCIDENT_FILE), path.join(outDir, INCIDENT_FILE));
  const permissions = path.join(source.workspaceDir, PERMISSIONS_FILE);
  if (await isFile(permissions)) await copyFile(permissions, path.join(outDir, PERMISSIONS_FILE));
  if (!source.savedTriageLog) return undefined;
  const saved = path.dirname(source.savedTriageLog);
  const target = path.join(replayDir(outDir), 'triage-input');
  const log = path.basename(source.savedTriageLog);
  await mkdir(target, { recursive: true });
  await copyFile(source.savedTriageLog, path.join(target, log));
  for (const f of await savedTriageFiles(saved, log)) {
    await mkdir(path.dirname(path.join(target, f.rel)), { recursive: true });
    await copyFile(path.join(saved, f.rel), path.join(target, f.rel));
  }
  return path.join(target, log);
}

function triageOverride(
  options: ReplayOptions,
  source: ReplaySource,
  savedCopy: string | undefined,
): RunOverrides['triage'] {
  if (options.skipTriage) return { mode: 'skip' };
  const choice = options.triage ?? 'auto';
  if (choice === 'rerun') return { mode: 'run' };
  if (savedCopy) return { mode: 'reuse', logPath: savedCopy };
  if (choice === 'reuse') {
    throw new ReplayUsageError(
      `--reuse-triage: ${source.input} has no saved triage output (looked for ${SAVED_TRIAGE_LOG} and a run bundle's ${RUN_FILES.triageLog}); use --rerun-triage`,
    );
  }
  return { mode: 'run' };
}

/**
 * A run's prompt as sent (prompt.json) and its sha256 as recorded in context.json (taken before any
 * redaction, so it is the hash of what the agent really received), else the digest of the parts.
 */
export async function readSentPrompt(bundleDir: string): Promise<PromptHash & { parts: PromptParts }> {
  const file = path.join(bundleDir, RUN_FILES.promptParts);
  const parts = JSON.parse(await readFile(file, 'utf8')) as PromptParts;
  if (typeof parts?.system !== 'string' || typeof parts.user !== 'string')
    throw new Error(`${file} does not hold {system, user} strings`);
  const context = await readFile(path.join(bundleDir, RUN_FILES.context), 'utf8').then(
    (t) => JSON.parse(t) as { promptSha256?: unknown },
    () => undefined,
  );
  const recorded = typeof context?.promptSha256 === 'string' ? context.promptSha256 : undefined;
  return { sha256: recorded ?? promptSha256(parts), file, parts };
}

/** The prompt with host paths of the original replaced by the replay's (longest first). */
function relocate(parts: PromptParts, moves: [string, string][]): PromptParts {
  const apply = (text: string) => moves.reduce((t, [from, to]) => t.split(from).join(to), text);
  return { system: apply(parts.system), user: apply(parts.user) };
}

function checkRunId(runId: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(runId)) {
    throw new ReplayUsageError(
      `run id ${JSON.stringify(runId)} is not a safe folder name: use letters, digits, ".", "_" and "-"`,
    );
  }
}

/** The original run's id, else `replay-<sha256 of incident.json, 12 hex>`: stable for the same input. */
export function replayRunId(source: ReplaySource, incidentText: string): string {
  if (source.bundleDir) return path.basename(source.bundleDir);
  return `replay-${createHash('sha256').update(incidentText).digest('hex').slice(0, 12)}`;
}

/** Names the first differing line of two prompts, e.g. "user part, line 12". */
export function firstDifference(a: PromptParts, b: PromptParts): string | undefined {
  for (const part of ['system', 'user'] as const) {
    if (a[part] === b[part]) continue;
    const la = a[part].split('\n');
    const lb = b[part].split('\n');
    let i = 0;
    while (i < la.length && i < lb.length && la[i] === lb[i]) i++;
    return `${part} part, line ${i + 1}: ${JSON.stringify((la[i] ?? '<end>').slice(0, 80))} vs ${JSON.stringify((lb[i] ?? '<end>').slice(0, 80))}`;
  }
  return undefined;
}

/** Replays one saved incident into a new workspace through `executor.run`; never writes into the original. */
export async function replay(options: ReplayOptions, deps: ReplayDeps): Promise<ReplayResult> {
  const now = deps.now ?? Date.now;
  const source = await resolveReplaySource(path.resolve(options.cwd, options.input));
  const outDir = await chooseOutDir(source, options, now());
  // Usage errors come before anything is written.
  triageOverride(options, source, source.savedTriageLog);
  if (options.runId !== undefined) checkRunId(options.runId);
  const savedCopy = await copyInputs(source, outDir);
  const triage = triageOverride(options, source, savedCopy);
  const agent = options.agent ?? source.originalAgent;
  const cluster = options.cluster ?? source.originalCluster;
  const overrides: RunOverrides = {
    ...(cluster ? { cluster } : {}),
    ...(agent ? { agent } : {}),
    ...((options.engine ?? source.originalEngine) ? { engine: options.engine ?? source.originalEngine } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(triage ? { triage } : {}),
    ...(options.subjects ? { subjects: options.subjects } : {}),
    ...(options.dryRun ? { dryRun: true } : {}),
    ...(options.pathPrepend?.length ? { pathPrepend: options.pathPrepend } : {}),
    previousInvestigations: false,
  };

  let original: (PromptHash & { parts: PromptParts }) | undefined;
  let originalUnknown: string | undefined;
  if (source.originalPromptFile && source.bundleDir) {
    try {
      original = await readSentPrompt(source.bundleDir);
    } catch (err) {
      originalUnknown = `cannot read the original prompt from ${source.originalPromptFile}: ${(err as Error).message}`;
    }
  } else {
    originalUnknown = `${source.input} has no run bundle with a ${RUN_FILES.promptParts}`;
  }

  const read = await readWorkspace(outDir, { maxBytes: options.maxIncidentBytes });
  if (read.kind !== 'ok') {
    const reason = read.kind === 'missing' ? `${INCIDENT_FILE} is missing` : read.reason;
    throw new ReplayUsageError(
      `the incident copied from ${source.workspaceDir} cannot be replayed: ${reason}`,
    );
  }
  const workspace: Workspace = read.workspace;
  const runId = options.runId ?? replayRunId(source, workspace.incidentText);
  checkRunId(runId);
  const log = deps.log.child({ incidentId: workspace.incident.incidentId, runId, replayOf: source.input });
  await writeFileAtomic(
    path.join(replayDir(outDir), 'source.json'),
    `${JSON.stringify(
      {
        kind: source.kind,
        input: source.input,
        bundle: source.bundleDir,
        originalPromptSha256: original?.sha256,
        runId,
        overrides,
        createdAt: new Date(now()).toISOString(),
      },
      null,
      2,
    )}\n`,
  );
  await deps.audit?.append(triageDir(outDir), {
    type: 'replayed',
    incidentId: workspace.incident.incidentId,
    runId,
    source: source.input,
    sourceKind: source.kind,
    overrides,
  });

  const controller = new AbortController();
  const signal = deps.signal ?? controller.signal;
  const outcome = await deps.executor.run({ workspace, runId, attempt: 1, signal, log, overrides });

  const runDir = runDirOf(outDir, runId);
  const result: ReplayResult = { source, outDir, runId, runDir, overrides, outcome };
  if (original) result.original = { sha256: original.sha256, file: original.file };
  if (originalUnknown) result.originalUnknown = originalUnknown;
  if (await isFile(path.join(runDir, RUN_FILES.promptParts))) {
    const replayed = await readSentPrompt(runDir);
    result.replayed = { sha256: replayed.sha256, file: replayed.file };
    if (original) {
      result.identical = original.sha256 === replayed.sha256;
      const difference = firstDifference(original.parts, replayed.parts);
      if (difference) result.difference = difference;
      if (!result.identical && source.bundleDir) {
        const moved = relocate(original.parts, [
          [source.bundleDir, runDir],
          [source.workspaceDir, outDir],
        ]);
        result.identicalApartFromPaths = firstDifference(moved, replayed.parts) === undefined;
      }
    }
  }
  return result;
}

/** The lines `triage-runner replay` prints. */
export function formatReplay(result: ReplayResult): string {
  const lines = [
    `replayed ${result.source.kind} ${result.source.input}`,
    `into ${result.outDir}`,
    `triage: ${describeTriage(result.overrides.triage)}`,
    `run ${result.runId}: ${result.outcome.status}${result.overrides.dryRun ? ' (dry run: context prepared, agent not launched)' : ''}${result.outcome.reason ? ` — ${result.outcome.reason}` : ''}`,
    `original prompt sha256: ${result.original?.sha256 ?? `unknown (${result.originalUnknown ?? 'no original'})`}`,
    `replayed prompt sha256: ${result.replayed?.sha256 ?? 'none (no prompt was written)'}`,
  ];
  if (result.identical === false && result.identicalApartFromPaths) {
    lines.push(
      'prompt: identical apart from the workspace path (the process engine gives the agent host paths; container engines give /workspace)',
    );
  } else if (result.identical !== undefined) {
    lines.push(
      result.identical
        ? 'prompt: byte-identical'
        : `prompt: DIFFERENT (first difference: ${result.difference ?? 'only in text redacted from the bundle'})`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function describeTriage(triage: RunOverrides['triage']): string {
  if (!triage) return 'as configured';
  if (triage.mode === 'reuse') return `reuse saved output (${triage.logPath})`;
  return triage.mode === 'run' ? 'rerun the triage script' : 'skipped';
}
