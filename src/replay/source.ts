import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { INCIDENT_FILE, incidentPath, RUN_FILES, runsDir, workspaceOfRunDir } from '../workspace/layout.js';
import { readContextRecord, readRunManifest, readRunResult } from '../workspace/run-record.js';
import { AGENT_NAMES, ENGINE_NAMES, type AgentName, type EngineName } from '../config/schema.js';

// What is replayed: a run bundle, an example with saved triage, or a workspace, and what it says of itself.

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

export const isDir = (p: string) =>
  stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
export const isFile = (p: string) =>
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
    if (!(await isFile(incidentPath(workspaceDir)))) {
      throw new ReplayUsageError(
        `run bundle ${dir} belongs to ${workspaceDir}, which has no ${INCIDENT_FILE} to replay`,
      );
    }
    return { kind: 'bundle', input: dir, workspaceDir, ...(await bundleFacts(dir)) };
  }
  if (!(await isFile(incidentPath(dir)))) {
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
  const context = await readContextRecord(bundleDir);
  const agent = manifest.ok ? manifest.value.agent : context.ok ? context.value.agent : undefined;
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
