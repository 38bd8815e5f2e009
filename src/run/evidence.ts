import type { Evidence } from '../workspace/run-record.js';
import { errorMessage } from '../util/errors.js';
import type { TriageSummary } from '../context/types.js';
import { incidentPath } from '../workspace/layout.js';
import type { PipelineEnv } from './env.js';
import { openEvidenceReader } from './evidence-model.js';
import type { RunAccess } from './cluster.js';
import type { LaunchedRun } from './stages.js';

// Collect's call into the evidence check (src/evidence/): after the agent, the report against the run's
// recorded cluster calls and outputs (and the model's second reading when `evidence.verify: model`);
// the verdict goes into result.json and the audit trail.

/** What the access check said when it found the run's cluster unreachable; undefined when it reached it. */
export function unreachableOf(access: RunAccess | undefined): string | undefined {
  if (!access || access.cluster.reachable) return undefined;
  return access.cluster.detail ?? `cluster ${access.cluster.name} cannot be reached`;
}

export async function checkRunEvidence(
  env: PipelineEnv,
  run: LaunchedRun,
  reportExists: boolean,
  guard: 'broker' | 'off' | 'unavailable' | undefined,
): Promise<Evidence | undefined> {
  if (!reportExists) return undefined;
  const reader = await openEvidenceReader(env.config, env.gateway, {
    runId: run.request.runId,
    bundleDir: run.bundle.dir,
    redact: (text) => env.redactor.redact(text),
  }).catch((err: unknown) => {
    run.log.warn({ err: errorMessage(err) }, 'could not open the evidence check model reader');
    return undefined;
  });
  try {
    const { runEvidence } = await import('../evidence/run.js');
    // An adopted run's gaps are the launching daemon's, cluster access included (its manifest).
    const { origin } = run;
    const knownGaps =
      origin.kind === 'launched'
        ? [...(run.access?.knownGaps ?? []), ...origin.triageGaps]
        : (origin.knownGaps ?? []);
    const unreachable = origin.kind === 'launched' ? unreachableOf(run.access) : origin.unreachable;
    const evidence = await runEvidence({
      bundleDir: run.bundle.dir,
      reportHostPath: run.report.hostPath,
      incidentFile: incidentPath(run.request.workspace.dir),
      ...(guard ? { guard } : {}),
      ...(knownGaps.length > 0 ? { knownGaps } : {}),
      ...(unreachable ? { unreachable } : {}),
      ...(reader ? { reader: { ask: reader.ask, maxClaims: env.config.evidence.max_claims } } : {}),
    });
    if (!evidence) return undefined;
    await run.audit('evidence_checked', {
      verdict: evidence.verdict,
      reason: evidence.reason,
      headline: evidence.headline,
      claimsSupported: evidence.claimsSupported,
      claimsTotal: evidence.claimsTotal,
      claims: evidence.claims?.map((c) => ({ kind: c.kind, id: c.id, status: c.status })),
      checks: evidence.checks,
      facts: evidence.facts,
      verified: evidence.verified,
      unverified: evidence.unverified.length,
      citedNotRun: evidence.citedNotRun.length,
      excerptsNotFound: evidence.excerptsNotFound.length,
      gaps: evidence.gaps.length,
    });
    env.metrics?.evidence?.(evidence.verdict);
    run.log.info(
      { verdict: evidence.verdict, supported: evidence.claimsSupported, claims: evidence.claimsTotal },
      'report evidence checked',
    );
    return evidence;
  } catch (err) {
    run.log.warn({ err: errorMessage(err) }, 'could not check the report against the recorded cluster calls');
    return undefined;
  } finally {
    await reader?.close().catch(() => undefined);
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
