import { Option, type Command } from 'commander';
import { hostname } from 'node:os';
import path from 'node:path';
import { clusterRegistry } from '../../clusters/registry.js';
import type { Config } from '../../config/schema.js';
import { AGENT_NAMES, ENGINE_NAMES, type AgentName, type EngineName } from '../../config/schema.js';
import { formatReplay, replay, ReplayUsageError, type ReplayDeps } from '../../replay/index.js';
import { commandConfig, flagLayer } from '../config.js';
import { CliExit, EXIT, type CliIO } from '../io.js';
import { checkNotifyFlag, notifyRuns, type NotifyParts } from '../notify-runtime.js';
import { buildRuntime } from '../../run/runtime.js';

// `triage-runner replay <workspace-or-run-bundle>`: re-runs a saved incident into a new workspace.

interface ReplayFlags {
  agent?: AgentName;
  engine?: EngineName;
  model?: string;
  reuseTriage?: boolean;
  rerunTriage?: boolean;
  dryRun?: boolean;
  out?: string;
  subject?: string;
  runId?: string;
  notify?: boolean;
  cluster?: string;
}

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('replay')
    .description(
      're-run a saved incident (workspace, run bundle <ws>/.triage/runs/<id>, or examples/incidents/<name>) into a new workspace without touching the original; prints the original and new prompt sha256',
    )
    .argument('<workspace-or-run-bundle>', 'incident workspace, run bundle or example folder')
    .addOption(
      new Option('--agent <name>', 'agent CLI (default: the original run’s, else the config’s)').choices(
        AGENT_NAMES,
      ),
    )
    .addOption(new Option('--engine <engine>', 'where the agent runs').choices(ENGINE_NAMES))
    .option('--model <model>', 'model passed to the agent CLI')
    .option(
      '--cluster <name>',
      'cluster registry entry (or alias) to investigate, e.g. a staging copy (default: the one the original run used)',
    )
    .addOption(
      new Option('--reuse-triage', 'reuse the saved triage output (default when one exists)').conflicts(
        'rerunTriage',
      ),
    )
    .option('--rerun-triage', 'run the triage script again (default when no saved output exists)')
    .option('--subject <list>', 'boot.yml subjects, comma-separated (default: from the config rules)')
    .option('--dry-run', 'prepare the context and write the bundle, but do not launch the agent')
    .option('--run-id <id>', "run id (default: a new one; never the original run's)")
    .option(
      '--notify',
      'deliver the result to the configured notify sinks (a replay never notifies unless asked)',
    )
    .option(
      '--out <dir>',
      'new workspace folder (default: ./replays/<folder>-<UTC timestamp>); must be new or empty',
    )
    .action(async (input: string, opts: ReplayFlags, cmd: Command) => {
      done(await runReplay(input, opts, cmd.optsWithGlobals<{ config?: string }>().config, io));
    });
}

/** The pipeline a replay/compare command runs through: the daemon's own executor, built from config. */
export function commandPipeline(
  io: CliIO,
  file: string | undefined,
  flags: { engine?: EngineName; agent?: AgentName; model?: string },
): {
  config: Config;
  deps: ReplayDeps;
  notify: NotifyParts;
  abort: AbortController;
  dispose: () => Promise<void>;
} {
  const { config } = commandConfig(
    io,
    file,
    flagLayer([
      ['engine', flags.engine],
      ['agent.name', flags.agent],
      ['agent.model', flags.model],
    ]),
  );
  // Its own daemon label, so that a daemon reconciling its runs never mistakes a replay (which may reuse
  // the original run's id) for one of its own.
  const { executor, log, audit, redactor, secrets } = buildRuntime(io.env, config, {
    daemonId: `replay-${hostname()}`,
  });
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // The executor's listeners (the model gateway, a pod broker), engines and caches are closed with the
  // command: nothing it opened keeps the process alive once the work is done.
  const dispose = async () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await executor.close?.();
  };
  return {
    config,
    deps: { executor, log, audit, signal: abort.signal },
    notify: { log, redactor, audit, secrets },
    abort,
    dispose,
  };
}

/** Runs one replay and prints its summary; resolves to the exit code (0 ran/prepared, 1 run failed, 2 usage). */
export async function runReplay(
  input: string,
  opts: ReplayFlags,
  file: string | undefined,
  io: CliIO,
): Promise<number> {
  const pipeline = commandPipeline(io, file, opts);
  try {
    if (opts.notify) checkNotifyFlag(pipeline.config, 'replay');
    if (opts.cluster !== undefined) checkClusterFlag(pipeline.config, opts.cluster);
    const result = await replay(
      {
        input,
        cwd: io.cwd,
        ...(opts.out ? { out: opts.out } : {}),
        ...(opts.agent ? { agent: opts.agent } : {}),
        ...(opts.engine ? { engine: opts.engine } : {}),
        ...(opts.model ? { model: opts.model } : {}),
        triage: opts.reuseTriage ? 'reuse' : opts.rerunTriage ? 'rerun' : 'auto',
        ...(opts.subject ? { subjects: splitList(opts.subject) } : {}),
        ...(opts.dryRun ? { dryRun: true } : {}),
        ...(opts.runId ? { runId: opts.runId } : {}),
        ...(opts.cluster ? { cluster: opts.cluster } : {}),
        forbiddenRoots: [pipeline.config.workspaces_root],
        maxIncidentBytes: pipeline.config.intake.max_incident_bytes,
      },
      pipeline.deps,
    );
    io.stdout(formatReplay(result));
    let delivered = true;
    if (opts.notify && opts.dryRun) io.stdout('notify: nothing delivered for a dry run (no agent ran)\n');
    else if (opts.notify)
      delivered = await notifyRuns(io, pipeline.config, pipeline.notify, [
        {
          workspaceDir: result.outDir,
          runId: result.runId,
          status: result.outcome.status,
          ...(result.outcome.reason ? { reason: result.outcome.reason } : {}),
          trigger: 'replay',
          label: `replay of ${path.basename(result.source.workspaceDir)}`,
        },
      ]);
    return result.outcome.status === 'succeeded' && delivered ? EXIT.ok : EXIT.failed;
  } catch (err) {
    if (err instanceof ReplayUsageError) throw new CliExit(EXIT.usage, `replay: ${err.message}`);
    throw err;
  } finally {
    await pipeline.dispose();
  }
}

/** --cluster names a registry entry or alias; without `clusters:` there is nothing to choose from. */
function checkClusterFlag(config: Config, name: string): void {
  const registry = clusterRegistry(config);
  if (!registry.configured)
    throw new CliExit(
      EXIT.usage,
      'replay: --cluster needs a clusters: registry in the configuration (there is one kubeconfig, used for every replay)',
    );
  const route = registry.resolveCluster(name);
  // An explicit choice names an entry: falling back to default_cluster would hide a typo.
  if (!('entry' in route) || route.routedBy === 'default') {
    const known = registry
      .listClusters()
      .map((e) => e.name)
      .join(', ');
    throw new CliExit(
      EXIT.usage,
      `replay: --cluster ${name} is not a cluster registry entry or alias (known: ${known})`,
    );
  }
}

export const splitList = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
