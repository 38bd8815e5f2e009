import { Option, type Command } from 'commander';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { getAgent } from '../../agents/index.js';
import { RunBundle } from '../../audit/bundle.js';
import { runDirOf } from '../../shared/triage-paths.js';
import { kubeconfigValue, writeContextFile } from '../../clusters/access.js';
import { clusterRegistry, type ClusterEntry } from '../../clusters/registry.js';
import { AGENT_NAMES, type AgentName, type Config } from '../../config/schema.js';
import { resolveSecrets } from '../../config/secrets.js';
import { BootError } from '../../context/disclosure/index.js';
import { buildContext, type BuiltContext } from '../../context/build.js';
import { SkillsCache } from '../../context/skills-cache.js';
import type { AlertMetrics, SkillsSnapshot } from '../../context/types.js';
import { preloadAlertMetrics, type AlertMetricsInput } from '../../daemon/run/alert-metrics.js';
import { runLayout } from '../../daemon/run/layout.js';
import { daemonPromqlCall } from '../../daemon/run/prometheus.js';
import { loadToolPolicy } from '../../kubectl/policy/policy.js';
import { resolveEndpoints } from '../../prometheus/endpoint.js';
import { limitsOf } from '../../prometheus/tool.js';
import { ENGINE_PLACEMENT } from '../../engines/index.js';
import { readWorkspace } from '../../intake/read.js';
import { createLogger } from '../../log/logger.js';
import { Redactor } from '../../log/redact.js';
import { flagLayer } from '../config.js';
import { checkedConfig } from '../config-check.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner context <workspace>`: prepares the context exactly as a run would (same
// buildContext, a temporary bundle, nothing written into the workspace) and prints the prompt and
// its token table. Paths it prints (the full triage output named in the marker, context.json's
// logPath) are those of a real run's bundle in the workspace, `<run-id>` standing for the run's id:
// never the temporary folder, which is gone when the command ends.

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
  // The triage script previews against the incident's own cluster, as a run would.
  const route = clusterRegistry(config).resolveCluster(read.workspace.incident.cluster);
  if ('rejected' in route) throw new CliExit(EXIT.usage, `workspace ${dir}: ${route.rejected}`);
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

  const agent = config.agent.name;
  const log = createLogger({
    level: opts.json ? 'error' : config.log.level,
    destination: { write: (l: string) => io.stderr(l) },
  });
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'triage-runner-context-'));
  const cache = new SkillsCache({ config, log });
  let skills: SkillsSnapshot | undefined;
  try {
    skills = await cache.acquire();
    const bundle = await RunBundle.create(tmp, 'context-preview', new Redactor());
    await writeContextFile(route.entry, bundle.dir);
    const kubeconfig = kubeconfigValue(route.entry, bundle.dir, io.env.HOME);
    const runDir = runDirOf(dir, PREVIEW_RUN_ID);
    const adapter = getAgent(agent);
    // The same layout a run gets: container paths for docker/kubernetes, host paths for process.
    const layout = runLayout({
      config,
      placement: ENGINE_PLACEMENT[config.engine],
      workspaceDir: dir,
      runId: PREVIEW_RUN_ID,
      bundleDir: runDir,
      adapter,
    });
    // The preview writes into a temporary bundle; what the triage script prints of it reads as the
    // folder a real run would use.
    const view = {
      ...layout.view,
      hostPaths: [{ host: bundle.dir, agent: layout.view.runDir }, ...layout.view.hostPaths],
    };
    // The alert's expression is evaluated as a run's triage step would (a preview records nothing).
    const alertMetrics =
      reuse || opts.triage === false
        ? undefined
        : await previewAlertMetrics(config, io.env, route.entry, {
            workspace: read.workspace,
            bundle,
            runDir: layout.view.runDir,
          });
    const prepared = await buildContext({
      config,
      workspace: read.workspace,
      ...(alertMetrics ? { alertMetrics: Promise.resolve(alertMetrics) } : {}),
      agent,
      placement: adapter.placement,
      view,
      bundle,
      skills,
      log,
      reportedRunDir: runDir,
      cluster: { ...(kubeconfig ? { kubeconfig } : {}) },
      previousRoot: config.workspaces_root,
      triage: reuse
        ? { mode: 'reuse', logPath: reuse }
        : opts.triage === false
          ? { mode: 'skip' }
          : { mode: 'run' },
      ...(opts.subject
        ? {
            subjects: opts.subject
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          }
        : {}),
      ...(config.agent.model ? { model: config.agent.model } : {}),
    }).catch((err: unknown) => {
      if (err instanceof BootError) throw new CliExit(EXIT.usage, err.message);
      throw err;
    });
    io.stdout(
      opts.json
        ? `${JSON.stringify({ prompt: prepared.prompt, context: prepared.context }, null, 2)}\n`
        : formatText(prepared),
    );
    return EXIT.ok;
  } finally {
    skills?.release();
    await cache.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

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

/** The alert metrics section of a preview, with the daemon's own Prometheus credentials. */
async function previewAlertMetrics(
  config: Config,
  env: CliIO['env'],
  entry: ClusterEntry,
  run: Pick<AlertMetricsInput, 'workspace' | 'bundle' | 'runDir'>,
): Promise<AlertMetrics | undefined> {
  const policy = await loadToolPolicy(config.personas_dir, config.persona);
  const endpoints = resolveEndpoints([entry], resolveSecrets(config, env).values, !config.clusters);
  const prometheus = {
    cluster: entry.name,
    endpoint: endpoints.get(entry.name),
    limits: limitsOf(config.promql),
    now: () => new Date(),
  };
  const signal = new AbortController().signal;
  return preloadAlertMetrics({
    config,
    ...run,
    promql: async (argv) =>
      (await daemonPromqlCall(prometheus, policy, argv, signal, () => new Date())).result,
  });
}
