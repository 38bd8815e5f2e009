import { newRunToken, tokenDigest } from '../kubectl/broker/tokens.js';
import type { RunFilesAccess, FilesMount } from '../engines/kubernetes/files/types.js';
import type { Engine, Mount } from '../engines/types.js';
import type { RunBundle } from '../workspace/bundle.js';
import { REPORT_REL, TRIAGE_DIR } from '../workspace/layout.js';
import { returnedKind } from '../workspace/returned.js';
import {
  readReturnedRecord,
  writeReturnedRecord,
  type ReturnedRecord,
  type RunResult,
} from '../workspace/run-record.js';
import type { PipelineEnv } from './env.js';
import { writableMounts } from './layout.js';
import { tokenLifetimeMs } from './pod-token.js';
import { AGENT_READ_DIRS } from './share-run.js';

// An agent pod's files, joined to its run (engines whose capabilities say `copiesMounts`): a token of the
// run's own, which the engine hands the pod in secret; the run's mounts opened to it on the daemon's pod
// port (what the agent reads of the workspace and its run folder, and nothing of the daemon's records),
// its stdin too; what its agent writes taken back into output/ and agent-notes/ while it runs, each
// upload recorded in returned.json; and, when the run is collected, what came back and what was lost.

export type ReturnedSummary = NonNullable<RunResult['returned']>;

export interface RunFiles {
  /** The token the engine hands the pod; absent for an adopted run (its pod holds it already). */
  token?: string;
  /** Its hash, for the run's manifest (a daemon adopting the run registers it). */
  tokenSha256: string;
  /** Opens the run's access on the pod port (the listener too); call right before the agent starts. */
  start(spec: { mounts: readonly Mount[]; stdin: string }): Promise<void>;
  /** Takes no more uploads; what came back and what was lost, for result.json (undefined before start). */
  finish(exitError?: string): Promise<ReturnedSummary | undefined>;
  /** The token opens nothing any more (idempotent). */
  stop(): void;
}

interface FilesRun {
  engine: Engine;
  bundle: RunBundle;
  runId: string;
  workspaceDir: string;
}

/** The run's mounts as the route copies them: of the workspace and the run folder only what the agent reads. */
function filesMounts(run: FilesRun, mounts: readonly Mount[]): FilesMount[] {
  return mounts.map((m) => {
    if (m.source === run.workspaceDir) return { ...m, except: [TRIAGE_DIR] };
    if (m.source === run.bundle.dir) return { ...m, only: AGENT_READ_DIRS };
    return { ...m };
  });
}

function openFiles(
  env: PipelineEnv,
  run: FilesRun,
  token: { raw?: string; sha256: string },
  served: (spec: { mounts: readonly Mount[]; stdin: string }) => {
    mounts: FilesMount[];
    stdin?: string;
    serveInputs: boolean;
    returned?: ReturnedRecord;
  },
): RunFiles {
  const pod = env.podBroker;
  let access: RunFilesAccess | undefined;
  let stopped = false;
  return {
    ...(token.raw ? { token: token.raw } : {}),
    tokenSha256: token.sha256,
    start: async (spec) => {
      if (!pod)
        throw new Error(
          "an agent pod gets its run's files through the daemon: set kubernetes.broker.port and kubernetes.broker.url",
        );
      if (access || stopped) return;
      const route = await pod.files();
      const grant = served(spec);
      access = route.open(
        token.sha256,
        {
          runId: run.runId,
          workspaceDir: run.workspaceDir,
          ...grant,
          onReturned: (record) => writeReturnedRecord(run.bundle, record),
        },
        env.now().getTime() + tokenLifetimeMs(env.config),
      );
    },
    finish: async (exitError) => {
      if (!access) return undefined;
      return returnedSummary(await access.close(), run.runId, exitError);
    },
    stop: () => {
      stopped = true;
      access?.revoke();
    },
  };
}

/** A launched run's files, when its engine copies mounts: a fresh token, nothing opened yet. */
export function planRunFiles(env: PipelineEnv, run: FilesRun): RunFiles | undefined {
  if (run.engine.capabilities.copiesMounts !== true) return undefined;
  const raw = newRunToken();
  // The token reaches only the engine; should it ever be printed, it is redacted.
  env.redactor.add('run files token', raw);
  return openFiles(env, run, { raw, sha256: tokenDigest(raw) }, (spec) => ({
    mounts: filesMounts(run, spec.mounts),
    stdin: spec.stdin,
    serveInputs: true,
  }));
}

/**
 * An adopted run's files: its pod's token known by the hash its manifest kept, what came back so far
 * from returned.json, and only what the pod returns taken (the launching daemon's stdin died with it).
 */
export async function resumeRunFiles(
  env: PipelineEnv,
  run: FilesRun,
  tokenSha256: string | undefined,
): Promise<RunFiles | undefined> {
  if (run.engine.capabilities.copiesMounts !== true || !tokenSha256) return undefined;
  const read = await readReturnedRecord(run.bundle.dir);
  const returned = read.ok ? read.value : undefined;
  const files = openFiles(env, run, { sha256: tokenSha256 }, () => ({
    mounts: writableMounts(run.workspaceDir, run.bundle.dir, run.runId),
    serveInputs: false,
    ...(returned ? { returned } : {}),
  }));
  await files.start({ mounts: [], stdin: '' });
  return files;
}

/** What result.json says of what the pod returned: whether its last upload came, and what was lost. */
export function returnedSummary(record: ReturnedRecord, runId: string, exitError?: string): ReturnedSummary {
  const files = Object.values(record.files);
  const report = record.files[REPORT_REL] !== undefined;
  const lost = new Set<ReturnedSummary['lost'][number]>();
  const reasons: string[] = [];
  if (!record.final) {
    if (!report) lost.add('report');
    const why = exitError ? ` (${exitError})` : '';
    const since = record.lastAt
      ? `after its last upload at ${record.lastAt}`
      : 'since it started (it returned nothing)';
    reasons.push(
      `the agent's pod ended without its last upload${why}: ${report ? 'the report is the last one it returned' : 'its report never reached the daemon'}, and what it wrote ${since} is lost`,
    );
  }
  for (const r of record.refused) {
    lost.add(returnedKind(r.path, runId));
    reasons.push(`${r.path}: ${r.why}`);
  }
  return {
    final: record.final,
    uploads: record.uploads,
    files: files.length,
    bytes: files.reduce((sum, f) => sum + f.bytes, 0),
    ...(record.lastAt ? { lastAt: record.lastAt } : {}),
    report,
    lost: [...lost],
    ...(reasons.length > 0 ? { reason: reasons.join('; ') } : {}),
  };
}
