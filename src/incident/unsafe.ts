import { createHash } from 'node:crypto';
import path from 'node:path';
import { unsafeStateDir } from '../shared/triage-paths.js';

// Folders that cannot be written into safely (they escape the root, or a daemon-owned path in them is a
// symlink) keep their state under `<root>/.triage/unsafe/` instead: one file per folder name.

const hash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** The state file of an unsafe folder: long or odd names still map to one short, safe file name. */
export const unsafeStatePath = (root: string, name: string): string =>
  path.join(unsafeStateDir(root), `${encodeURIComponent(name).slice(0, 100)}-${hash(name)}.state.json`);
