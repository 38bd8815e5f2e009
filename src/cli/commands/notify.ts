import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { parseDuration } from '../../config/duration.js';
import { NotifyInputError, readFinishedIncident } from '../../notify/input.js';
import { UnknownSinkError } from '../../notify/planner.js';
import { UnsafePathError } from '../../util/safe-path.js';
import { commandConfig } from '../config.js';
import { CliExit, EXIT, type CliIO } from '../io.js';
import { commandNotifier, DEFAULT_NOTIFY_WAIT_MS, reportDeliveries } from '../notify-runtime.js';
import { splitList } from './replay.js';

// `triage-runner notify <workspace> [--sink NAME]`: delivers the latest run's result again, as a new
// delivery (its own idempotency key, recorded as a re-send), and waits for it.

interface NotifyFlags {
  sink?: string;
  wait?: string;
}

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('notify')
    .description(
      "(re-)deliver the latest run's result of a finished incident to the configured sinks; every call is a new delivery, recorded as a re-send; exit 0 when all were delivered",
    )
    .argument('<workspace>', 'incident workspace folder')
    .option('--sink <names>', 'only these sinks (comma-separated), whatever their filters say')
    .option(
      '--wait <duration>',
      'how long to wait for delivery; what is left is continued by the daemon',
      '2m',
    )
    .action(async (workspace: string, opts: NotifyFlags, cmd: Command) => {
      done(await runNotify(workspace, opts, cmd.optsWithGlobals<{ config?: string }>().config, io));
    });
}

export async function runNotify(
  workspace: string,
  opts: NotifyFlags,
  file: string | undefined,
  io: CliIO,
): Promise<number> {
  const { config } = commandConfig(io, file);
  const waitMs = parseDuration(opts.wait ?? DEFAULT_NOTIFY_WAIT_MS);
  if (waitMs === undefined)
    throw new CliExit(
      EXIT.usage,
      `notify: --wait ${JSON.stringify(opts.wait)} is not a duration (30s, 2m, ms)`,
    );
  if (config.notify.sinks.length === 0)
    throw new CliExit(
      EXIT.usage,
      'notify: notify.sinks is empty in the configuration; add a sink (see configs/config.example.yaml)',
    );
  const dir = path.resolve(io.cwd, workspace);
  if (
    !(await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    throw new CliExit(EXIT.usage, `notify: ${dir} is not a folder; give an incident workspace folder`);
  const notifier = commandNotifier(io, config);
  try {
    const input = await readFinishedIncident(dir, {
      maxIncidentBytes: config.intake.max_incident_bytes,
      maxReportBytes: config.notify.max_report_bytes,
    });
    const sinks = opts.sink ? splitList(opts.sink) : undefined;
    const plan = await notifier.incidentFinished(input, {
      trigger: 'resend',
      ...(sinks ? { sinks, ignoreFilters: true } : {}),
    });
    const ok = await reportDeliveries(notifier, plan, waitMs, io);
    return ok ? EXIT.ok : EXIT.failed;
  } catch (err) {
    if (err instanceof UnknownSinkError) throw new CliExit(EXIT.usage, `notify: ${err.message}`);
    if (err instanceof NotifyInputError || err instanceof UnsafePathError)
      throw new CliExit(EXIT.failed, `notify: ${err.message}`);
    throw err;
  } finally {
    await notifier.close();
  }
}
