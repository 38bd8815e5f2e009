import { hostname } from 'node:os';
import { link, mkdir, open, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { TRIAGE_DIR } from './state.js';
import { isSameProcessAlive, pidAlive, processStartTime } from '../util/process.js';

// `.triage/lease`: the claim on an incident. Created with O_EXCL; renewed (mtime) while the holder
// works; taken over only when stale: the taker first creates `lease.takeover` with O_EXCL, checks the
// lease is still the very file it judged stale (inode + mtime), then moves it away and creates its
// own, so of several replicas racing for one stale lease exactly one ends up holding it.

export const LEASE_FILE = 'lease';

export interface LeaseInfo {
  holder: string;
  daemonId: string;
  pid: number;
  host: string;
  acquiredAt: string;
  /** Kernel start time of the holder's pid, so a restarted container reusing the pid is not taken for it. */
  startTime?: string | null;
}

export interface LeaseIdentity {
  daemonId: string;
  pid?: number;
  host?: string;
}

export interface LeaseOptions {
  ttlMs: number;
  now?: () => number;
  /** Whether a pid on this host is alive (and started at `startTime`, when known); injected for tests. */
  isPidAlive?: (pid: number, startTime?: string | null) => boolean;
}

export type AcquireResult =
  | { acquired: true; lease: Lease; tookOver?: LeaseInfo & { ageMs: number } }
  | { acquired: false; holder?: LeaseInfo; ageMs?: number };

export const leasePath = (workspaceDir: string): string => path.join(workspaceDir, TRIAGE_DIR, LEASE_FILE);

export { pidAlive };

const holderAlive = (pid: number, startTime?: string | null): boolean =>
  isSameProcessAlive(pid, startTime ?? null);

export const holderId = (id: LeaseIdentity): string => `${id.daemonId}:${id.pid ?? process.pid}`;

/** A lease this process holds. */
export class Lease {
  constructor(
    readonly file: string,
    readonly info: LeaseInfo,
    private readonly now: () => number,
  ) {}

  /** Pushes the lease's mtime forward; false when the lease is no longer ours (taken over or removed). */
  async renew(): Promise<boolean> {
    const current = await readLease(this.file);
    if (current?.holder !== this.info.holder || current.acquiredAt !== this.info.acquiredAt) return false;
    const t = new Date(this.now());
    await utimes(this.file, t, t);
    return true;
  }

  /** Removes the lease if it is still ours. */
  async release(): Promise<void> {
    const current = await readLease(this.file);
    if (current?.holder === this.info.holder && current.acquiredAt === this.info.acquiredAt) {
      await unlink(this.file).catch(() => undefined);
    }
  }
}

export async function readLease(file: string): Promise<LeaseInfo | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as LeaseInfo;
  } catch {
    return undefined;
  }
}

