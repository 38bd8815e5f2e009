import type { Evidence } from '../../audit/run-record.js';
import { errorMessage } from '../../util/errors.js';
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
    const { runEvidence } = await import('../../evidence/run.js');
    const knownGaps = run.access?.knownGaps ?? [];
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
