import { createHash } from 'node:crypto';
import path from 'node:path';
import {
  INCIDENT_FILE,
  replaySourcePath,
  RUN_FILES,
  runDirOf,
  statePath,
  triageDir,
} from '../workspace/layout.js';
import { writeState, type RunStatus } from '../workspace/state.js';
import type { PromptParts } from '../context/types.js';
import { readWorkspace, type Workspace } from '../workspace/incident.js';
import { writeFileAtomic } from '../util/fs.js';
import type { RunOverrides } from '../run/types.js';
import { newRunId } from '../workspace/run-id.js';
import {
  SAVED_TRIAGE_LOG,
  type ReplaySource,
  ReplayUsageError,
  resolveReplaySource,
  isFile,
} from './source.js';
import { chooseOutDir, copyInputs } from './out-dir.js';
import {
  type PromptHash,
  readSentPrompt,
  relocate,
  firstDifference,
  replayMoves,
  runIdOfBundle,
} from './prompt.js';
import { type ReplayOptions, type ReplayDeps, type ReplayResult } from './options.js';

// `replay`: re-runs a saved incident (a workspace, a run bundle or an example) into a NEW workspace
// through the daemon's own pipeline, and says whether the prompt came out byte-identical.

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

function checkRunId(runId: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(runId)) {
    throw new ReplayUsageError(
      `run id ${JSON.stringify(runId)} is not a safe folder name: use letters, digits, ".", "_" and "-"`,
    );
  }
}

/** The run id of the replayed bundle, if a bundle is replayed. */
const originalRunId = (source: ReplaySource): string | undefined =>
  source.bundleDir ? runIdOfBundle(source.bundleDir) : undefined;

/**
 * A replay's own run id: the one asked for, else a new one like the daemon's. Never the original run's:
 * two runs with one id would confuse the audit trail and the run folders.
 */
export function replayRunId(source: ReplaySource, asked: string | undefined, now: number): string {
  const original = originalRunId(source);
  if (asked !== undefined && asked === original)
    throw new ReplayUsageError(
      `--run-id ${asked} is the id of the run being replayed; a replay gets its own: leave --run-id out for a new one, or give another`,
    );
  return asked ?? newRunId(now);
}

/** Replays one saved incident into a new workspace through `executor.run`; never writes into the original. */
export async function replay(options: ReplayOptions, deps: ReplayDeps): Promise<ReplayResult> {
  const now = deps.now ?? Date.now;
  const source = await resolveReplaySource(path.resolve(options.cwd, options.input));
  const outDir = await chooseOutDir(source, options, now());
  // Usage errors come before anything is written.
  triageOverride(options, source, source.savedTriageLog);
  if (options.runId !== undefined) checkRunId(options.runId);
  const runId = replayRunId(source, options.runId, now());
  const savedCopy = await copyInputs(source, outDir);
  const overrides = overridesOf(options, source, triageOverride(options, source, savedCopy));
  const original = await originalPrompt(source);
  const workspace = await copiedWorkspace(source, outDir, options.maxIncidentBytes);
  const log = deps.log.child({ incidentId: workspace.incident.incidentId, runId, replayOf: source.input });
  await recordReplay(deps, { source, outDir, workspace, runId, overrides, now: now() }, original.prompt);

  const controller = new AbortController();
  const signal = deps.signal ?? controller.signal;
  const outcome = await deps.executor.run({ workspace, runId, attempt: 1, signal, log, overrides });

  await recordState(workspace, runId, outcome.status, now());
  const runDir = runDirOf(outDir, runId);
  const result: ReplayResult = { source, outDir, runId, runDir, overrides, outcome };
  if (original.prompt) result.original = { sha256: original.prompt.sha256, file: original.prompt.file };
  if (original.unknown) result.originalUnknown = original.unknown;
  if (await isFile(path.join(runDir, RUN_FILES.promptParts)))
    comparePrompts(result, original.prompt, await readSentPrompt(runDir));
  return result;
}

type Source = Awaited<ReturnType<typeof resolveReplaySource>>;
type SentPrompt = PromptHash & { parts: PromptParts };

