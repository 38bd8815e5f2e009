import type { Evidence } from '../../audit/run-record.js';
import { errorMessage } from '../../util/errors.js';
import type { RunContext } from './context.js';

// The run pipeline's call into the evidence check (src/evidence/): after the agent, the report against
// the run's recorded cluster calls; the verdict goes into result.json and the audit trail.

export async function checkRunEvidence(
  ctx: RunContext,
  reportHostPath: string,
  reportExists: boolean,
  guard: 'broker' | 'off' | 'unavailable' | undefined,
): Promise<Evidence | undefined> {
  if (!ctx.bundle || !reportExists) return undefined;
  try {
    const { runEvidence } = await import('../../evidence/run.js');
    const evidence = await runEvidence({
      bundleDir: ctx.bundle.dir,
      reportHostPath,
      ...(guard ? { guard } : {}),
      ...(ctx.knownGaps?.length ? { knownGaps: ctx.knownGaps } : {}),
    });
    if (!evidence) return undefined;
    await ctx.audit('evidence_checked', {
      verdict: evidence.verdict,
      facts: evidence.facts,
      verified: evidence.verified,
      unverified: evidence.unverified.length,
      citedNotRun: evidence.citedNotRun.length,
      excerptsNotFound: evidence.excerptsNotFound.length,
      gaps: evidence.gaps.length,
    });
    ctx.log.info({ verdict: evidence.verdict, verified: evidence.verified }, 'report evidence checked');
    return evidence;
  } catch (err) {
    ctx.log.warn({ err: errorMessage(err) }, 'could not check the report against the recorded cluster calls');
    return undefined;
  }
}
