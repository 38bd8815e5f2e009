import { Option, type Command } from 'commander';
import path from 'node:path';
import { AGENT_NAMES, ENGINE_NAMES, type AgentName, type EngineName } from '../../config/schema.js';
import { compare, parseVariants, renderCompareMarkdown, type Variant } from '../../replay/compare.js';
import { ReplayUsageError } from '../../replay/index.js';
import { CliExit, EXIT, type CliIO } from '../io.js';
import { checkNotifyFlag, notifyRuns } from '../notify-runtime.js';
import { commandPipeline, splitList } from './replay.js';

// `triage-runner compare <saved-incident>`: every agent × preload variant on one saved incident, tabulated.

interface CompareFlags {
  agents: string;
  variants: string;
  engine?: EngineName;
  model?: string;
  out?: string;
  notify?: boolean;
}

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('compare')
    .description(
      'run a saved incident for every agent × variant (preload = triage report preloaded, no-preload = triage skipped) and write compare.md and compare.json; exit 0 when every cell ran (whatever the agents concluded), 1 when a cell could not run',
    )
    .argument('<saved-incident>', 'example, workspace or run bundle to replay')
    .option('--agents <list>', `comma-separated agents (${AGENT_NAMES.join(', ')})`, 'claude,codex')
    .option('--variants <list>', 'comma-separated variants (preload, no-preload)', 'preload,no-preload')
    .addOption(new Option('--engine <engine>', 'where the agents run').choices(ENGINE_NAMES))
    .option('--model <model>', 'model passed to every agent CLI')
    .option(
      '--out <dir>',
      'output folder (default: ./comparisons/<folder>-<UTC timestamp>); must be new or empty',
    )
    .option('--notify', "deliver each cell's result to the configured notify sinks (never done unless asked)")
    .action(async (input: string, opts: CompareFlags, cmd: Command) => {
      done(await runCompare(input, opts, cmd.optsWithGlobals<{ config?: string }>().config, io));
    });
}

export function parseAgents(text: string): AgentName[] {
  const names = splitList(text);
  const bad = names.filter((n) => !(AGENT_NAMES as readonly string[]).includes(n));
  if (bad.length > 0 || names.length === 0) {
    throw new CliExit(
      EXIT.usage,
      `--agents ${JSON.stringify(text)}: unknown ${bad.join(', ') || '(empty)'}; valid: ${AGENT_NAMES.join(', ')}`,
    );
  }
  return [...new Set(names)] as AgentName[];
}

/** Runs the matrix and prints compare.md; resolves to the exit code. */
export async function runCompare(
  input: string,
  opts: CompareFlags,
  file: string | undefined,
  io: CliIO,
): Promise<number> {
  const agents = parseAgents(opts.agents);
  let variants: Variant[];
  try {
    variants = parseVariants(opts.variants);
  } catch (err) {
    throw new CliExit(EXIT.usage, (err as Error).message);
  }
  const pipeline = commandPipeline(io, file, {
    ...(opts.engine ? { engine: opts.engine } : {}),
    ...(opts.model ? { model: opts.model } : {}),
  });
  try {
    if (opts.notify) checkNotifyFlag(pipeline.config, 'compare');
    const report = await compare(
      {
        input,
        cwd: io.cwd,
        agents,
        variants,
        ...(opts.engine ? { engine: opts.engine } : {}),
        ...(opts.model ? { model: opts.model } : {}),
        ...(opts.out ? { out: opts.out } : {}),
        reportSections: pipeline.config.agent.report_sections,
        minReportBytes: pipeline.config.agent.min_report_bytes,
        maxIncidentBytes: pipeline.config.intake.max_incident_bytes,
        forbiddenRoots: [pipeline.config.workspaces_root],
      },
      pipeline.deps,
    );
    io.stdout(renderCompareMarkdown(report));
    io.stdout(`\nwritten: ${path.join(report.outDir, 'compare.md')} and compare.json\n`);
    let delivered = true;
    if (opts.notify)
      delivered = await notifyRuns(
        io,
        pipeline.config,
        pipeline.notify,
        report.cells.flatMap((cell) =>
          cell.runId && cell.status !== 'error'
            ? [
                {
                  workspaceDir: cell.workspace,
                  runId: cell.runId,
                  status: cell.status,
                  ...(cell.error ? { reason: cell.error } : {}),
                  trigger: 'compare' as const,
                  label: `compare ${cell.agent}/${cell.variant} of ${path.basename(report.input)}`,
                },
              ]
            : [],
        ),
      );
    return report.complete && delivered ? EXIT.ok : EXIT.failed;
  } catch (err) {
    if (err instanceof ReplayUsageError) throw new CliExit(EXIT.usage, `compare: ${err.message}`);
    throw err;
  } finally {
    await pipeline.dispose();
  }
}
