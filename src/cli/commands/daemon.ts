import { Option, type Command } from 'commander';
import { AGENT_NAMES, ENGINE_NAMES } from '../../config/schema.js';
import { DaemonStartError, runDaemonService } from '../../daemon/service.js';
import { flagLayer, intOption } from '../config.js';
import { checkConfig, checkedConfig } from '../config-check.js';
import { formatProblem, type ConfigProblem } from '../../config/index.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner daemon`: the long-running service (watch, claim, queue, run, record). This command
// parses its flags and loads the configuration; src/daemon/service.ts builds and runs the daemon.

interface DaemonOptions {
  workspacesRoot?: string;
  engine?: string;
  agent?: string;
  maxConcurrent?: number;
  httpPort?: number;
  createRoot?: boolean;
}

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('daemon')
    .description('run the service: watch the workspaces root and investigate each incident once')
    .option('--workspaces-root <dir>', 'folder watched for <incident>/incident.json')
    .option('--create-root', 'create the workspaces root when it does not exist (its parent must)')
    .addOption(new Option('--engine <engine>', 'where agents run').choices(ENGINE_NAMES))
    .addOption(new Option('--agent <name>', 'which agent CLI investigates').choices(AGENT_NAMES))
    .option('--max-concurrent <n>', 'runs in flight at once', intOption('--max-concurrent'))
    .option(
      '--http-port <n>',
      'port for /healthz, /readyz, /metrics and /v1/* (0 = off)',
      intOption('--http-port'),
    )
    .action(async (opts: DaemonOptions, cmd: Command) => {
      done(await runDaemon(opts, cmd.optsWithGlobals<{ config?: string }>().config, io));
    });
}

/** Loads the configuration and runs the daemon until SIGTERM/SIGINT; resolves to the exit code. */
export async function runDaemon(opts: DaemonOptions, file: string | undefined, io: CliIO): Promise<number> {
  const flags = flagLayer([
    ['workspaces_root', opts.workspacesRoot],
    ['engine', opts.engine],
    ['agent.name', opts.agent],
    ['scheduling.max_concurrent', opts.maxConcurrent],
    ['http.port', opts.httpPort],
  ]);
  const { config } = await checkedConfig(io, file, flags);
  const exit = io.exit ?? ((code: number) => process.exit(code));
  try {
    await runDaemonService(config, {
      env: io.env,
      createRoot: opts.createRoot === true,
      ...(io.signals ? { signals: io.signals } : {}),
      // Losing the leader Lease ends the process at once (src/daemon/leadership.ts says why).
      onLeadershipLost: () => exit(EXIT.failed),
      // SIGHUP: the same file, flags and environment, checked as validate-config checks them.
      reload: async () => {
        const check = await checkConfig({ io, ...(file ? { file } : {}), flags });
        const lines = (problems: ConfigProblem[]) => problems.map((p) => formatProblem(p).trim());
        return check.problems.length > 0
          ? { ok: false, problems: lines(check.problems) }
          : { ok: true, config: check.config, warnings: lines(check.warnings) };
      },
    });
  } catch (err) {
    if (err instanceof DaemonStartError) throw new CliExit(EXIT.failed, err.message);
    throw err;
  }
  return EXIT.ok;
}
