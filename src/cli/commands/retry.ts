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
import { listAll, requestRetry } from '../../status/client.js';
import { IncidentIndex } from '../../status/incident-index.js';
import { resolveIncident, resolutionProblem, type Resolvable } from '../../status/resolve.js';
import { rootProblem } from '../../status/scan.js';
import { retryIncident, type RetryOutcome } from '../../status/retry.js';
import { formatMs } from '../../daemon/lifecycle.js';
import { writerAuditKey } from '../../audit/writer-key.js';
import { commandConfig } from '../config.js';
import { daemonFor } from '../daemon-api.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner retry <workspace-or-folder-or-incident-id>`: queues a failed, interrupted, rejected
// or resolved incident again in its own folder, keeping its runs and audit trail. Through the daemon's
// API when a daemon answers for the folder's root (it starts the run at once); otherwise the event is
// applied here under the workspace lease, and the daemon picks the queued incident up at its next
// rescan or start.

/** How long to wait for a lease the daemon holds briefly. */
const LEASE_WAIT_MS = 5000;

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('retry')
    .description(
      're-queue a failed, interrupted, rejected or resolved incident in its own folder, keeping its runs and audit trail; exit 1 if its state cannot be retried',
    )
    .argument(
      '<workspace>',
      "the incident's workspace folder (a path, or its name under workspaces_root) or its incidentId",
    )
    .action(async (workspace: string, _opts: unknown, cmd: Command) => {
      done(await runRetry(workspace, cmd.optsWithGlobals<{ config?: string }>().config, io));
    });
}

const isDirectory = (dir: string): Promise<boolean> =>
  stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );

type DaemonAt = Awaited<ReturnType<typeof daemonFor>>;

/** An incident folder to retry, and the daemon answering for its root when one was asked already. */
interface Target {
  dir: string;
  daemon?: DaemonAt;
}

/**
 * The incident folder `name` names: a path (from the current folder), a bare folder name under the
 * configured `workspaces_root` (what the status page and `status` show), or an incidentId (what Slack
 * and the other notifications show), looked up in the daemon's index when one answers for the root,
 * else in the workspaces.
 */
async function resolveWorkspace(name: string, file: string | undefined, io: CliIO): Promise<Target> {
  const here = path.resolve(io.cwd, name);
  if (await isDirectory(here)) return { dir: here };
  const bare = name !== '' && !name.includes('/') && !name.includes(path.sep);
  if (!bare || name === '.' || name === '..')
    throw new CliExit(EXIT.usage, `retry: ${here} is not a folder; give an incident workspace folder`);
  const { config } = commandConfig(io, file);
  const root = config.workspaces_root;
  const inRoot = path.join(root, name);
  if (await isDirectory(inRoot)) return { dir: inRoot };
  const problem = await rootProblem(root);
  if (problem) throw new CliExit(EXIT.usage, `retry: ${name} is not a folder in ${io.cwd}, and ${problem}`);
  const daemon = await daemonFor(io, config, root);
  const views = daemon ? (await listAll(daemon.api, daemon.first)).incidents : await localViews(root);
  const found = resolveIncident(views, name);
  if (found.kind !== 'found') throw new CliExit(EXIT.usage, `retry: ${resolutionProblem(found, name, root)}`);
  return { dir: path.join(root, found.folder), daemon };
}

/** Every incident under `root`, read from the workspaces. */
async function localViews(root: string): Promise<Resolvable[]> {
  const index = new IncidentIndex({ root });
  await index.load();
  return [...index.views()];
}

export async function runRetry(workspace: string, file: string | undefined, io: CliIO): Promise<number> {
  const target = await resolveWorkspace(workspace, file, io);
  const { dir } = target;
  const root = path.dirname(dir);
  const { config } = commandConfig(io, file, { workspaces_root: root });
  const folder = path.basename(dir);
  const daemon = 'daemon' in target ? target.daemon : await daemonFor(io, config, root, 1);
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
