import { mkdir, stat } from 'node:fs/promises';
import type { Logger } from '../log/logger.js';
import { watchIncidents, type IncidentWatcher } from '../intake/watcher.js';
import { errorMessage } from '../util/errors.js';

// The workspaces root: whether it is there, and the watcher on it. A root that is removed, replaced
// or unlistable makes intake blind: say so once, drop the watcher, check every second, and when the root
// is back watch it afresh and catch up. The root is never re-created here: it may be an unmounted
// mount point, and writing under it would hide the real volume.

/** How often the root is checked for being removed, replaced or back (ms). */
const ROOT_CHECK_MS = 1000;

const folderId = (info: { ino: number; birthtimeMs: number }): string => `${info.ino}:${info.birthtimeMs}`;

export interface RootMonitorDeps {
  root: string;
  log: Logger;
  /** Check period cap (the rescan interval, when shorter). */
  checkMs: number;
  onFolder: (dir: string, cause: 'add' | 'change' | 'addDir') => void;
  /** Called while the root is down (every check) and once when it is back: the daemon rescans. */
  onRescanNeeded: () => void;
  /** Folders the watcher need not watch (finished incidents). */
  skipFolder: (dir: string) => boolean;
}

export class RootMonitor {
  private watcher: IncidentWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private rootId: string | undefined;
  private stopped = false;
  /** Why the root is unavailable; undefined while it is fine. */
  down: string | undefined;

  constructor(private readonly deps: RootMonitorDeps) {}

  /**
   * Checks the root is a folder and starts the periodic check. A missing root is created at start-up
   * only when the folder above it exists (never a whole path: that could be an unmounted mount point).
   */
  async open(): Promise<void> {
    let info;
    try {
      info = await stat(this.deps.root).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        await mkdir(this.deps.root);
        this.deps.log.info({ root: this.deps.root }, 'created the workspaces root');
        return stat(this.deps.root);
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
      throw new Error(
        `workspaces root ${this.deps.root} cannot be used (${code}): create it as a folder the daemon may write (or mount its volume), or point workspaces_root / --workspaces-root elsewhere`,
        { cause: err },
      );
    }
    if (!info.isDirectory())
      throw new Error(
        `workspaces root ${this.deps.root} is not a folder: point workspaces_root / --workspaces-root at a folder`,
      );
    this.rootId = folderId(info);
    const every = Math.min(ROOT_CHECK_MS, this.deps.checkMs);
    this.timer = setInterval(() => void this.check(), every);
    this.timer.unref();
  }

  /** Starts watching (after the start-up scan). */
  async watch(): Promise<void> {
    if (this.stopped || this.down) return;
    const watcher = watchIncidents({
      root: this.deps.root,
      onFolder: this.deps.onFolder,
      onError: (err) => this.deps.log.error({ err: errorMessage(err) }, 'watcher error'),
      onRootGone: () => this.unavailable('the folder was removed'),
      skipFolder: this.deps.skipFolder,
    });
    this.watcher = watcher;
    await watcher.ready;
  }

  /** Stops reporting a finished incident's folder (until `watchAgain`) and releases its watch. */
  forget(dir: string): void {
    this.watcher?.forget(dir);
  }

  watchAgain(dir: string): void {
    this.watcher?.watchAgain(dir);
  }

  /** A scan could (or could not) list the root. */
  listed(ok: boolean, why?: string): void {
    if (!ok) return this.unavailable(why ?? 'cannot list it');
    if (!this.down) return;
    this.down = undefined;
    this.deps.log.info({ root: this.deps.root }, 'workspaces root is available again; watching it');
    if (this.stopped) return;
    void stat(this.deps.root)
      .then((info) => {
        this.rootId = folderId(info);
        return this.watch();
      })
      .then(() => this.deps.onRescanNeeded())
      .catch((err: unknown) =>
        this.deps.log.error(
          { root: this.deps.root, err: errorMessage(err) },
          'restarting the watcher failed',
        ),
      );
  }

  private async check(): Promise<void> {
    if (this.stopped) return;
    if (this.down) return this.deps.onRescanNeeded();
    const info = await stat(this.deps.root).catch((err: unknown) => err as NodeJS.ErrnoException);
    if (info instanceof Error) return this.unavailable(`cannot stat it: ${info.code ?? info.message}`);
    if (!info.isDirectory()) return this.unavailable('it is not a directory');
    if (this.rootId !== undefined && folderId(info) !== this.rootId)
      this.unavailable('it was removed and re-created');
  }

  private unavailable(why: string): void {
    if (this.down || this.stopped) return;
    this.down = why;
    const everyMs = Math.min(ROOT_CHECK_MS, this.deps.checkMs);
    this.deps.log.error(
      { root: this.deps.root, reason: why, everyMs },
      `workspaces root ${this.deps.root} is unavailable (${why}): no incident is detected until it is back; create it or fix its permissions (checking every ${everyMs} ms)`,
    );
    const watcher = this.watcher;
    this.watcher = undefined;
    void watcher?.close();
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    const watcher = this.watcher;
    this.watcher = undefined;
    await watcher?.close();
  }
}
