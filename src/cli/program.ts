import { Command, CommanderError } from 'commander';
import { COMMANDS } from './commands/index.js';
import { CliExit, EXIT, PACKAGE_VERSION, type CliIO } from './io.js';

/** Builds the CLI; every command accepts --config. */
export function buildProgram(io: CliIO, done: (code: number) => void): Command {
  const program = new Command('triage-runner')
    .description('Have AI agents investigate incidents dropped into a workspaces folder.')
    .version(PACKAGE_VERSION, '-V, --version')
    .option('-c, --config <file>', 'YAML config file (default: configs/triage-runner.yaml if present)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  for (const command of COMMANDS) command.register(program, io, done);
  for (const sub of program.commands) {
    sub.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr }).showHelpAfterError();
  }
  return program;
}

/** Runs the CLI and resolves to the exit code (0 success, 1 the work failed, 2 usage/config error). */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CliExit) {
      if (err.message) io.stderr(`${err.message}\n`);
      return err.code;
    }
    if (err instanceof CommanderError) {
      // --help and --version end well; help shown because a subcommand is missing is a usage error.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.ok;
      return err.code === 'commander.help' && err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    io.stderr(`triage-runner: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT.failed;
  }
}
