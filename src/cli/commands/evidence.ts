import type { Command } from 'commander';
import path from 'node:path';
import type { Evidence } from '../../workspace/run-record.js';
import { EvidenceInputError, evidenceOfFolder } from '../../evidence/offline.js';
import { claimsCount } from '../../evidence/summary.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner evidence <workspace-or-run-folder> [--report FILE] [--json]`: the evidence check of
// any recorded run, offline — its own report or another (an edited one, an older run's, another
// tool's) against what the run recorded. Exit 0 when the report is grounded or partial, 1 when it is
// ungrounded, 2 when the folder or the report cannot be used.

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('evidence')
    .description(
      "check a recorded run's report against the cluster output it cites: claims with their status, the verdict, the gaps, the headline; exit 1 when ungrounded",
    )
    .argument(
      '<workspace-or-run-folder>',
      'an incident workspace (its latest run) or a run folder (<workspace>/.triage/runs/<run-id>)',
    )
    .option('--report <file>', "check this report instead of the run's own")
    .option(
      '--json',
      'print {verdict, headline, claims, gaps} (and reason, claimsSupported, claimsTotal) as JSON',
    )
    .action(async (folder: string, opts: { report?: string; json?: boolean }) => {
      let result: Awaited<ReturnType<typeof evidenceOfFolder>>;
      try {
        result = await evidenceOfFolder(
          path.resolve(io.cwd, folder),
          opts.report === undefined ? undefined : path.resolve(io.cwd, opts.report),
        );
      } catch (err) {
        if (err instanceof EvidenceInputError) throw new CliExit(EXIT.usage, `evidence: ${err.message}`);
        throw err;
      }
      const { evidence } = result;
      io.stdout(
        opts.json ? `${JSON.stringify(jsonOf(evidence), null, 2)}\n` : textOf(evidence, result.reportPath),
      );
      done(evidence.verdict === 'ungrounded' ? EXIT.failed : EXIT.ok);
    });
}

function jsonOf(evidence: Evidence) {
  return {
    verdict: evidence.verdict,
    headline: evidence.headline ?? null,
    claims: evidence.claims ?? [],
    gaps: evidence.gaps,
    reason: evidence.reason ?? null,
    claimsSupported: evidence.claimsSupported ?? null,
    claimsTotal: evidence.claimsTotal ?? null,
  };
}

const STATUS_WIDTH = 'contradicted'.length;

function textOf(evidence: Evidence, reportPath: string): string {
  const lines = [
    `${reportPath}: ${evidence.verdict}${claimsCount(evidence) ? ` — ${claimsCount(evidence)}` : ''}`,
    `headline: ${evidence.headline ?? '(none)'}`,
    ...(evidence.reason ? [`why: ${evidence.reason}`] : []),
    '',
    'claims:',
  ];
  for (const claim of evidence.claims ?? []) {
    const label =
      claim.kind === 'headline' ? 'headline' : claim.kind === 'quote' ? 'quote' : (claim.id ?? claim.kind);
    lines.push(`  ${claim.status.padEnd(STATUS_WIDTH)}  ${label}: ${claim.text}`);
    if (claim.source) lines.push(`  ${''.padEnd(STATUS_WIDTH)}    cites: ${claim.source}`);
    lines.push(`  ${''.padEnd(STATUS_WIDTH)}    ${claim.why}`);
  }
  const omitted = (evidence.claimsTotal ?? 0) - (evidence.claims?.length ?? 0);
  if (omitted > 0) lines.push(`  …and ${omitted} more`);
  if (evidence.gaps.length > 0) lines.push('', 'gaps:', ...evidence.gaps.map((g) => `  - ${g}`));
  return `${lines.join('\n')}\n`;
}
