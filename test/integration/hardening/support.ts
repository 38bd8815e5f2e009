// The real `triage-runner daemon` with the process engine and a stand-in agent (fixtures/slow-agent.sh),
// for tests that attack recovery: SIGKILL, restarts, two daemons on one root, a full disk.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCliDaemon, type CliDaemon } from '../../support/cli-daemon.js';
import { readState } from '../../../src/incident/store.js';

export { auditEvents } from '../../support/notify.js';

export const SLOW_AGENT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'fixtures',
  'slow-agent.sh',
);

/** Starts the daemon on `root` (config and skills cache in `dir`); `config` is merged over the defaults. */
export function startProcessDaemon(
  dir: string,
  root: string,
  config: Record<string, unknown> = {},
): Promise<CliDaemon> {
  return startCliDaemon({
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
      },
      ...config,
    },
    args: ['--engine', 'process'],
    env: { PATH: process.env.PATH ?? '', HOME: dir },
  });
}

/** Lines in a marker file the stand-in agent appends to (`agent-starts.log`, `agent-ends.log`). */
export async function markers(
  workspace: string,
  file: 'agent-starts.log' | 'agent-ends.log',
): Promise<number> {
  const text = await readFile(path.join(workspace, file), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).length;
}

/** The HTTP port the daemon logged at start. */
export function httpPort(daemon: CliDaemon): number {
  const m = /"port":(\d+)/.exec(daemon.logs());
  if (!m) throw new Error(`the daemon logged no HTTP port. ${daemon.tail()}`);
  return Number(m[1]);
}

/** The workspace's state and its runs' statuses, for assertions. */
export async function stateOf(workspace: string): Promise<{ state?: string; runs: string[] }> {
  const s = await readState(workspace);
  return { ...(s ? { state: s.state } : {}), runs: (s?.runs ?? []).map((r) => r.status) };
}
