import type { Evidence } from '../workspace/run-record.js';
import { errorMessage } from '../util/errors.js';
import type { TriageSummary } from '../context/types.js';
import type { LaunchedRun } from './stages.js';

// Collect's call into the evidence check (src/evidence/): after the agent, the report against the run's
// recorded cluster calls and outputs; the verdict goes into result.json and the audit trail.

export async function checkRunEvidence(
  run: LaunchedRun,
  reportExists: boolean,
  guard: 'broker' | 'off' | 'unavailable' | undefined,
): Promise<Evidence | undefined> {
  if (!reportExists) return undefined;
  try {
    const { runEvidence } = await import('../evidence/run.js');
    // An adopted run's gaps are the launching daemon's, cluster access included (its manifest).
    const knownGaps =
      run.origin.kind === 'launched'
        ? [...(run.access?.knownGaps ?? []), ...run.origin.triageGaps]
        : (run.origin.knownGaps ?? []);
    const evidence = await runEvidence({
      bundleDir: run.bundle.dir,
      reportHostPath: run.report.hostPath,
      ...(guard ? { guard } : {}),
      ...(knownGaps.length > 0 ? { knownGaps } : {}),
    });
    if (!evidence) return undefined;
    await run.audit('evidence_checked', {
      verdict: evidence.verdict,
      facts: evidence.facts,
      verified: evidence.verified,
      unverified: evidence.unverified.length,
      citedNotRun: evidence.citedNotRun.length,
      excerptsNotFound: evidence.excerptsNotFound.length,
      gaps: evidence.gaps.length,
    });
    run.log.info({ verdict: evidence.verdict, verified: evidence.verified }, 'report evidence checked');
    return evidence;
  } catch (err) {
    run.log.warn({ err: errorMessage(err) }, 'could not check the report against the recorded cluster calls');
    return undefined;
  }
}

/**
 * What the recorded triage output cannot show, known when the run launched: a script that timed out or
 * failed left partial output, and a log over `context.triage_log_cap` was cut, so a line the report
 * quotes from it may be missing from the record although the script printed it.
 */
export function triageGaps(summary: TriageSummary, logCap: number): string[] {
  const gaps: string[] = [];
  if (summary.status === 'timed_out') gaps.push('the triage script timed out: its output is partial');
  else if (summary.status === 'failed')
    gaps.push(
      `the triage script failed (${summary.signal ? `signal ${summary.signal}` : `exit ${summary.exitCode ?? '?'}`}): its output may be partial`,
    );
  if (summary.bytes !== undefined && summary.bytes > logCap)
    gaps.push(
      `the triage output was cut at context.triage_log_cap (${logCap} of ${summary.bytes} bytes recorded)`,
    );
  return gaps;
}
