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
  /** Stops watching a folder (a finished incident): its watch and memory are released. */
  forget(dir: string): void;
  /** Watches a forgotten folder again. */
  watchAgain(dir: string): void;
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

export function watchIncidents(options: WatchOptions): IncidentWatcher {
  const root = path.resolve(options.root);
  const watcher: FSWatcher = watch(root, {
    depth: 1,
    ignoreInitial: true,
    persistent: true,
    followSymlinks: false,
    ignored: (file: string) => ignoredPath(root, file) || skipped(root, file, options.skipFolder),
  });
  const onFile = (cause: 'add' | 'change') => (file: string) => {
    if (path.basename(file) !== INCIDENT_FILE) return;
    const dir = path.dirname(file);
    if (path.dirname(dir) !== root) return;
    options.onFolder(dir, cause);
  };
  watcher.on('add', onFile('add'));
  watcher.on('change', onFile('change'));
  watcher.on('addDir', (dir: string) => {
    if (path.dirname(dir) === root) options.onFolder(dir, 'addDir');
  });
  watcher.on('unlinkDir', (dir: string) => {
    if (dir === root) options.onRootGone?.();
  });
  watcher.on('error', options.onError);
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    ready,
    // The folder and its incident.json: chokidar watches the file on its own too.
    forget: (dir) => void watcher.unwatch([dir, path.join(dir, INCIDENT_FILE)]),
    watchAgain: (dir) => void watcher.add([dir, path.join(dir, INCIDENT_FILE)]),
    close: () => watcher.close(),
  };
}

function skipped(root: string, file: string, skipFolder: ((dir: string) => boolean) | undefined): boolean {
  if (!skipFolder) return false;
  const rel = path.relative(root, file);
  if (rel === '' || rel.startsWith('..')) return false;
  return skipFolder(path.join(root, rel.split(path.sep)[0] ?? ''));
}
