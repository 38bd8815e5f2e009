import { constants } from 'node:fs';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { RUN_FILES, RUNS_RELATIVE, TRIAGE_DIR } from '../workspace/layout.js';
import type { EngineCapabilities, Placement } from '../engines/types.js';
import { POD_TOKEN_DIR } from '../gateway/pod-route.js';
import { PASSAGE_DIR_MODE } from '../util/fs.js';
import { openDirNoFollow } from '../util/safe-path.js';

// What the daemon keeps under `.triage/` is its user's only (files 0600, folders 0700). A run's agent
// reads a few folders of its run folder (the triage output, earlier reports, the files its CLI is given,
// the alert's preloaded metrics, the kubectl guard, the model gateway's bridge): just before it starts, those, and the run folder to
// reach them, are shared with it, and nothing else. `.triage/` and `.triage/runs/` are only searchable
// (0711), never listable, so that a container's user reaches its run folder by its path.

/**
 * How the agent gets at what it reads: it is the daemon's user (the process engine); it has a group
 * the files are given to (a pod's fsGroup; the container user's group, which a root daemon can give
 * files to), files 0640 and folders 0750; or, for a daemon that is not root and shares no group with
 * the container's user, files 0644 and folders 0755, as the only way.
 */
export type AgentAccess = { kind: 'same-user' } | { kind: 'group'; gid: number } | { kind: 'everyone' };

/** The uid and gid of a `uid:gid` user (docker.user); a name or an absent part is undefined. */
export function containerIds(user: string): { uid?: number; gid?: number } {
  const [uid, gid] = user.split(':').map((v) => (/^\d+$/.test(v) ? Number(v) : undefined));
  return { ...(uid !== undefined ? { uid } : {}), ...(gid !== undefined ? { gid } : {}) };
}

export function agentAccess(
  placement: Placement,
  capabilities: Pick<EngineCapabilities, 'agentGroup'>,
  user: string,
  getuid = process.getuid,
): AgentAccess {
  if (placement === 'host') return { kind: 'same-user' };
  if (capabilities.agentGroup !== undefined) return { kind: 'group', gid: capabilities.agentGroup };
  const { uid, gid } = containerIds(user);
  if (getuid?.() === 0 && (gid ?? uid) !== undefined) return { kind: 'group', gid: (gid ?? uid) as number };
  return { kind: 'everyone' };
}

/** The folders of a run folder its agent reads. */
export const AGENT_READ_DIRS = [
  RUN_FILES.triageDir,
  RUN_FILES.previous,
  RUN_FILES.agentFiles,
  RUN_FILES.alertMetricsDir,
  RUN_FILES.guard,
  RUN_FILES.gatewayBridge,
  POD_TOKEN_DIR,
] as const;

const MODES = {
  'same-user': { dir: 0o700, file: 0o600 },
  group: { dir: 0o750, file: 0o640 },
  everyone: { dir: 0o755, file: 0o644 },
} as const;

/**
 * Shares the folders the agent reads (AGENT_READ_DIRS, whole) and the run folder itself with the agent,
 * and makes `.triage/` and `.triage/runs/` searchable; for an agent that is the daemon's user they are
 * made its only (what the triage script wrote there has the script's umask). Never through a link:
 * each entry is changed through a handle opened without following one, and links are skipped.
 * Resolves to the access given: a group the daemon may not give files to (EPERM) falls back to
 * everyone.
 */
export async function shareRunInputs(
  workspaceDir: string,
  bundleDir: string,
  access: AgentAccess,
): Promise<AgentAccess> {
  for (const dir of [path.join(workspaceDir, TRIAGE_DIR), path.join(workspaceDir, RUNS_RELATIVE)])
    await withHandle(await openDirNoFollow(dir), (h) => h.chmod(PASSAGE_DIR_MODE));
  let given: AgentAccess = access;
  const share = async (handle: FileHandle, isDir: boolean): Promise<void> => {
    const info = await handle.stat();
    if (given.kind === 'group' && info.gid !== given.gid) {
      try {
        await handle.chown(info.uid, given.gid);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
        given = { kind: 'everyone' };
      }
    }
    const modes = MODES[given.kind];
    // An executable (the guard's kubectl) stays executable for whoever may read it.
    const exec = !isDir && (info.mode & 0o100) !== 0;
    await handle.chmod(isDir || exec ? modes.dir : modes.file);
  };
  await withHandle(await openDirNoFollow(bundleDir), (h) => share(h, true));
  for (const name of AGENT_READ_DIRS) await shareTree(path.join(bundleDir, name), share);
  return given;
}

/** Applies `share` to a folder and everything below it; a missing folder is skipped, links are never followed. */
async function shareTree(
  dir: string,
  share: (handle: FileHandle, isDir: boolean) => Promise<void>,
): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await openDirNoFollow(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  await withHandle(handle, (h) => share(h, true));
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await shareTree(p, share);
    else if (entry.isFile()) {
      // O_NONBLOCK: a FIFO swapped in meanwhile is not waited on; it is no regular file either.
      const file = await open(p, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      await withHandle(file, async (h) => {
        if ((await h.stat()).isFile()) await share(h, false);
      });
    }
  }
}

async function withHandle(handle: FileHandle, fn: (h: FileHandle) => Promise<unknown>): Promise<void> {
  try {
    await fn(handle);
  } finally {
    await handle.close();
  }
}
