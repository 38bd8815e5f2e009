// The real `triage-runner daemon` with the process engine and a stand-in agent (fixtures/slow-agent.sh),
// for tests that attack recovery: SIGKILL, restarts, two daemons on one root, a full disk.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../support/net.js';
import { startCliDaemon, type CliDaemon } from '../../support/cli-daemon.js';
import { readState } from '../../../src/workspace/state.js';
import { afterScans as afterScansOn } from '../../support/scans.js';

export { auditEvents } from '../../support/notify.js';

export const SLOW_AGENT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'fixtures',
  'slow-agent.sh',
);

const ports = new WeakMap<CliDaemon, number>();

/**
 * Starts the daemon on `root` (config and skills cache in `dir`); `config` is merged over the defaults,
 * `env` over its environment.
 */
export async function startProcessDaemon(
  dir: string,
  root: string,
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<CliDaemon> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const daemon = await startCliDaemon({
    dir,
    config: {
      workspaces_root: root,
      agent: { command: SLOW_AGENT, min_report_bytes: 10, report_sections: ['Summary'], stop_grace: '300ms' },
      scheduling: {
        max_concurrent: 6,
        max_per_cluster: 6,
        lease_ttl: '2s',
        rescan_interval: '300ms',
        shutdown_timeout: '300ms',
        ...(config.scheduling as Record<string, unknown> | undefined),
      },
      http: { port, host: '127.0.0.1' },
      ...Object.fromEntries(Object.entries(config).filter(([k]) => k !== 'scheduling')),
    },
    args: ['--engine', 'process'],
    // A key that is never sent (the stand-in agent calls no API), so that /readyz's preflight passes.
    env: { PATH: process.env.PATH ?? '', HOME: dir, ANTHROPIC_API_KEY: 'unused-by-the-stand-in', ...env },
  });
  ports.set(daemon, port);
  return daemon;
}

/** Lines in a marker file the stand-in agent appends to (`agent-starts.log`, `agent-ends.log`). */
export async function markers(
  workspace: string,
  file: 'agent-starts.log' | 'agent-ends.log',
): Promise<number> {
  const text = await readFile(path.join(workspace, file), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).length;
}

/** The HTTP port the daemon serves on (health, readiness, metrics). */
export function httpPort(daemon: CliDaemon): number {
  const port = ports.get(daemon);
  if (port === undefined) throw new Error('not a daemon started by startProcessDaemon');
  return port;
}

/** The workspace's state and its runs' statuses, for assertions. */
export async function stateOf(workspace: string): Promise<{ state?: string; runs: string[] }> {
  const s = await readState(workspace);
  return { ...(s ? { state: s.state } : {}), runs: (s?.runs ?? []).map((r) => r.status) };
}

/** The daemon's `incidents_total` counter for `outcome` (0 when absent). */
export async function incidentsTotal(daemon: CliDaemon, outcome: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort(daemon)}/metrics`)).text();
  const m = new RegExp(`triage_runner_incidents_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

/** Resolves once the daemon has finished `count` more passes over the workspaces root than now. */
export const afterScans = (daemon: CliDaemon, count: number): Promise<void> =>
  afterScansOn(httpPort(daemon), count);
