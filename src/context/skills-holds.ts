import { rmSync } from 'node:fs';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomHex } from '../util/random.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { isSameProcessAlive } from '../util/process.js';

// Which skills commits runs still use: a count per commit in this process, and one file per snapshot
// under `<cache>/.holds/<source>/<commit>/<pid>.<random>.<host>` so a collector in another process
// sharing the cache (`skills sync` next to the daemon) keeps them too.

const HOLDS_DIR = '.holds';
/** A hold lapses after this long (far beyond any run); one from another host cannot be checked otherwise. */
export const HOLD_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export class SkillsHolds {
  private readonly held = new Map<string, number>();
  private warned = false;

  constructor(
    private readonly root: string,
    private readonly who: { pid: number; host: string },
    private readonly log: Logger,
    private readonly now: () => Date,
  ) {}

  /** Records on disk that this process holds `commit`, so a collector in any process keeps it. */
  async write(name: string, commit: string): Promise<string | undefined> {
    const dir = this.dir(name, commit);
    const file = path.join(dir, `${this.who.pid}.${randomHex(4)}.${this.who.host}`);
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(file, '');
      return file;
    } catch (err) {
      // A read-only cache still serves runs; only another process's collector could then miss the hold.
      const meta = { source: name, commit, err: errorMessage(err) };
      if (this.warned) this.log.debug(meta, 'skills cache: cannot record a hold');
      else this.log.warn(meta, 'skills cache: cannot record a hold');
      this.warned = true;
      return undefined;
    }
  }

  /** Counts a snapshot's use of `name/commit` in this process. */
  hold(key: string): void {
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
  }

  /** Ends what `hold` and `write` recorded for one snapshot. */
  release(keys: string[], files: string[]): void {
    for (const key of keys) {
      const n = (this.held.get(key) ?? 1) - 1;
      if (n <= 0) this.held.delete(key);
      else this.held.set(key, n);
    }
    for (const file of files) removeHoldFile(file);
  }

  /** Held by a snapshot of this process, or by a live one of any process (holds of dead ones go). */
  async isHeld(name: string, commit: string, onDisk: boolean): Promise<boolean> {
    if ((this.held.get(`${name}/${commit}`) ?? 0) > 0) return true;
    return onDisk && (await this.heldOnDisk(name, commit));
  }

  /** Forgets the hold files of a commit that was removed. */
  async forget(name: string, commit: string): Promise<void> {
    await rm(this.dir(name, commit), { recursive: true, force: true });
  }

  private dir(name: string, commit: string): string {
    return path.join(this.root, HOLDS_DIR, name, commit);
  }

  private async heldOnDisk(name: string, commit: string): Promise<boolean> {
    const dir = this.dir(name, commit);
    const files = await readdir(dir).catch(() => [] as string[]);
    let live = false;
    for (const file of files) {
      const m = /^(\d+)\.[0-9a-f]+\.(.+)$/.exec(file);
      const full = path.join(dir, file);
      const info = await stat(full).catch(() => undefined);
      if (!info) continue;
      // Any hold lapses with age (a restarted container's pid 1 is alive again); ours also with its process.
      const fresh = this.now().getTime() - info.mtimeMs < HOLD_MAX_AGE_MS;
      const alive = m && m[2] === this.who.host ? isSameProcessAlive(Number(m[1])) : true;
      if (fresh && alive) live = true;
      else await rm(full, { force: true });
    }
    return live;
  }
}

/** Synchronous so that `release()` has taken effect when it returns (even right before exit). */
export function removeHoldFile(file: string | undefined): void {
  try {
    if (file) rmSync(file, { force: true });
  } catch {
    // An unremovable hold only keeps a commit longer; it lapses when this process is gone.
  }
}
