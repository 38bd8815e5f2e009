import { Option, type Command } from 'commander';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { AuditLog } from '../../audit/log.js';
import { AGENT_NAMES, type AgentName, type Config } from '../../config/schema.js';
import { agentSecrets, resolveSecrets } from '../../config/secrets.js';
import type { BuiltContext } from '../../context/build.js';
import { BootError } from '../../context/disclosure/index.js';
import { SkillsCache } from '../../context/skills-cache.js';
import { createLogger } from '../../log/logger.js';
import { Redactor } from '../../log/redact.js';
import { configuredEndpoints } from '../../prometheus/endpoint.js';
import { ClusterRouteError } from '../../run/cluster.js';
import { createContextPreviewer } from '../../run/pipeline.js';
import { readWorkspace, type Workspace } from '../../workspace/incident.js';
import { flagLayer } from '../config.js';
import { checkedConfig } from '../config-check.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner context <workspace>`: the context a run would be given, built by the run's own
// preparation in a dry run (src/run/preview.ts: the cluster's reachability checked and its permissions
// probed as for a run, no engine, broker or lease, nothing written into the workspace), printed with
// its token table. Paths it prints (the full triage output named in the marker, context.json's logPath)
// are those of a real run's bundle in the workspace, `<run-id>` standing for the run's id: never the
// temporary folder, which is gone when the command ends.

interface ContextOptions {
  agent?: AgentName;
  subject?: string;
  json?: boolean;
  triage?: boolean;
  reuseTriage?: string;
}

/** Stands for the id a real run gets (a timestamp and random suffix). */
const PREVIEW_RUN_ID = '<run-id>';

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('context')
    .description('print the exact prompt that would be sent for a workspace, with a per-section token table')
    .argument('<workspace>', 'incident workspace folder (holds incident.json)')
    .addOption(
      new Option('--agent <name>', 'agent whose placement and safety factor to use').choices(AGENT_NAMES),
    )
    .option(
      '--subject <subjects>',
      'boot.yml subjects to boot, comma-separated (overrides the subjects rules)',
    )
    .option('--json', 'print {prompt: {system, user}, context} as JSON')
    .option('--no-triage', 'do not run the triage script')
    .option('--reuse-triage <file>', 'use a saved triage output file instead of running the script')
    .action(async (workspace: string, opts: ContextOptions, cmd: Command) => {
      done(await runContext(workspace, opts, cmd.optsWithGlobals<{ config?: string }>().config, io));
    });
}

async function runContext(
  workspaceArg: string,
  opts: ContextOptions,
  configFile: string | undefined,
  io: CliIO,
) {
  if (opts.triage === false && opts.reuseTriage) {
    throw new CliExit(EXIT.usage, '--no-triage and --reuse-triage cannot be combined; give one of them');
  }
  // The same check as validate-config: a configuration the daemon would refuse is refused here too.
  const { config } = await checkedConfig(io, configFile, flagLayer([['agent.name', opts.agent]]));
  const { workspace, reuse } = await checkedInputs(workspaceArg, opts, config, io);
  const log = createLogger({
    level: opts.json ? 'error' : config.log.level,
    destination: { write: (l: string) => io.stderr(l) },
  });
  const secrets = resolveSecrets(config, io.env);
  const redactor = new Redactor(secrets.values);
  // The run's own context building, in a dry run: no engine, broker, lease, audit record or write into
  // the workspace (src/run/preview.ts).
  const previewer = createContextPreviewer({
    config,
    log,
    redactor,
    secrets: agentSecrets(config, secrets.values),
    // The alert's preloaded metrics ask the cluster's Prometheus with the daemon's own credentials.
    prometheus: configuredEndpoints(config, secrets.values),
    audit: new AuditLog({ redactor }),
    env: io.env,
    skills: new SkillsCache({ config, log }),
  });
  try {
    const prepared = await previewer
      .preview({
        workspace,
        runId: PREVIEW_RUN_ID,
        log,
        overrides: {
          triage: reuse
            ? { mode: 'reuse', logPath: reuse }
            : opts.triage === false
              ? { mode: 'skip' }
              : { mode: 'run' },
          ...(opts.subject ? { subjects: subjectList(opts.subject) } : {}),
        },
      })
      .catch((err: unknown) => {
        if (err instanceof BootError) throw new CliExit(EXIT.usage, err.message);
        if (err instanceof ClusterRouteError)
          throw new CliExit(EXIT.usage, `workspace ${workspace.dir}: ${err.message}`);
        throw err;
      });
    io.stdout(
      opts.json
        ? `${JSON.stringify({ prompt: prepared.prompt, context: prepared.context }, null, 2)}\n`
        : formatText(prepared),
    );
    return EXIT.ok;
  } finally {
    await previewer.close();
  }
}

