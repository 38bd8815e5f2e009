import { Command, CommanderError } from 'commander';
import { COMMANDS } from './commands/index.js';
import { UsageError } from '../util/errors.js';
import { CliExit, EXIT, PACKAGE_VERSION, type CliIO } from './io.js';

/** The command `argv` asks for (its first word that is not a global option), if any. */
function requestedCommand(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-c' || arg === '--config') i++;
    else if (arg === 'help') return argv[i + 1];
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/**
 * Builds the CLI; every command accepts --config. Only the command `argv` names is loaded; the others
 * are listed by name and summary for `--help` (all of them when `argv` is undefined).
 */
export async function buildProgram(
  io: CliIO,
  done: (code: number) => void,
  argv?: readonly string[],
): Promise<Command> {
  const program = new Command('triage-runner')
    .description('Have AI agents investigate incidents dropped into a workspaces folder.')
    .version(PACKAGE_VERSION, '-V, --version')
    .option('-c, --config <file>', 'YAML config file (default: configs/triage-runner.yaml if present)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  const wanted = argv === undefined ? undefined : requestedCommand(argv);
  for (const entry of COMMANDS) {
    if (argv === undefined || entry.name === wanted) (await entry.load()).register(program, io, done);
    else program.command(entry.name).description(entry.summary);
  }
  for (const sub of program.commands) {
    sub.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr }).showHelpAfterError();
  }
  return program;
}

/** Runs the CLI and resolves to the exit code (0 success, 1 the work failed, 2 usage/config error). */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  let code: number = EXIT.ok;
  const program = await buildProgram(
    io,
    (c) => {
      code = c;
    },
    argv,
  );
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CliExit) {
      if (err.message) io.stderr(`${err.message}\n`);
      return err.code;
    }
    if (err instanceof UsageError) {
      io.stderr(`${err.message}\n`);
      return EXIT.usage;
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
