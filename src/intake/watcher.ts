import { watch, type FSWatcher } from 'chokidar';
import path from 'node:path';
import { INCIDENT_FILE } from './read.js';

// Watches `<root>/<folder>/incident.json` (depth 1) and reports the folder whenever that file is
// added or changed, or a folder appears. No awaitWriteFinish: the caller judges completeness
// (complete JSON goes at once; anything else waits for the write to settle).

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
  /** Resolves once the initial scan of chokidar is done and events flow. */
  ready: Promise<void>;
  /** Stops reporting a folder (a finished incident) at once; its watch is released with the next batch. */
  forget(dir: string): void;
  /** Watches a forgotten folder again. */
  watchAgain(dir: string): void;
  /** Whether a folder is watched now (a forgotten one until its batch is released). */
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
  /** Forgotten folders whose watches are released together (default RELEASE_EVERY). */
  releaseEvery?: number;
}

/**
 * Forgotten folders are released in batches of this many: the watcher is started afresh without them
 * and the old one closed. chokidar's own `unwatch` adds every path it lets go of to an ignore list that
 * each later event is matched against, path by path: with thousands of finished incidents a daemon
 * spent nearly all its time there.
 */
export const RELEASE_EVERY = 256;

export function watchIncidents(options: WatchOptions): IncidentWatcher {
  const root = path.resolve(options.root);
  const releaseEvery = options.releaseEvery ?? RELEASE_EVERY;
  /** Folders not reported (finished incidents), checked in O(1) by the ignore function and the handlers. */
  const forgotten = new Set<string>();
  /** Forgotten folders the current chokidar watcher still holds a watch on. */
  let held = new Set<string>();
  const folderOf = (file: string): string | undefined => {
    const rel = path.relative(root, file);
    if (rel === '' || rel.startsWith('..')) return undefined;
    return path.join(root, rel.split(path.sep)[0] ?? '');
  };
  /** In a forgotten folder, or in one the caller skips (finished incidents at start-up). */
  const isSkipped = (file: string) => {
    const dir = folderOf(file);
    return dir !== undefined && (forgotten.has(dir) || options.skipFolder?.(dir) === true);
  };
  const open = new Set<FSWatcher>();
  let closed = false;

  const start = (): { watcher: FSWatcher; ready: Promise<void> } => {
    const watcher: FSWatcher = watch(root, {
      depth: 1,
      ignoreInitial: true,
      persistent: true,
      followSymlinks: false,
      ignored: (file: string) => ignoredPath(root, file) || isSkipped(file),
    });
    const onFile = (cause: 'add' | 'change') => (file: string) => {
      if (path.basename(file) !== INCIDENT_FILE) return;
      const dir = path.dirname(file);
      if (path.dirname(dir) !== root || forgotten.has(dir)) return;
      options.onFolder(dir, cause);
    };
    watcher.on('add', onFile('add'));
    watcher.on('change', onFile('change'));
    watcher.on('addDir', (dir: string) => {
      if (path.dirname(dir) === root && !forgotten.has(dir)) options.onFolder(dir, 'addDir');
    });
    watcher.on('unlinkDir', (dir: string) => {
      if (dir === root) options.onRootGone?.();
    });
    watcher.on('error', options.onError);
    open.add(watcher);
    return { watcher, ready: new Promise<void>((resolve) => watcher.once('ready', () => resolve())) };
  };

  const first = start();
  let current = first.watcher;
  let releasing: Promise<void> | undefined;
  /** Folders watched again while a release was under way: the fresh watcher may have skipped them. */
  let againDuringRelease: string[] = [];
  const watchFolder = (watcher: FSWatcher, dir: string) => watcher.add([dir, path.join(dir, INCIDENT_FILE)]);
  /** A fresh watcher without the forgotten folders takes over once it is ready; the old one closes. */
  const release = () => {
    releasing ??= (async () => {
      held = new Set();
      againDuringRelease = [];
      const next = start();
      await next.ready;
      const old = current;
      current = next.watcher;
      open.delete(old);
      for (const dir of againDuringRelease) if (!forgotten.has(dir)) watchFolder(current, dir);
      againDuringRelease = [];
      await old.close();
      if (closed) await next.watcher.close();
    })()
      .catch(options.onError)
      .finally(() => (releasing = undefined));
  };

  return {
    ready: first.ready,
    forget: (dir) => {
      forgotten.add(dir);
      held.add(dir);
      if (held.size >= releaseEvery && !closed) release();
    },
    watchAgain: (dir) => {
      forgotten.delete(dir);
      held.delete(dir);
      // Added again even while held: chokidar drops the watch of an entry it found ignored.
      watchFolder(current, dir);
      if (releasing) againDuringRelease.push(dir);
    },
    watching: (dir) => current.getWatched()[dir] !== undefined,
    close: async () => {
      closed = true;
      await Promise.all([...open].map((w) => w.close()));
      open.clear();
    },
  };
}
