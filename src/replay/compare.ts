import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { readRunResult, type RunResult } from '../workspace/run-record.js';
import type { AgentName, EngineName } from '../config/schema.js';
import { writeFileAtomic } from '../util/fs.js';
import {
  chooseOutDir,
  replay,
  ReplayUsageError,
  resolveReplaySource,
  type ReplayDeps,
  type ReplayOptions,
} from './index.js';
import { compactStamp } from '../util/time.js';

// `compare`: the preload comparison (does the triage report help?). Runs one saved incident for every agent × variant (with and
// without the preloaded triage report), each as a replay into its own workspace, and tabulates the results.

export const VARIANTS = ['preload', 'no-preload'] as const;
export type Variant = (typeof VARIANTS)[number];

export interface CompareOptions {
  input: string;
  cwd: string;
  agents: AgentName[];
  variants: Variant[];
  engine?: EngineName;
  model?: string;
  /** Default: `<cwd>/comparisons/<folder>-<UTC timestamp>`. */
  out?: string;
  /** The mandated report sections (config `agent.report_sections`). */
  reportSections: string[];
  minReportBytes: number;
  maxIncidentBytes: number;
  forbiddenRoots?: string[];
}

/** One row of compare.json / compare.md. */
export interface CompareCell {
  agent: AgentName;
  variant: Variant;
  workspace: string;
  runId?: string;
  /** The run's status (result.json), or `error` when the cell could not run at all. */
  status: string;
  exitCode?: number | null;
  durationMs?: number;
  /** From the run's start to the first byte the agent printed (result.json `firstOutputAt`), when recorded. */
  timeToFirstOutputMs?: number;
  /** From the run's start to its first model call (result.json `firstModelCallMs`), when recorded. */
  timeToFirstModelCallMs?: number;
  /** From the run's start to its first tool call: the first investigation turn (result.json `measures`). */
  timeToFirstToolCallMs?: number;
  /** From the run's start to the end of its last model call (result.json `measures`). */
  investigationMs?: number;
  tokens?: { input: number; output: number };
  costUsd?: number;
  sectionsPresent: number;
  sectionsTotal: number;
  missingSections: string[];
  /** Why the cell did not produce a result. */
  error?: string;
  /** Why the run did not succeed (its result.json `error`), when it did not. */
  reason?: string;
}

export interface CompareReport {
  input: string;
  /** Folder holding compare.md, compare.json and one workspace per cell. */
  outDir: string;
  createdAt: string;
  engine?: EngineName;
  agents: AgentName[];
  variants: Variant[];
  cells: CompareCell[];
  /** True when every cell produced a result.json (whatever the agent's own status). */
  complete: boolean;
}

/** Parses `--variants preload,no-preload`; an unknown name is a usage error listing the valid ones. */
export function parseVariants(text: string): Variant[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = names.filter((n) => !(VARIANTS as readonly string[]).includes(n));
  if (bad.length > 0 || names.length === 0) {
    throw new ReplayUsageError(
      `--variants ${JSON.stringify(text)}: unknown ${bad.join(', ') || '(empty)'}; valid: ${VARIANTS.join(', ')}`,
    );
  }
  return [...new Set(names)] as Variant[];
}

