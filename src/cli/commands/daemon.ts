import { Option, type Command } from 'commander';
import { AGENT_NAMES, ENGINE_NAMES } from '../../config/schema.js';
import { DaemonStartError, runDaemonService } from '../../daemon/service.js';
import { flagLayer, intOption } from '../config.js';
import { checkedConfig } from '../config-check.js';
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
  const { config } = await checkedConfig(
    io,
    file,
    flagLayer([
      ['workspaces_root', opts.workspacesRoot],
      ['engine', opts.engine],
      ['agent.name', opts.agent],
      ['scheduling.max_concurrent', opts.maxConcurrent],
      ['http.port', opts.httpPort],
    ]),
  );
  const exit = io.exit ?? ((code: number) => process.exit(code));
  try {
    await runDaemonService(config, {
      env: io.env,
      createRoot: opts.createRoot === true,
      ...(io.signals ? { signals: io.signals } : {}),
      // Losing the leader Lease ends the process at once (src/daemon/leadership.ts says why).
      onLeadershipLost: () => exit(EXIT.failed),
    });
  } catch (err) {
    if (err instanceof DaemonStartError) throw new CliExit(EXIT.failed, err.message);
    throw err;
  }
  return EXIT.ok;
}
