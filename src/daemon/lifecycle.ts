import { stat } from 'node:fs/promises';
import type { Readiness } from '../shared/types.js';
import { errorMessage } from '../util/errors.js';
import { writeProbe } from '../util/fs.js';
import { triageDir } from '../workspace/layout.js';
import type { Leadership } from './types.js';

// Small helpers of the daemon's lifecycle: bounded waits and cheap change marks for rescans.

/** True when every promise settled within `ms`; false on timeout (the promises keep running). */
export async function settledWithin(promises: Promise<unknown>[], ms: number): Promise<boolean> {
  if (promises.length === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const all = Promise.allSettled(promises).then(() => true as const);
  const result = await Promise.race([all, timeout]);
  clearTimeout(timer);
  return result;
}

/** mtime+size of a file, to notice a re-saved incident.json without reading it. */
export async function fileMark(file: string): Promise<string> {
  const info = await stat(file).catch(() => undefined);
  return info ? `file:${info.mtimeMs}:${info.size}` : 'file:missing';
}

/** 600000 → "10m", as a user writes durations in the config. */
export function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** The readiness role of a replica under leader election: whether it leads, who does, a routing problem. */
export const leaderRole = (
  leadership: Pick<Leadership, 'state' | 'holder' | 'problem'>,
): { leader: boolean; holder: string; problem?: string } => ({
  leader: leadership.state === 'leader',
  holder: leadership.holder ?? '',
  ...(leadership.problem ? { problem: leadership.problem } : {}),
});

/** /readyz: intake running, the disk writable, and what the executor reports (engine, skills, agent). */
export async function daemonReadiness(
  status: {
    stopping: boolean;
    ready: boolean;
    rootDown?: string;
    root: string;
    diskFull?: string;
    /** Leader election: whether this replica leads, who does ('' when nobody yet), a routing problem. */
    role?: { leader: boolean; holder: string; problem?: string };
  },
  executor: () => Promise<Readiness>,
): Promise<Readiness> {
  const { rootDown, diskFull, role } = status;
  const standby = role !== undefined && !role.leader && !status.stopping;
  const why = status.stopping
    ? 'shutting down'
    : standby
      ? undefined
      : !status.ready
        ? 'starting'
        : rootDown
          ? `workspaces root ${status.root} is unavailable (${rootDown})`
          : undefined;
  const intake = {
    name: 'intake',
    ok: why === undefined,
    ...(why ? { detail: why } : standby ? { detail: 'standby: intake starts when this replica leads' } : {}),
  };
  // A healthy standby is ready (so rollouts and the PodDisruptionBudget work); the Service routes to the
  // leader by its pod's role label, so a replica whose label could not be set is not ready.
  const leader = role
    ? [
        {
          name: 'leader',
          ok: !role.problem,
          detail: role.problem ?? (role.leader ? 'leader' : `standby (leader: ${role.holder || 'none yet'})`),
        },
      ]
    : [];
  // Only once intake runs: before, the root may not be there yet (a standby, a start under way).
  const unwritable = diskFull || !intake.ok || standby ? undefined : await rootWriteProblem(status.root);
  const disk = {
    name: 'disk',
    ok: !diskFull && !unwritable,
    ...(diskFull
      ? { detail: `writes fail: ${diskFull}; free space on the workspaces volume` }
      : unwritable
        ? { detail: unwritable }
        : {}),
  };
  const ex = await executor().catch((err: unknown): Readiness => ({
    ok: false,
    checks: [{ name: 'executor', ok: false, detail: errorMessage(err) }],
  }));
  return {
    ok: intake.ok && disk.ok && ex.ok,
    // Ready, but running without something (a skills source, an unreachable cluster): said at the top too.
    ...(ex.degraded ? { degraded: true } : {}),
    checks: [intake, ...leader, disk, ...ex.checks],
  };
}

/**
 * Writes and removes a file in the root's .triage/ folder, where intake records every alert and
 * incident: why that fails (a root the daemon's user cannot write), or undefined. A root that is gone
 * is not made again (a readiness probe must not hide an unmounted volume under a new folder).
 */
export async function rootWriteProblem(root: string): Promise<string | undefined> {
  const dir = triageDir(root);
  const code = await writeProbe(dir, { parents: false });
  if (code === undefined) return undefined;
  const user = process.getuid ? `uid ${process.getuid()}` : 'the daemon';
  return `cannot write in ${dir} (${code}): intake records every alert and incident there; let the daemon's user (${user}) write the workspaces root (chown it to that user, or run the daemon as its owner)`;
}

/** Says at start-up what would keep an incident from running (engine, agent image or CLI, API key, skills). */
export async function logPreflight(
  executor: { readiness(): Promise<Readiness> },
  log: { error(o: object, m: string): void; warn(o: object, m: string): void },
): Promise<void> {
  const r = await executor.readiness().catch(() => undefined);
  for (const c of r?.checks ?? []) {
    const meta = { check: c.name, detail: c.detail };
    if (!c.ok) log.error(meta, `preflight: ${c.name} is not ready: ${c.detail ?? ''}`);
    else if (c.degraded) log.warn(meta, `preflight: ${c.name} degraded: ${c.detail ?? ''}`);
  }
}