/** Runs the matrix cell by cell (sequentially, so cells do not compete for CPU or rate limits). */
export async function compare(options: CompareOptions, deps: ReplayDeps): Promise<CompareReport> {
  const now = deps.now ?? Date.now;
  const source = await resolveReplaySource(path.resolve(options.cwd, options.input));
  const outDir = await chooseOutDir(
    source,
    {
      input: options.input,
      cwd: options.cwd,
      out:
        options.out ??
        path.join('comparisons', `${path.basename(source.workspaceDir)}-${compactStamp(now())}`),
      maxIncidentBytes: options.maxIncidentBytes,
      ...(options.forbiddenRoots ? { forbiddenRoots: options.forbiddenRoots } : {}),
    },
    now(),
  );
  await mkdir(outDir, { recursive: true });

  const cells: CompareCell[] = [];
  for (const agent of options.agents) {
    for (const variant of options.variants) {
      if (deps.signal?.aborted) break;
      cells.push(
        await runCell(options, deps, source.input, path.join(outDir, `${agent}-${variant}`), agent, variant),
      );
    }
  }
  const report: CompareReport = {
    input: source.input,
    outDir,
    createdAt: new Date(now()).toISOString(),
    ...(options.engine ? { engine: options.engine } : {}),
    agents: options.agents,
    variants: options.variants,
    cells,
    complete:
      cells.length === options.agents.length * options.variants.length && cells.every((c) => !c.error),
  };
  await writeFileAtomic(path.join(outDir, 'compare.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFileAtomic(path.join(outDir, 'compare.md'), renderCompareMarkdown(report));
  return report;
}

async function runCell(
  options: CompareOptions,
  deps: ReplayDeps,
  input: string,
  workspace: string,
  agent: AgentName,
  variant: Variant,
): Promise<CompareCell> {
  const total = options.reportSections.length;
  const base = { agent, variant, workspace, sectionsTotal: total };
  const replayOptions: ReplayOptions = {
    input,
    cwd: options.cwd,
    out: workspace,
    agent,
    ...(options.engine ? { engine: options.engine } : {}),
    ...(options.model ? { model: options.model } : {}),
    triage: 'auto',
    skipTriage: variant === 'no-preload',
    maxIncidentBytes: options.maxIncidentBytes,
    ...(options.forbiddenRoots ? { forbiddenRoots: options.forbiddenRoots } : {}),
  };
  let runDir: string;
  let runId: string;
  try {
    const result = await replay(replayOptions, deps);
    runDir = result.runDir;
    runId = result.runId;
  } catch (err) {
    return {
      ...base,
      status: 'error',
      sectionsPresent: 0,
      missingSections: [],
      error: (err as Error).message,
    };
  }
  const read = await readRunResult(runDir);
  if (!read.ok) {
    // One unreadable cell must not lose the rest of the matrix.
    return { ...base, runId, status: 'error', sectionsPresent: 0, missingSections: [], error: read.problem };
  }
  const result = read.value;
  const missing = result.report.missingSections;
  const cell: CompareCell = {
    ...base,
    runId,
    status: result.status,
    sectionsPresent: total - missing.filter((m) => options.reportSections.includes(m)).length,
    missingSections: missing,
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    tokens: result.tokens,
    // Why a cell did not succeed, from the run's own record.
    ...(result.status !== 'succeeded' && result.error ? { reason: result.error } : {}),
  };
  const firstOutput = timeToFirstOutput(result);
  if (firstOutput !== undefined) cell.timeToFirstOutputMs = firstOutput;
  if (typeof result.firstModelCallMs === 'number') cell.timeToFirstModelCallMs = result.firstModelCallMs;
  if (result.measures?.firstToolCallMs !== undefined)
    cell.timeToFirstToolCallMs = result.measures.firstToolCallMs;
  if (result.measures?.investigationMs !== undefined) cell.investigationMs = result.measures.investigationMs;
  if (result.costUsd !== undefined) cell.costUsd = result.costUsd;
  return cell;
}

function timeToFirstOutput(result: RunResult): number | undefined {
  if (typeof result.firstOutputMs === 'number') return result.firstOutputMs;
  if (!result.firstOutputAt || !result.startedAt) return undefined;
  const ms = Date.parse(result.firstOutputAt) - Date.parse(result.startedAt);
  return Number.isFinite(ms) ? ms : undefined;
}

const seconds = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);
const cellText = (text: string) => text.replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');

/** compare.md: one row per cell. */
export function renderCompareMarkdown(report: CompareReport): string {
  const rows = report.cells.map((c) =>
    [
      c.agent,
      c.variant,
      c.error ? `error: ${cellText(c.error)}` : c.reason ? `${c.status}: ${cellText(c.reason)}` : c.status,
      seconds(c.durationMs),
      seconds(c.timeToFirstOutputMs),
      seconds(c.timeToFirstModelCallMs),
      seconds(c.timeToFirstToolCallMs),
      seconds(c.investigationMs),
      c.tokens ? String(c.tokens.input) : '—',
      c.tokens ? String(c.tokens.output) : '—',
      c.costUsd === undefined ? '—' : `$${c.costUsd.toFixed(4)}`,
      `${c.sectionsPresent}/${c.sectionsTotal}`,
      cellText(path.basename(c.workspace)),
    ].join(' | '),
  );
  return [
    `# Comparison: ${cellText(path.basename(report.input))}`,
    '',
    `Input: \`${report.input}\`  `,
    `Created: ${report.createdAt}${report.engine ? `  \nEngine: ${report.engine}` : ''}  `,
    `Variants: preload = the triage report is preloaded; no-preload = triage skipped, incident and permissions only.`,
    '',
    '| agent | variant | status | duration | first output | first model call | first investigation turn | last model call | input tokens | output tokens | cost | report sections | workspace |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r} |`),
    '',
    report.complete ? 'Every cell ran.' : 'Some cells did not run (see status).',
    '',
  ].join('\n');
}
