import type { RunOverrides } from '../run/types.js';
import { type ReplayResult } from './options.js';

// A replay's outcome as `triage-runner replay` prints it.

/** The lines `triage-runner replay` prints. */
export function formatReplay(result: ReplayResult): string {
  const lines = [
    `replayed ${result.source.kind} ${result.source.input}`,
    `into ${result.outDir}`,
    `triage: ${describeTriage(result.overrides.triage)}`,
    `run ${result.runId}: ${result.outcome.status}${result.overrides.dryRun ? ' (dry run: context prepared, agent not launched)' : ''}${result.outcome.reason ? ` — ${result.outcome.reason}` : ''}`,
    `original prompt sha256: ${result.original?.sha256 ?? `unknown (${result.originalUnknown ?? 'no original'})`}`,
    `replayed prompt sha256: ${result.replayed?.sha256 ?? 'none (no prompt was written)'}`,
  ];
  if (result.identical === false && result.identicalApartFromPaths) {
    lines.push(
      'prompt: identical apart from the workspace path and run id (a replay has its own run id; the process engine gives the agent host paths, container engines /workspace)',
    );
  } else if (result.identical !== undefined) {
    lines.push(
      result.identical
        ? 'prompt: byte-identical'
        : `prompt: DIFFERENT (first difference: ${result.difference ?? 'only in text redacted from the bundle'})`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function describeTriage(triage: RunOverrides['triage']): string {
  if (!triage) return 'as configured';
  if (triage.mode === 'reuse') return `reuse saved output (${triage.logPath})`;
  return triage.mode === 'run' ? 'rerun the triage script' : 'skipped';
}
