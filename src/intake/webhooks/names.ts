import { randomHex } from '../../util/random.js';

// Workspace folder names derived from untrusted alert text: one path segment under the root, no
// control characters, nothing the watcher ignores (a leading dot or #, a temp-file suffix), bounded
// length, and a random suffix so that two incidents never share a folder.

const READABLE_MAX = 80;

/** `20261122T010203Z-KubePodCrashLooping-shop-web-3f9a1c2b`: readable parts, then a unique suffix. */
export function folderName(parts: readonly string[], unique = randomHex(4)): string {
  const readable = parts
    .map((p) =>
      p
        .normalize('NFKD')
        .replace(/[\u0300-\u036f]/g, '')
        .replace(/[^A-Za-z0-9._-]+/g, '-')
        .replace(/\.{2,}/g, '.'),
    )
    .filter((p) => p.replace(/[-._]/g, '') !== '')
    .join('-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-._#]+/, '')
    .slice(0, READABLE_MAX)
    .replace(/[-._]+$/, '');
  return readable ? `${readable}-${unique}` : `incident-${unique}`;
}