/** The run's overrides: what the options say, else what the original run used. */
function overridesOf(
  options: ReplayOptions,
  source: Source,
  triage: ReturnType<typeof triageOverride>,
): RunOverrides {
  const agent = options.agent ?? source.originalAgent;
  const cluster = options.cluster ?? source.originalCluster;
  const engine = options.engine ?? source.originalEngine;
  return {
    ...(cluster ? { cluster } : {}),
    ...(agent ? { agent } : {}),
    ...(engine ? { engine } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(triage ? { triage } : {}),
    ...(options.subjects ? { subjects: options.subjects } : {}),
    ...(options.dryRun ? { dryRun: true } : {}),
    ...(options.pathPrepend?.length ? { pathPrepend: options.pathPrepend } : {}),
    ...(options.prometheus ? { prometheus: options.prometheus } : {}),
    previousInvestigations: false,
  };
}

/** The prompt the original run sent, or why it is not known. */
async function originalPrompt(source: Source): Promise<{ prompt?: SentPrompt; unknown?: string }> {
  if (!source.originalPromptFile || !source.bundleDir)
    return { unknown: `${source.input} has no run bundle with a ${RUN_FILES.promptParts}` };
  try {
    return { prompt: await readSentPrompt(source.bundleDir) };
  } catch (err) {
    return {
      unknown: `cannot read the original prompt from ${source.originalPromptFile}: ${(err as Error).message}`,
    };
  }
}

/** The incident as copied into the replay folder, validated like a drop. */
async function copiedWorkspace(source: Source, outDir: string, maxBytes: number): Promise<Workspace> {
  const read = await readWorkspace(outDir, { maxBytes });
  if (read.kind === 'ok') return read.workspace;
  const reason = read.kind === 'missing' ? `${INCIDENT_FILE} is missing` : read.reason;
  throw new ReplayUsageError(`the incident copied from ${source.workspaceDir} cannot be replayed: ${reason}`);
}

/** The replay folder's .triage/state.json, as the daemon records a run: status and the tools read it. */
async function recordState(
  workspace: Workspace,
  runId: string,
  status: RunStatus,
  at: number,
): Promise<void> {
  await writeState(statePath(workspace.dir), {
    incidentId: workspace.incident.incidentId,
    state: status === 'succeeded' ? 'succeeded' : status === 'interrupted' ? 'interrupted' : 'failed',
    attempts: 1,
    updatedAt: new Date(at).toISOString(),
    runs: [{ id: runId, status }],
    incidentSha256: createHash('sha256').update(workspace.incidentText).digest('hex'),
  });
}

/** source.json in the replay folder and the `replayed` audit event. */
async function recordReplay(
  deps: ReplayDeps,
  r: {
    source: Source;
    outDir: string;
    workspace: Workspace;
    runId: string;
    overrides: RunOverrides;
    now: number;
  },
  original: SentPrompt | undefined,
): Promise<void> {
  const { source, outDir, runId, overrides } = r;
  await writeFileAtomic(
    replaySourcePath(outDir),
    `${JSON.stringify(
      {
        kind: source.kind,
        input: source.input,
        bundle: source.bundleDir,
        originalPromptSha256: original?.sha256,
        runId,
        overrides,
        createdAt: new Date(r.now).toISOString(),
      },
      null,
      2,
    )}\n`,
  );
  await deps.audit?.append(triageDir(outDir), {
    type: 'replayed',
    incidentId: r.workspace.incident.incidentId,
    runId,
    source: source.input,
    sourceKind: source.kind,
    overrides,
  });
}

/**
 * Whether the replayed prompt is the original, and where they first differ; else whether it is the same
 * apart from the workspace path and the run id (the replay's own), mapped to the replay's.
 */
function comparePrompts(result: ReplayResult, original: SentPrompt | undefined, replayed: SentPrompt): void {
  result.replayed = { sha256: replayed.sha256, file: replayed.file };
  if (!original) return;
  result.identical = original.sha256 === replayed.sha256;
  const difference = firstDifference(original.parts, replayed.parts);
  if (difference) result.difference = difference;
  if (!result.identical && result.source.bundleDir) {
    const moved = relocate(
      original.parts,
      replayMoves(
        { runDir: result.source.bundleDir, workspaceDir: result.source.workspaceDir },
        { runDir: result.runDir, workspaceDir: result.outDir, runId: result.runId },
      ),
    );
    result.identicalApartFromPaths = firstDifference(moved, replayed.parts) === undefined;
  }
}
