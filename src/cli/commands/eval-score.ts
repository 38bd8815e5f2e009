import path from 'node:path';
import { EvalUsageError } from '../../eval/cases/load.js';
import { readCallsFile, scoreReportFile, type OfflineScore } from '../../eval/score/offline.js';
import { commandConfig } from '../config.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner eval score <case> <report> [--calls FILE] [--json]`: one report scored against one
// case's answer key, offline. Exit 0 when it passes, 1 when it does not, 2 for a case, report or call
// log that cannot be used.

export interface ScoreFlags {
  calls?: string;
  json?: boolean;
}

export async function runScore(
  caseDir: string,
  report: string,
  opts: ScoreFlags,
  file: string | undefined,
  io: CliIO,
): Promise<number> {
  const { config } = commandConfig(io, file);
  let result: OfflineScore;
  try {
    const calls =
      opts.calls === undefined ? undefined : await readCallsFile(path.resolve(io.cwd, opts.calls));
    result = await scoreReportFile({
      caseDir: path.resolve(io.cwd, caseDir),
      reportFile: path.resolve(io.cwd, report),
      reportSections: config.agent.report_sections,
      ...(calls ? { calls } : {}),
    });
  } catch (err) {
    if (err instanceof EvalUsageError) throw new CliExit(EXIT.usage, `eval score: ${err.message}`);
    throw err;
  }
  io.stdout(opts.json ? `${JSON.stringify(result, null, 2)}\n` : textOf(result));
  return result.score.pass ? EXIT.ok : EXIT.failed;
}

const found = (items: { id: string; found: boolean }[]) =>
  items.length === 0 ? '(none)' : items.map((i) => `${i.found ? '+' : '-'}${i.id}`).join(' ');

function textOf({ case: name, report, score: s }: OfflineScore): string {
  const verdict = s.pass ? 'pass' : s.wrong ? 'fail (wrong)' : 'fail';
  const lines = [
    `${report} against ${name}: score ${s.score.toFixed(3)}, ${verdict}${s.confidence ? `, confidence ${s.confidence}` : ''}${s.confidentWrong ? ' (confident and wrong)' : ''}`,
    `  root cause: ${found(s.rootCause.entities)} (entities ${s.rootCause.entityScore.toFixed(2)}${s.rootCause.wrong.length > 0 ? `, also blames ${s.rootCause.wrong.join(', ')}` : ''})`,
    `  cause:      ${found(s.rootCause.cause)} (${s.rootCause.causeScore.toFixed(2)})`,
    `  facts:      ${found(s.facts)} (${s.factsScore.toFixed(2)})`,
    `  sections:   ${s.sections.present}/${s.sections.total}${s.sections.missing.length > 0 ? ` (missing ${s.sections.missing.join(', ')})` : ''}`,
  ];
  if (s.tokens)
    lines.push(
      `  planted tokens quoted: ${s.tokens.quoted}${s.tokens.checked ? `, ${s.tokens.unreturned.length} that no call returned` : ' (not checked: give the run with --calls)'}`,
    );
  if (s.reasons.length > 0) lines.push('  why:', ...s.reasons.map((r) => `    - ${r}`));
  return `${lines.join('\n')}\n`;
}
