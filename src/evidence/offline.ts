import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  incidentPath,
  reportPath as workspaceReportPath,
  RUN_FILES,
  RUNS_RELATIVE,
  runsDir,
  workspaceOfRunDir,
} from '../workspace/layout.js';
import { readRunManifest, readRunResult, type Evidence } from '../workspace/run-record.js';
import { readOwnFile } from '../util/safe-path.js';
import { checkClaims } from './check.js';
import { MAX_REPORT_BYTES, recordOf } from './run.js';

// The evidence check of any recorded run, offline (`triage-runner evidence`): a workspace (its latest
// run) or a run folder, against its own report or any other (an edited report, another tool's), with
// what the run recorded — its calls, their outputs, the triage output, incident.json — and what the
// daemon knew when it ran (result.json: the guard, the access check; manifest.json: the known gaps).

/** The folder or the report cannot be used: what is wrong and what to give instead. */
export class EvidenceInputError extends Error {
  override name = 'EvidenceInputError';
}

export interface OfflineEvidence {
  evidence: Evidence;
  bundleDir: string;
  reportPath: string;
}

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

/** The newest run folder of a workspace that recorded cluster calls or a result (run ids sort by time). */
async function latestRun(workspace: string): Promise<string | undefined> {
  const ids = await readdir(runsDir(workspace)).catch(() => [] as string[]);
  for (const id of ids.sort().reverse()) {
    const dir = path.join(runsDir(workspace), id);
    if (
      (await isFile(path.join(dir, RUN_FILES.clusterCalls))) ||
      (await isFile(path.join(dir, RUN_FILES.result)))
    )
      return dir;
  }
  return undefined;
}

async function runFolderOf(input: string): Promise<{ bundleDir: string; workspace: string }> {
  const dir = path.resolve(input);
  if (!(await isDir(dir)))
    throw new EvidenceInputError(
      `${dir} is not a folder: give an incident workspace or a run folder (<workspace>/.triage/runs/<run-id>)`,
    );
  const workspace = workspaceOfRunDir(dir);
  if (workspace !== undefined) return { bundleDir: dir, workspace };
  const latest = await latestRun(dir);
  if (!latest)
    throw new EvidenceInputError(
      `${dir} holds no recorded run (no ${RUNS_RELATIVE}/<run-id> with ${RUN_FILES.clusterCalls} or ${RUN_FILES.result}): give a workspace the daemon ran, or a run folder`,
    );
  return { bundleDir: latest, workspace: dir };
}

/** Checks the report of a recorded run (or `reportFile`) against what the run recorded. */
export async function evidenceOfFolder(input: string, reportFile?: string): Promise<OfflineEvidence> {
  const { bundleDir, workspace } = await runFolderOf(input);
  const [result, manifest] = await Promise.all([readRunResult(bundleDir), readRunManifest(bundleDir)]);
  const reportPath = reportFile
    ? path.resolve(reportFile)
    : manifest.ok && (await isFile(manifest.value.report.hostPath))
      ? manifest.value.report.hostPath
      : workspaceReportPath(workspace);
  const report = await readOwnFile(reportPath, MAX_REPORT_BYTES);
  if (report.kind !== 'ok')
    throw new EvidenceInputError(
      `no report to check at ${reportPath} (${report.kind}): give one with --report FILE`,
    );
  const cluster = result.ok ? result.value.cluster : undefined;
  const unreachable =
    cluster?.reachable === false
      ? (cluster.detail ?? cluster.unreachable ?? `cluster ${cluster.name} could not be reached`)
      : manifest.ok
        ? manifest.value.unreachable
        : undefined;
  const guard = result.ok ? result.value.kubectl?.guard : undefined;
  const record = await recordOf({
    bundleDir,
    incidentFile: incidentPath(workspace),
    ...(guard ? { guard } : {}),
    ...(manifest.ok && manifest.value.knownGaps ? { knownGaps: manifest.value.knownGaps } : {}),
    ...(unreachable ? { unreachable } : {}),
  });
  const { evidence } = checkClaims({ report: report.text, ...record });
  return { evidence, bundleDir, reportPath };
}
