import { Option, type Command } from 'commander';
import path from 'node:path';
import { AGENTS } from '../../agents/index.js';
import { ENGINE_PLACEMENT } from '../../engines/index.js';
import { resolveSecrets } from '../../config/secrets.js';
import { ENGINE_NAMES, type AgentName, type EngineName } from '../../config/schema.js';
import { resolveCommand } from '../../util/process.js';
import { parseVariants, type Variant } from '../../replay/compare.js';
import { ReplayUsageError } from '../../replay/index.js';
import { EvalUsageError } from '../../eval/cases/load.js';
import { createJudge } from '../../eval/llm-judge.js';
import { promoteInvestigation, PromoteError } from '../../eval/promote.js';
import { runEval, type EvalDeps } from '../../eval/run.js';
import { renderScorecardMarkdown } from '../../eval/scorecard.js';
import { Redactor } from '../../log/redact.js';
import { commandConfig } from '../config.js';
import { CliExit, EXIT, type CliIO } from '../io.js';
import { parseAgents } from './compare.js';
import { runScore, type ScoreFlags } from './eval-score.js';
import { commandPipeline, splitList } from './replay.js';

// `triage-runner eval <suite-or-case>`: scored eval cases on frozen clusters, per agent × model × variant.

interface EvalFlags {
  agents?: string;
  models?: string;
  variants: string;
  repeat: string;
  out?: string;
  judge?: boolean;
  minScore?: string;
  engine?: EngineName;
}

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  const evalCommand = program
    .command('eval')
    .description(
      'run scored eval cases (a case folder, or a folder of cases such as examples/evals) on their frozen clusters for every agent × model × variant × repeat, through the replay pipeline; writes scorecard.md and scorecard.json; exit 1 when a cell could not run or a configuration scores below --min-score',
    )
    .argument('<suite-or-case>', 'an eval case folder or a folder of cases')
    .option('--agents <list>', 'comma-separated agents (default: agent.name)')
    .option('--models <list>', 'comma-separated models passed to the CLI (default: agent.model)')
    .option(
      '--variants <list>',
      'preload (triage script run against the frozen cluster) and/or no-preload',
      'preload',
    )
    .option('--repeat <n>', 'runs per cell, for the spread of scores', '1')
    .option('--out <dir>', 'output folder (default: ./evals/<suite>-<UTC timestamp>)')
    .option('--judge', 'also grade each report with the LLM judge (eval.judge)')
    .option('--min-score <x>', 'exit 1 when a configuration’s mean score is below x (0–1)')
    .addOption(new Option('--engine <engine>', 'where the agents run').choices(ENGINE_NAMES))
    .action(async (input: string, opts: EvalFlags, cmd: Command) => {
      done(await runEvalCommand(input, opts, cmd.optsWithGlobals<{ config?: string }>().config, io));
    })
    // `eval` and `eval promote` both take --out: without this, `eval` took every --out of the command
    // line, wherever it stood, and `promote` never saw it. Now options after `promote` are its own.
    .enablePositionalOptions();
  evalCommand
    .command('promote')
    .description(
      "turn a finished investigation that responders graded into an eval case: its incident, its recorded kubectl calls and outputs as the frozen cluster (answering only what was recorded), the responder's cause as the answer key, redacted",
    )
    .argument('<workspace>', 'the incident folder of a finished investigation with feedback')
    .option('--out <dir>', 'the case folder to write (default: ./evals/cases/<workspace folder>)')
    .option(
      '--entity <kind/name...>',
      "a true cause (repeatable; default: the objects the run saw that the responder's cause names)",
    )
    .action(async (workspace: string, opts: PromoteFlags, cmd: Command) => {
      // `eval --out DIR promote <workspace>`: the --out given before `promote` is the parent's.
      const out = opts.out ?? evalCommand.opts<EvalFlags>().out;
      done(
        await runPromote(
          workspace,
          { ...opts, ...(out !== undefined ? { out } : {}) },
          cmd.optsWithGlobals<{ config?: string }>().config,
          io,
        ),
      );
    });
  evalCommand
    .command('score')
    .description(
      "score a report against an eval case's answer key without running an agent, offline: the score, pass or not, wrong or not, and why; exit 1 when it does not pass",
    )
    .argument('<case>', 'an eval case folder (incident.json, expected.yaml, cluster/)')
    .argument('<report>', 'the report to score (markdown)')
    .option(
      '--calls <file>',
      "the run's kubectl-calls.jsonl: its forbidden calls count, and the case's planted tokens the report quotes are checked against what they returned",
    )
    .option('--json', 'print {case, report, score} as JSON (score as in score.json)')
    .action(async (evalCase: string, report: string, opts: ScoreFlags, cmd: Command) => {
      done(await runScore(evalCase, report, opts, cmd.optsWithGlobals<{ config?: string }>().config, io));
    });
}