/** Tries to take the lease of a workspace: create it exclusively, or take it over when stale or its holder died. */
export async function acquireLease(
  workspaceDir: string,
  identity: LeaseIdentity,
  options: LeaseOptions,
): Promise<AcquireResult> {
  const file = leasePath(workspaceDir);
  const now = options.now ?? Date.now;
  const alive = options.isPidAlive ?? holderAlive;
  const host = identity.host ?? hostname();
  const pid = identity.pid ?? process.pid;
  const info: LeaseInfo = {
    holder: holderId(identity),
    daemonId: identity.daemonId,
    pid,
    host,
    acquiredAt: new Date(now()).toISOString(),
    startTime: processStartTime(pid),
  };
  if (await createExclusive(file, info)) return { acquired: true, lease: new Lease(file, info, now) };

  const seen = await stat(file).catch(() => undefined);
  if (!seen) {
    // Released between our attempt and the stat: one more exclusive try.
    return (await createExclusive(file, info))
      ? { acquired: true, lease: new Lease(file, info, now) }
      : { acquired: false };
  }
  const current = await readLease(file);
  const ageMs = now() - seen.mtimeMs;
  const leftoverOfOurs = current?.holder === info.holder;
  const holderDead =
    current !== undefined &&
    current.host === host &&
    !leftoverOfOurs &&
    !alive(current.pid, current.startTime);
  const stale =
    ageMs > options.ttlMs || holderDead || leftoverOfOurs || (current === undefined && ageMs > 1000);
  if (!stale) return { acquired: false, holder: current, ageMs };

  // Takeover is serialised by a second exclusive file: of the replicas that judged this lease stale,
  // only the one that creates `lease.takeover` may move it away, and only if it is still the very
  // file (inode + mtime) judged stale. Without that, a racer could move the lease another racer had
  // just created, and both would believe they hold it.
  const token = `${file}.takeover`;
  if (!(await takeToken(token, info, now(), Math.max(options.ttlMs, 5000))))
    return { acquired: false, holder: current, ageMs };
  try {
    const again = await stat(file).catch(() => undefined);
    if (!again || again.ino !== seen.ino || again.mtimeMs !== seen.mtimeMs)
      return { acquired: false, holder: await readLease(file), ageMs };
    const aside = `${file}.stale.${info.holder.replace(/[^A-Za-z0-9._-]/g, '_')}`;
    try {
      await rename(file, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return { acquired: false, holder: await readLease(file) };
      throw err;
    }
    const moved = await stat(aside).catch(() => undefined);
    if (!moved || moved.ino !== seen.ino || moved.mtimeMs !== seen.mtimeMs) {
      // Released and re-created, or renewed, between our look and the rename: put it back.
      await link(aside, file).catch(() => undefined);
      await unlink(aside).catch(() => undefined);
      return { acquired: false, holder: current, ageMs: moved ? now() - moved.mtimeMs : undefined };
    }
    await unlink(aside).catch(() => undefined);
    if (!(await createExclusive(file, info))) return { acquired: false, holder: await readLease(file) };
    return {
      acquired: true,
      lease: new Lease(file, info, now),
      tookOver: current ? { ...current, ageMs } : undefined,
    };
  } finally {
    await unlink(token).catch(() => undefined);
  }
}

/**
 * Creates the takeover token exclusively. A token older than `staleMs` (its taker died mid-takeover)
 * is moved away instead, and this attempt gives up; the next attempt competes for a fresh token.
 */
async function takeToken(token: string, info: LeaseInfo, nowMs: number, staleMs: number): Promise<boolean> {
  if (await createExclusive(token, info)) return true;
  const seen = await stat(token).catch(() => undefined);
  if (!seen || nowMs - seen.mtimeMs <= staleMs) return false;
  const aside = `${token}.stale.${info.holder.replace(/[^A-Za-z0-9._-]/g, '_')}`;
  if (
    await rename(token, aside).then(
      () => true,
      () => false,
    )
  ) {
    const moved = await stat(aside).catch(() => undefined);
    // Moved a fresh token created since our look: put it back.
    if (moved && moved.ino !== seen.ino) await link(aside, token).catch(() => undefined);
    await unlink(aside).catch(() => undefined);
  }
  return false;
}

/** What holds the lease now, and whether it counts as stale, without touching it. */
export async function inspectLease(
  workspaceDir: string,
  identity: LeaseIdentity,
  options: LeaseOptions,
): Promise<{ holder?: LeaseInfo; stale: boolean } | undefined> {
  const file = leasePath(workspaceDir);
  const seen = await stat(file).catch(() => undefined);
  if (!seen) return undefined;
  const current = await readLease(file);
  const now = options.now ?? Date.now;
  const alive = options.isPidAlive ?? holderAlive;
  const host = identity.host ?? hostname();
  const holderDead =
    current !== undefined &&
    current.host === host &&
    current.holder !== holderId(identity) &&
    !alive(current.pid, current.startTime);
  return {
    holder: current,
    stale: now() - seen.mtimeMs > options.ttlMs || holderDead || current?.holder === holderId(identity),
  };
}

/** Creates `file` with O_EXCL; makes `.triage/` when missing but never re-creates a removed workspace folder. */
async function createExclusive(file: string, info: LeaseInfo, madeDir = false): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'wx', 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'ENOENT' && !madeDir) {
      try {
        await mkdir(path.dirname(file));
      } catch (mkdirErr) {
        const mkdirCode = (mkdirErr as NodeJS.ErrnoException).code;
        // The workspace folder itself is gone (the producer removed it): nothing to claim.
        if (mkdirCode === 'ENOENT') return false;
        if (mkdirCode !== 'EEXIST') throw mkdirErr;
      }
      return createExclusive(file, info, true);
    }
    if (code === 'ENOENT') return false;
    throw err;
  }
  try {
    await handle.writeFile(JSON.stringify(info));
    await handle.sync();
  } finally {
    await handle.close();
  }
  return true;
}
