import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { INCIDENT_FILE } from '../workspace/layout.js';

// Watches `<root>/<folder>/incident.json` (depth 1) and reports the folder whenever that file is
// added or changed, or a folder appears. No awaitWriteFinish: the caller judges completeness
// (complete JSON goes at once; anything else waits for the write to settle).
//
// One `fs.watch` on the root and one on each folder being watched (inotify on Linux). Each event
// names the entry that changed, so an event costs the same with ten folders in the root or ten
// thousand. Not chokidar: on every change of a folder it lists the whole folder again and `lstat`s
// every entry (at most once a second, plus once more for changes meanwhile); with thousands of
// incidents in the root that listing was most of the daemon's CPU, and it blocked the event loop for
// 100–300 ms at a time. Whatever a watcher misses (a full event queue, a platform without file
// names) is found by the inspector's periodic rescan.

const TEMP_FILE = /(\.tmp|~|\.swp|\.swx|\.part|\.crdownload)$/i;

/** True for paths intake never looks at: dotfiles (incl. `.triage/`), temp files, anything in a folder but incident.json. */
export function ignoredPath(root: string, file: string): boolean {
  const rel = path.relative(root, file);
  if (rel === '') return false;
  const parts = rel.split(path.sep);
  if (parts.length > 2) return true;
  // Inside a workspace folder only incident.json matters (output/, runs, the producer's other files do not).
  if (parts.length === 2 && parts[1] !== INCIDENT_FILE) return true;
  return parts.some((p) => p.startsWith('.') || p.startsWith('#') || TEMP_FILE.test(p));
}

export interface IncidentWatcher {
  /** Resolves once the folders in the root are watched and events flow. */
  ready: Promise<void>;
  /** Stops reporting a folder (a finished incident) and releases its watch. */
  forget(dir: string): void;
  /** Watches a forgotten folder again. */
  watchAgain(dir: string): void;
  /** Whether a folder is watched now. */
  watching(dir: string): boolean;
  close(): Promise<void>;
}

export interface WatchOptions {
  root: string;
  /** A folder whose incident.json was added or changed, or that appeared. */
  onFolder: (dir: string, cause: 'add' | 'change' | 'addDir') => void;
  onError: (err: unknown) => void;
  /** The root itself was removed: this watcher sees nothing more, even if the root is re-created. */
  onRootGone?: () => void;
  /** Folders not to watch at all (finished incidents): keeps start-up cheap with many of them. */
  skipFolder?: (dir: string) => boolean;
}

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code;
/** A watch that fails because its folder is gone (or was replaced by a file): nothing to report. */
const isGone = (err: unknown) => codeOf(err) === 'ENOENT' || codeOf(err) === 'ENOTDIR';

function watchError(dir: string, err: unknown): Error {
  const code = codeOf(err);
  const why =
    code === 'ENOSPC'
      ? "the system's limit of inotify watches is reached (raise fs.inotify.max_user_watches)"
      : code === 'EMFILE'
        ? 'too many open files (raise the limit of open files, ulimit -n)'
        : (err as Error).message;
  return new Error(
    `cannot watch ${dir}: ${why}; its incident is still found by the periodic rescan (scheduling.rescan_interval)`,
    { cause: err },
  );
}