interface PromoteFlags {
  out?: string;
  entity?: string[];
}

export async function runPromote(
  workspace: string,
  opts: PromoteFlags,
  file: string | undefined,
  io: CliIO,
): Promise<number> {
  const { config } = commandConfig(io, file);
  const dir = path.resolve(io.cwd, workspace);
  const out = path.resolve(io.cwd, opts.out ?? path.join('evals', 'cases', path.basename(dir)));
  for (const e of opts.entity ?? [])
    if (!/^[a-z0-9.-]+\/[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(e))
      throw new CliExit(
        EXIT.usage,
        `--entity ${JSON.stringify(e)}: expected kind/name, e.g. secret/payments-db`,
      );
  const redactor = new Redactor(resolveSecrets(config, io.env).values);
  try {
    const promoted = await promoteInvestigation(dir, {
      out,
      redactor,
      ...(opts.entity?.length ? { entities: opts.entity } : {}),
    });
    io.stdout(
      `${promoted.dir}: a case with ${promoted.commands} recorded kubectl answers${promoted.promql > 0 ? ` and ${promoted.promql} Prometheus answers` : ''}; true cause ${promoted.entities.join(', ')}\n` +
        promoted.skipped.map((s) => `  left out ${s.command}: ${s.why}\n`).join('') +
        `Run it offline: triage-runner eval ${path.relative(io.cwd, promoted.dir) || '.'}\n`,
    );
    return EXIT.ok;
  } catch (err) {
    if (err instanceof PromoteError) throw new CliExit(EXIT.failed, `eval promote: ${err.message}`);
    throw err;
  }
}

function number(flag: string, text: string, min: number, max: number, integer: boolean): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw new CliExit(
      EXIT.usage,
      `${flag} ${JSON.stringify(text)}: expected ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`,
    );
  }
  return n;
}

export async function runEvalCommand(
  input: string,
  opts: EvalFlags,
  file: string | undefined,
  io: CliIO,
): Promise<number> {
  const repeat = number('--repeat', opts.repeat, 1, 100, true);
  const minScore =
    opts.minScore === undefined ? undefined : number('--min-score', opts.minScore, 0, 1, false);
  let variants: Variant[];
  try {
    variants = parseVariants(opts.variants);
  } catch (err) {
    throw new CliExit(EXIT.usage, (err as Error).message);
  }
  const models = opts.models === undefined ? [undefined] : splitList(opts.models);
  if (models.length === 0) throw new CliExit(EXIT.usage, '--models: give at least one model name');
  const pipeline = commandPipeline(io, file, opts.engine ? { engine: opts.engine } : {});
  try {
    const { config } = pipeline;
    const agents = parseAgents(opts.agents ?? config.agent.name);
    const deps: EvalDeps = { ...pipeline.deps };
    const engine = opts.engine ?? config.engine;
    if (opts.judge) {
      try {
        deps.judge = createJudge({ config, secrets: resolveSecrets(config, io.env).values, env: io.env });
      } catch (err) {
        throw new CliExit(EXIT.usage, `eval: ${(err as Error).message}`);
      }
    }
    const scorecard = await runEval(
      {
        input,
        cwd: io.cwd,
        agents,
        models,
        variants,
        repeat,
        ...(opts.out ? { out: opts.out } : {}),
        ...(opts.engine ? { engine: opts.engine } : {}),
        ...(config.agent.model ? { defaultModel: config.agent.model } : {}),
        reportSections: config.agent.report_sections,
        maxIncidentBytes: config.intake.max_incident_bytes,
        forbiddenRoots: [config.workspaces_root],
        // An agent on the daemon's host (the process engine) needs its CLI on PATH; without it no cell runs.
        ...(ENGINE_PLACEMENT[engine] === 'host'
          ? {
              cannotRun: async (agent: AgentName) => {
                const command = agent === config.agent.name ? (config.agent.command ?? agent) : agent;
                if (await resolveCommand(command, io.env.PATH)) return undefined;
                return `agent CLI ${command} is not on PATH: install it with \`npm install -g ${AGENTS[agent].npmPackage ?? command}\`, or set agent.command to its path`;
              },
            }
          : {}),
        ...(minScore !== undefined ? { minScore } : {}),
      },
      deps,
    );
    io.stdout(renderScorecardMarkdown(scorecard));
    io.stdout(`\nwritten: ${path.join(scorecard.outDir, 'scorecard.md')} and scorecard.json\n`);
    return scorecard.complete && scorecard.belowMinScore.length === 0 ? EXIT.ok : EXIT.failed;
  } catch (err) {
    if (err instanceof EvalUsageError || err instanceof ReplayUsageError)
      throw new CliExit(EXIT.usage, `eval: ${err.message}`);
    throw err;
  } finally {
    await pipeline.dispose();
  }
}
