import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { RUN_FILES } from '../workspace/layout.js';
import type { Evidence } from '../workspace/run-record.js';
import { readCallLog } from '../kubectl/broker/calls.js';
import { readOutputLog } from '../kubectl/broker/outputs.js';
import { readOwnFile } from '../util/safe-path.js';
import { checkEvidence } from './check.js';

// The evidence check of one finished run, from its bundle: the report, `cluster-calls.jsonl`,
// `cluster-outputs.jsonl` and the triage output (its log and the files it wrote).

/** Triage text read for quoted lines, at most (the log is capped too). */
const MAX_TRIAGE_BYTES = 16 * 1024 * 1024;
const MAX_REPORT_BYTES = 16 * 1024 * 1024;

export interface RunEvidenceInput {
  bundleDir: string;
  reportHostPath: string;
  /** How the run's cluster calls were guarded (result.json `kubectl.guard`). */
  guard?: 'broker' | 'off' | 'unavailable';
  /** Gaps known before the agent ran (an unreachable cluster, a cut triage output). */
  knownGaps?: string[];
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

/** The run's evidence; undefined when there is no report to check. */
export async function runEvidence(input: RunEvidenceInput): Promise<Evidence | undefined> {
  const report = await readOwnFile(input.reportHostPath, MAX_REPORT_BYTES);
  if (report.kind !== 'ok') return undefined;
  const [{ records }, outputs, triage] = await Promise.all([
    readCallLog(path.join(input.bundleDir, RUN_FILES.clusterCalls)),
    readOutputLog(path.join(input.bundleDir, RUN_FILES.clusterOutputs)),
    triageText(input.bundleDir),
  ]);
  const unrecorded =
    input.guard === 'off'
      ? 'kubectl.guard is off'
      : input.guard === 'unavailable'
        ? 'the engine cannot reach a kubectl broker'
        : undefined;
  return checkEvidence({
    report: report.text,
    calls: records,
    outputs,
    ...(triage ? { triageText: triage } : {}),
    ...(unrecorded ? { unrecorded } : {}),
    ...(input.knownGaps?.length ? { knownGaps: input.knownGaps } : {}),
  });
}
