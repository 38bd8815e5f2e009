import {
  closeSync,
  constants,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { randomHex } from './random.js';
import { waitFor } from './backoff.js';
import { dirModeFor, fileModeFor, fsyncFd, readRegularFileSync, unlinkQuietly } from './fs.js';
import { isSameProcessAlive, processStartTime } from './process.js';

// The one exclusive-file lock of the daemon (workspace leases, the audit log, the skills cache). A lock
// is a file created with O_EXCL holding its holder as JSON; the holder renews it by touching its mtime.
// It may be taken over when stale: older than `staleMs`, or held by a dead process on this host (pid and
// kernel start time, so a recycled pid is not taken for the holder). A takeover is serialised by a
// second exclusive file named after the exact stale file (inode + mtime), and the stale file is moved
// aside and checked to be the one judged stale before the taker creates its own: of several processes
// racing for one stale lock exactly one ends up holding it.
//
// Not proper-lockfile: it locks with a directory and judges a holder only by the directory's mtime, so it
// cannot tell a dead holder on this host from a slow one (no pid and start time), keeps no holder to show
// (`status` and the inspector name who holds a lease), and removes a stale lock without serialising the
// processes that judged it stale together; the workspace lease's exactly-once rests on that last point.
//
// File calls are synchronous (a few microseconds each on a local disk, against tens of microseconds of
// CPU through `fs/promises`: see util/fs.ts); only the fsync of a durable lock waits in the thread pool.

export interface LockHolder {
  /** Unique per holding process (and, for leases, per daemon): what `renew` and `release` compare. */
  holder: string;
  pid: number;
  host: string;
  /** Kernel start time of `pid`, or null where /proc is not available. */
  startTime: string | null;
  acquiredAt: string;
  [field: string]: unknown;
}

export interface LockOptions {
  /** A lock not renewed for this long may be taken over, whoever holds it. */
  staleMs: number;
  now?: () => number;
  /** Whether a pid on this host is alive and started at `startTime`; injected by tests. */
  isAlive?: (pid: number, startTime: string | null) => boolean;
  /** The identity written into the lock (default: this process on this host). */
  identity?: { holder?: string; pid?: number; host?: string; [field: string]: unknown };
  /** Create the lock's folder when missing (only that one level, never a removed parent). */
  makeParent?: boolean;
  /**
   * Sync the lock file's content to disk (default true). A lock that only excludes other writers for
   * the length of one operation need not be: after a crash it is stale whatever it holds.
   */
  durable?: boolean;
  /** Test seam: runs after a lock was judged stale and before this process tries to take it over. */
  beforeTakeover?: () => Promise<void>;
}

export type TryLockResult =
  | { acquired: true; lock: FileLock; tookOver?: LockHolder & { ageMs: number } }
  | { acquired: false; holder?: LockHolder; ageMs?: number };

/** A lock this process holds. */
export class FileLock {
  constructor(
    readonly file: string,
    readonly info: LockHolder,
    private readonly now: () => number,
  ) {}

  private async mine(): Promise<boolean> {
    const current = await readHolder(this.file);
    return current?.holder === this.info.holder && current.acquiredAt === this.info.acquiredAt;
  }

  /** Pushes the mtime forward; false when the lock is no longer ours (taken over or removed). */
  async renew(): Promise<boolean> {
    if (!(await this.mine())) return false;
    const t = new Date(this.now());
    utimesSync(this.file, t, t);
    return true;
  }

  /** Removes the lock if it is still ours. */
  async release(): Promise<void> {
    if (await this.mine()) unlinkQuietly(this.file);
  }
}

export async function readHolder(file: string): Promise<LockHolder | undefined> {
  try {
    const parsed = JSON.parse(readRegularFileSync(file).toString('utf8')) as LockHolder;
    return parsed && typeof parsed === 'object' && typeof parsed.holder === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** stat of `file`; undefined when it is gone (or unreadable). */
function statOrAbsent(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

/** link(2), ignoring a failure (the name exists, or the source is gone). */
function linkQuietly(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    // someone else's lock is there now, or ours is gone
  }
}

const defaultAlive = (pid: number, startTime: string | null): boolean => isSameProcessAlive(pid, startTime);

/** This process's own kernel start time, read once. */
let ownStartTime: string | null | undefined;
const startTimeOf = (pid: number): string | null =>
  pid === process.pid ? (ownStartTime ??= processStartTime(pid)) : processStartTime(pid);

function holderOf(options: LockOptions): LockHolder {
  const now = options.now ?? Date.now;
  const { holder, pid, host, ...extra } = options.identity ?? {};
  const ownPid = pid ?? process.pid;
  return {
    ...extra,
    holder: holder ?? `${host ?? hostname()}:${ownPid}:${randomHex(6)}`,
    pid: ownPid,
    host: host ?? hostname(),
    startTime: startTimeOf(ownPid),
    acquiredAt: new Date(now()).toISOString(),
  };
}

/** Why a lock counts as stale (undefined: it is live). */
function staleness(
  seen: { mtimeMs: number },
  current: LockHolder | undefined,
  mine: LockHolder,
  options: LockOptions,
): string | undefined {
  const ageMs = (options.now ?? Date.now)() - seen.mtimeMs;
  if (ageMs > options.staleMs) return 'expired';
  // Unreadable content: a holder that died between create and write, once it had time to write.
  if (current === undefined) return ageMs > 1000 ? 'unreadable' : undefined;
  // A leftover of this very identity (a restart with the same holder id) is ours to replace.
  if (current.holder === mine.holder) return 'leftover';
  const alive = options.isAlive ?? defaultAlive;
  if (current.host === mine.host && !alive(current.pid, current.startTime ?? null)) return 'dead holder';
  return undefined;
}

/** Tries to take the lock: create it, or take it over when stale. */
export async function tryLock(file: string, options: LockOptions): Promise<TryLockResult> {
  const now = options.now ?? Date.now;
  const info = holderOf(options);
  let seen: Stats | undefined;
  let current: LockHolder | undefined;
  // A lock released between our create, our stat and our read is simply tried again (a few times).
  for (let attempt = 0; ; attempt++) {
    if (await createExclusive(file, info, options.makeParent, options.durable))
      return { acquired: true, lock: new FileLock(file, info, now) };
    seen = statOrAbsent(file);
    current = seen ? await readHolder(file) : undefined;
    const gone = !seen || (current === undefined && !statOrAbsent(file));
    if (!gone && seen) break;
    if (attempt >= 3) return { acquired: false };
  }
  if (!seen) return { acquired: false };
  const ageMs = now() - seen.mtimeMs;
  if (!staleness(seen, current, info, options)) return { acquired: false, holder: current, ageMs };
  await options.beforeTakeover?.();
  const token = `${file}.takeover-${seen.ino}-${Math.round(seen.mtimeMs)}`;
  if (!(await takeToken(token, info, now(), Math.max(options.staleMs, 5000))))
    return { acquired: false, holder: current, ageMs };
  try {
    const again = statOrAbsent(file);
    if (!again || again.ino !== seen.ino || again.mtimeMs !== seen.mtimeMs)
      return { acquired: false, holder: await readHolder(file), ageMs };
    const aside = `${file}.stale.${randomHex(6)}`;
    try {
      renameSync(file, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return { acquired: false, holder: await readHolder(file) };
      throw err;
    }
    const moved = statOrAbsent(aside);
    if (!moved || moved.ino !== seen.ino || moved.mtimeMs !== seen.mtimeMs) {
      // Released and re-created, or renewed, between our look and the rename: put it back.
      linkQuietly(aside, file);
      unlinkQuietly(aside);
      return { acquired: false, holder: current, ...(moved ? { ageMs: now() - moved.mtimeMs } : {}) };
    }
    unlinkQuietly(aside);
    if (!(await createExclusive(file, info, false, options.durable)))
      return { acquired: false, holder: await readHolder(file) };
    return {
      acquired: true,
      lock: new FileLock(file, info, now),
      ...(current ? { tookOver: { ...current, ageMs } } : {}),
    };
  } finally {
    unlinkQuietly(token);
  }
}

export interface WaitLockOptions extends LockOptions {
  /** How long to wait for a live holder before failing. */
  waitMs: number;
  /** What the lock protects, for the error message ("audit log", "skills source k8s4agents"). */
  what: string;
}

/** Waits until the lock is ours (polling with backoff); fails after `waitMs` naming the holder. */
export async function waitLock(file: string, options: WaitLockOptions): Promise<FileLock> {
  const got = await waitFor(
    () => tryLock(file, options),
    (g) => g.acquired,
    { waitMs: options.waitMs, delayMs: 2, maxDelayMs: 100 },
  );
  if (got.acquired) return got.lock;
  const h = got.holder;
  throw new Error(
    `${options.what} lock ${file} is held by ${h ? `process ${h.pid} on ${h.host}` : 'an unknown process'} for over ${options.waitMs} ms; remove the file if no triage-runner process is running`,
  );
}

/** Who holds the lock now and whether it counts as stale, without touching it. */
export async function inspectLock(
  file: string,
  options: LockOptions,
): Promise<{ holder?: LockHolder; stale: boolean; ageMs: number } | undefined> {
  const seen = statOrAbsent(file);
  if (!seen) return undefined;
  const current = await readHolder(file);
  const stale = staleness(seen, current, holderOf(options), options) !== undefined;
  return {
    ...(current ? { holder: current } : {}),
    stale,
    ageMs: (options.now ?? Date.now)() - seen.mtimeMs,
  };
}

/**
 * Creates the takeover token exclusively. A token older than `staleMs` (its taker died mid-takeover) is
 * removed instead and this attempt gives up; the next attempt competes for a fresh token.
 */
async function takeToken(token: string, info: LockHolder, nowMs: number, staleMs: number): Promise<boolean> {
  if (await createExclusive(token, info, false)) return true;
  const seen = statOrAbsent(token);
  if (seen && nowMs - seen.mtimeMs > staleMs) {
    const aside = `${token}.stale.${randomHex(6)}`;
    let moved: Stats | undefined;
    try {
      renameSync(token, aside);
      moved = statOrAbsent(aside);
    } catch {
      return false;
    }
    if (moved && moved.ino !== seen.ino) linkQuietly(aside, token);
    unlinkQuietly(aside);
  }
  return false;
}

/** Creates `file` with O_EXCL and O_NOFOLLOW, writes (and, when durable, syncs) the holder; false when it exists. */
async function createExclusive(
  file: string,
  info: LockHolder,
  makeParent = false,
  durable = true,
): Promise<boolean> {
  let fd: number;
  try {
    fd = openSync(
      file,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      fileModeFor(file),
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'ENOENT' && makeParent) {
      try {
        mkdirSync(path.dirname(file), dirModeFor(path.dirname(file)));
      } catch (mkdirErr) {
        const mkdirCode = (mkdirErr as NodeJS.ErrnoException).code;
        // The folder above is gone too (a removed workspace): nothing to lock.
        if (mkdirCode === 'ENOENT') return false;
        if (mkdirCode !== 'EEXIST') throw mkdirErr;
      }
      return createExclusive(file, info, false, durable);
    }
    if (code === 'ENOENT') return false;
    throw err;
  }
  try {
    writeFileSync(fd, JSON.stringify(info));
    if (durable) await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}
