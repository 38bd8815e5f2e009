import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { RUN_FILES } from '../workspace/layout.js';
import type { Evidence } from '../workspace/run-record.js';
import { readCallLog } from '../kubectl/broker/calls.js';
import { readOutputLog } from '../kubectl/broker/outputs.js';
import { readOwnFile } from '../util/safe-path.js';
import { checkClaims, type EvidenceInput } from './check.js';
import { readWithModel, type AskModel } from './model-verify.js';

// The evidence check of one finished run, from its bundle: the report, `cluster-calls.jsonl`,
// `cluster-outputs.jsonl`, the triage output (its log and the files it wrote) and the incident as the
// producer wrote it; then, when a reader is given, the model's second reading.

/** Triage text read for quoted lines, at most (the log is capped too). */
const MAX_TRIAGE_BYTES = 16 * 1024 * 1024;
export const MAX_REPORT_BYTES = 16 * 1024 * 1024;
const MAX_INCIDENT_BYTES = 1024 * 1024;

export interface RunEvidenceInput {
  bundleDir: string;
  reportHostPath: string;
  /** How the run's cluster calls were guarded (result.json `kubectl.guard`). */
  guard?: 'broker' | 'off' | 'unavailable';
  /** Gaps known before the agent ran (an unreachable cluster, a cut triage output). */
  knownGaps?: string[];
  /** What the access check said when it found the cluster unreachable at the run's start. */
  unreachable?: string;
  /** incident.json: quotes of it are from the alert, never cluster evidence. */
  incidentFile?: string;
  /** The second reader (`evidence.verify: model`) and how many claims it reads. */
  reader?: { ask: AskModel; maxClaims: number };
}

async function triageText(bundleDir: string): Promise<string> {
  const dir = path.join(bundleDir, RUN_FILES.triageDir);
  const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  let left = MAX_TRIAGE_BYTES;
  const parts: string[] = [];
  for (const name of names.sort()) {
    if (left <= 0) break;
    const read = await readOwnFile(path.join(dir, name), left);
    if (read.kind !== 'ok') continue;
    parts.push(read.text);
    left -= Buffer.byteLength(read.text);
  }
  return parts.join('\n');
}

/** What the run recorded, as the check takes it (everything but the report). */
export async function recordOf(
  input: Omit<RunEvidenceInput, 'reportHostPath' | 'reader'>,
): Promise<Omit<EvidenceInput, 'report'>> {
  const [{ records }, outputs, triage, incident] = await Promise.all([
    readCallLog(path.join(input.bundleDir, RUN_FILES.clusterCalls)),
    readOutputLog(path.join(input.bundleDir, RUN_FILES.clusterOutputs)),
    triageText(input.bundleDir),
    input.incidentFile ? readOwnFile(input.incidentFile, MAX_INCIDENT_BYTES) : undefined,
  ]);
  const unrecorded =
    input.guard === 'off'
      ? 'kubectl.guard is off'
      : input.guard === 'unavailable'
        ? 'the engine cannot reach a kubectl broker'
        : undefined;
  return {
    calls: records,
    outputs,
    ...(triage ? { triageText: triage } : {}),
    ...(incident?.kind === 'ok' ? { alertText: incident.text } : {}),
    ...(unrecorded ? { unrecorded } : {}),
    ...(input.knownGaps?.length ? { knownGaps: input.knownGaps } : {}),
    ...(input.unreachable ? { unreachable: input.unreachable } : {}),
  };
}

/** The run's evidence; undefined when there is no report to check. */
export async function runEvidence(input: RunEvidenceInput): Promise<Evidence | undefined> {
  const report = await readOwnFile(input.reportHostPath, MAX_REPORT_BYTES);
  if (report.kind !== 'ok') return undefined;
  const { evidence, excerpt } = checkClaims({ report: report.text, ...(await recordOf(input)) });
  if (!input.reader) return evidence;
  return readWithModel(evidence, excerpt, input.reader.ask, input.reader.maxClaims);
}