export function watchIncidents(options: WatchOptions): IncidentWatcher {
  const root = path.resolve(options.root);
  /** The watch on each folder being watched, with the folder's inode when known (a folder removed and
   * made again under the same name is a new folder: its old watch sees nothing of it). */
  const folders = new Map<string, { watcher: FSWatcher; ino?: number }>();
  /** Folders whose incident.json has been seen: its next event is a change, not an add. */
  const present = new Set<string>();
  /** Folders not reported (finished incidents) until watched again. */
  const forgotten = new Set<string>();
  let closed = false;
  let rootWatch: FSWatcher | undefined;

  const report = (dir: string, cause: 'add' | 'change' | 'addDir') => {
    if (!closed && !forgotten.has(dir)) options.onFolder(dir, cause);
  };
  const fail = (err: unknown) => {
    if (!closed) options.onError(err);
  };

  const unwatchFolder = (dir: string) => {
    folders.get(dir)?.watcher.close();
    folders.delete(dir);
    present.delete(dir);
  };

  /** Folders whose incident.json is being looked at, and whether more events came meanwhile. */
  const looking = new Map<string, { again: boolean }>();
  /** incident.json in `dir` changed (or may have): reported when it is there. A burst of events
   * while it is looked at (a write's truncate and its data) is reported once more, not once each. */
  const incidentEvent = async (dir: string): Promise<void> => {
    const busy = looking.get(dir);
    if (busy) {
      busy.again = true;
      return;
    }
    const look = { again: false };
    looking.set(dir, look);
    try {
      do {
        look.again = false;
        const info = await lstat(path.join(dir, INCIDENT_FILE)).catch(() => undefined);
        if (!info || closed || !folders.has(dir)) continue;
        const cause = present.has(dir) ? 'change' : 'add';
        present.add(dir);
        report(dir, cause);
      } while (look.again && !closed);
    } finally {
      looking.delete(dir);
    }
  };

  const watchFolder = (dir: string, ino?: number) => {
    if (closed || folders.has(dir)) return;
    let w: FSWatcher;
    try {
      w = watch(dir, { persistent: true }, (_event, name) => {
        if (name === null || name.toString() === INCIDENT_FILE) void incidentEvent(dir);
      });
    } catch (err) {
      if (!isGone(err)) fail(watchError(dir, err));
      return;
    }
    w.on('error', (err) => {
      if (folders.get(dir)?.watcher === w) unwatchFolder(dir);
      if (!isGone(err) && codeOf(err) !== 'EPERM') fail(watchError(dir, err));
    });
    folders.set(dir, { watcher: w, ...(ino !== undefined ? { ino } : {}) });
  };

  /** A root entry appeared, changed or went away: a folder is watched (and its incident.json checked). */
  const rootEvent = async (name: string) => {
    const dir = path.join(root, name);
    if (ignoredPath(root, dir)) return;
    const info = await lstat(dir).catch(() => undefined);
    if (closed) return;
    if (!info) {
      if (name === path.basename(root) && !(await exists(root))) return rootGone();
      unwatchFolder(dir);
      return;
    }
    // A symlink is never followed (the periodic rescan judges and reports it); a file is not a workspace.
    if (!info.isDirectory() || forgotten.has(dir) || options.skipFolder?.(dir) === true) return;
    const held = folders.get(dir);
    if (held && held.ino === info.ino) return;
    if (held) unwatchFolder(dir);
    watchFolder(dir, info.ino);
    // A folder renamed in whole already holds its incident.json: one report, of the file. An empty
    // one is reported as a new folder (the caller looks again shortly); its file comes as an event.
    const hasIncident = await exists(path.join(dir, INCIDENT_FILE));
    if (closed || !folders.has(dir)) return;
    if (!hasIncident) return report(dir, 'addDir');
    if (present.has(dir)) return;
    present.add(dir);
    report(dir, 'add');
  };

  let gone = false;
  const rootGone = () => {
    if (closed || gone) return;
    gone = true;
    rootWatch?.close();
    rootWatch = undefined;
    for (const dir of [...folders.keys()]) unwatchFolder(dir);
    options.onRootGone?.();
  };

  /** Every folder in the root (start-up, and a root watch that could not name what changed). */
  const listRoot = async (initial: boolean) => {
    let names: string[];
    try {
      names = await readdir(root);
    } catch (err) {
      if (isGone(err)) return rootGone();
      throw err;
    }
    for (const name of names) {
      const dir = path.join(root, name);
      if (initial) {
        if (ignoredPath(root, dir) || options.skipFolder?.(dir) === true) continue;
        const info = await lstat(dir).catch(() => undefined);
        if (!info?.isDirectory()) continue;
        watchFolder(dir, info.ino);
        if (await exists(path.join(dir, INCIDENT_FILE))) present.add(dir);
      } else await rootEvent(name);
    }
  };

  const ready = (async () => {
    try {
      rootWatch = watch(root, { persistent: true }, (_event, name) => {
        if (name === null) void listRoot(false).catch(fail);
        else void rootEvent(name.toString()).catch(fail);
      });
      rootWatch.on('error', (err) => {
        void exists(root).then((there) => (there ? fail(watchError(root, err)) : rootGone()));
      });
      await listRoot(true);
    } catch (err) {
      if (isGone(err)) rootGone();
      else fail(watchError(root, err));
    }
  })();

  return {
    ready,
    forget: (dir) => {
      forgotten.add(dir);
      unwatchFolder(dir);
    },
    watchAgain: (dir) => {
      forgotten.delete(dir);
      watchFolder(dir);
      // Its incident.json was seen before it was forgotten: the next event is a change.
      if (folders.has(dir)) present.add(dir);
    },
    watching: (dir) => folders.has(dir),
    close: async () => {
      closed = true;
      rootWatch?.close();
      for (const { watcher } of folders.values()) watcher.close();
      folders.clear();
      present.clear();
      await ready;
    },
  };
}

const exists = (file: string) =>
  lstat(file).then(
    () => true,
    () => false,
  );