/** The workspace (its incident read and checked) and the saved triage output to reuse, or a usage error. */
async function checkedInputs(
  workspaceArg: string,
  opts: ContextOptions,
  config: Config,
  io: CliIO,
): Promise<{ workspace: Workspace; reuse?: string }> {
  const dir = path.resolve(io.cwd, workspaceArg);
  const info = await stat(dir).catch(() => undefined);
  if (!info)
    throw new CliExit(
      EXIT.usage,
      `workspace ${dir} does not exist; give the incident folder that holds incident.json`,
    );
  if (!info.isDirectory())
    throw new CliExit(
      EXIT.usage,
      `workspace ${dir} is not a folder; give the incident folder that holds incident.json`,
    );
  const read = await readWorkspace(dir, { maxBytes: config.intake.max_incident_bytes });
  if (read.kind === 'missing')
    throw new CliExit(EXIT.usage, `workspace ${dir} has no incident.json; give an incident folder`);
  if (read.kind !== 'ok') throw new CliExit(EXIT.usage, `workspace ${dir}: ${read.reason}`);
  let reuse: string | undefined;
  if (opts.reuseTriage) {
    reuse = path.resolve(io.cwd, opts.reuseTriage);
    if (!(await stat(reuse).catch(() => undefined))?.isFile()) {
      throw new CliExit(
        EXIT.usage,
        `--reuse-triage ${reuse} is not a readable file; give a saved triage output (e.g. a run's triage/output.log)`,
      );
    }
  }

  return { workspace: read.workspace, ...(reuse ? { reuse } : {}) };
}

const subjectList = (subjects: string): string[] =>
  subjects
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const pad = (s: string | number, n: number) => String(s).padEnd(n);
const lpad = (s: string | number, n: number) => String(s).padStart(n);

/** The human-readable output: both parts verbatim, then the tables. */
export function formatText(p: BuiltContext): string {
  const c = p.context;
  const lines: string[] = [];
  lines.push('===== system prompt =====', p.prompt.system, '===== user prompt =====', p.prompt.user, '');
  lines.push(`agent ${c.agent}, estimator ${c.estimator} × ${c.safetyFactor}`, '');
  const w = Math.max(7, ...c.sections.map((s) => s.tag.length));
  lines.push(`${pad('section', w)}  ${lpad('tokens', 8)}  ${lpad('original', 8)}  truncated`);
  for (const s of c.sections) {
    lines.push(
      `${pad(s.tag, w)}  ${lpad(s.tokens, 8)}  ${lpad(s.originalTokens, 8)}  ${s.truncated ? 'yes' : 'no'}`,
    );
  }
  const verdict =
    c.overBudgetBy > 0
      ? `OVER by ${c.overBudgetBy}`
      : c.totalTokens > c.budget.warn
        ? 'above warn'
        : 'within';
  lines.push(
    `${pad('total', w)}  ${lpad(c.totalTokens, 8)}  budget ${c.budget.truncate} (warn ${c.budget.warn}): ${verdict}`,
    '',
  );
  lines.push('Level-1 disclosure cost:');
  for (const part of c.disclosure.parts) lines.push(`  ${pad(part.part, 12)} ${lpad(part.tokens, 8)}`);
  lines.push(`  degraded to references: ${c.disclosure.degraded.join(', ') || '(none)'}`);
  lines.push(
    `  persona ${c.disclosure.persona ?? '(none)'}, boot mode ${c.disclosure.bootMode}, subjects ${c.disclosure.subjects.join(', ') || '(none)'}`,
  );
  lines.push(`skills: ${c.skills.map((s) => `${s.source}@${s.commit}`).join(', ') || '(none)'}`);
  const listed = c.disclosure.listedByCli;
  if (listed) {
    lines.push(
      `skills the ${c.agent} CLI lists to the agent itself (not repeated in the prompt): ${listed.length}`,
    );
    for (const s of listed) lines.push(`  ${s.name}: ${s.description}`, `    → ${s.path}`);
  }
  lines.push(`triage: ${c.triage.status}${c.triage.reason ? ` (${c.triage.reason})` : ''}`);
  if (c.incomplete) lines.push(`incomplete: ${c.incompleteReasons.join('; ')}`);
  return `${lines.join('\n')}\n`;
}
