import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { AuditLog } from '../../audit/log.js';
import type { Config } from '../../config/schema.js';
import { resolveSecrets } from '../../config/secrets.js';
import { IncidentStore } from '../../incident/store.js';
import { createLogger } from '../../log/logger.js';
import { Redactor } from '../../log/redact.js';
import { requestRetry } from '../../status/client.js';
import { retryIncident, type RetryOutcome } from '../../status/retry.js';
import { formatMs } from '../../daemon/lifecycle.js';
import { writerAuditKey } from '../../audit/writer-key.js';
import { commandConfig } from '../config.js';
import { daemonFor } from '../daemon-api.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner retry <workspace>`: queues a failed, interrupted or rejected incident again in its
// own folder, keeping its runs and audit trail. Through the daemon's API when a daemon answers for the
// folder's root (it starts the run at once); otherwise the event is applied here under the workspace
// lease, and the daemon picks the queued incident up at its next rescan or start.

/** How long to wait for a lease the daemon holds briefly. */
const LEASE_WAIT_MS = 5000;

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('retry')
    .description(
      're-queue a failed, interrupted or rejected incident in its own folder, keeping its runs and audit trail; exit 1 if its state cannot be retried',
    )
    .argument('<workspace>', 'incident workspace folder')
    .action(async (workspace: string, _opts: unknown, cmd: Command) => {
      done(await runRetry(workspace, cmd.optsWithGlobals<{ config?: string }>().config, io));
    });
}

const isDirectory = (dir: string): Promise<boolean> =>
  stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );

/**
 * The incident folder `workspace` names: a path (from the current folder), or else a bare folder name
 * under the configured `workspaces_root` — the form Slack's "what to do" suggests.
 */
async function resolveWorkspace(workspace: string, file: string | undefined, io: CliIO): Promise<string> {
  const here = path.resolve(io.cwd, workspace);
  if (await isDirectory(here)) return here;
  const bare = workspace !== '' && !workspace.includes('/') && !workspace.includes(path.sep);
  if (!bare || workspace === '.' || workspace === '..')
    throw new CliExit(EXIT.usage, `retry: ${here} is not a folder; give an incident workspace folder`);
  const root = commandConfig(io, file).config.workspaces_root;
  const inRoot = path.join(root, workspace);
  if (await isDirectory(inRoot)) return inRoot;
  throw new CliExit(
    EXIT.usage,
    `retry: no incident folder ${workspace} in workspaces_root ${root} nor in ${io.cwd}; give the folder's name under workspaces_root or its path`,
  );
}

export async function runRetry(workspace: string, file: string | undefined, io: CliIO): Promise<number> {
  const dir = await resolveWorkspace(workspace, file, io);
  const root = path.dirname(dir);
  const { config } = commandConfig(io, file, { workspaces_root: root });
  const folder = path.basename(dir);
  const daemon = await daemonFor(io, config, root, 1);
  if (daemon) {
    const answer = await requestRetry(daemon.api, folder);
    if (!answer.ok) throw new CliExit(EXIT.failed, `retry: ${answer.message}`);
    const r = answer.reply;
    io.stdout(
      `${folder}: queued again (was ${r.previousState}; attempt ${r.attempts + 1} next); the daemon at ${daemon.api.base} runs it now\n`,
    );
    return EXIT.ok;
  }
  const outcome = await retryHere(dir, config, io);
  if (outcome.kind !== 'queued') throw new CliExit(EXIT.failed, `retry: ${outcome.message}`);
  io.stdout(
    `${folder}: queued again (was ${outcome.previousState}; attempt ${outcome.record.attempts + 1} next); ` +
      `a running daemon takes it at its next rescan (scheduling.rescan_interval, ${formatMs(config.scheduling.rescan_interval)}), otherwise the next daemon start does\n`,
  );
  return EXIT.ok;
}

/** The RetryRequested event applied by this process, through the store, under the workspace lease. */
async function retryHere(dir: string, config: Config, io: CliIO): Promise<RetryOutcome> {
  const secrets = resolveSecrets(config, io.env);
  const redactor = new Redactor(secrets.values);
  // The store's own log line ("retry requested") is the daemon's business; this command says it itself.
  const log = createLogger({ level: 'warn', redactor });
  const key = writerAuditKey(config, secrets.values, log, 'use');
  const store = new IncidentStore({
    audit: new AuditLog({ redactor, ...(key ? { key } : {}) }),
    log,
    policy: config.scheduling,
  });
  return retryIncident(dir, 'cli', {
    store,
    identity: { daemonId: `cli-retry-${hostname()}`, pid: process.pid, host: hostname() },
    lease: { ttlMs: config.scheduling.lease_ttl },
    waitMs: LEASE_WAIT_MS,
  });
}
