import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { dedupDir } from '../shared/triage-paths.js';
import { writeFileAtomic } from '../util/fs.js';
import { ensureOwnDir } from '../util/safe-path.js';

// The dedup window, kept on disk under `<root>/.triage/dedup/` so that it holds across restarts and
// between replicas sharing the root: the first incident for a cluster + resource + faultType creates
// the key's file exclusively; another incident with the same key inside the window is a duplicate.

export interface DedupEntry {
  incidentId: string;
  /** Epoch ms of the first incident. */
  at: number;
}

export function dedupKey(incident: {
  cluster: string;
  namespace: string;
  faultType: string;
  resource: { kind: string; name: string; namespace?: string };
}): string {
  const r = incident.resource;
  return JSON.stringify([
    incident.cluster,
    r.namespace ?? incident.namespace,
    r.kind,
    r.name,
    incident.faultType,
  ]);
}

export class DedupStore {
  readonly dir: string;

  constructor(
    root: string,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.dir = dedupDir(root);
  }

  private file(key: string): string {
    return path.join(this.dir, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
  }

  private async read(file: string): Promise<DedupEntry | undefined> {
    try {
      const e = JSON.parse(await readFile(file, 'utf8')) as DedupEntry;
      return typeof e.incidentId === 'string' && typeof e.at === 'number' ? e : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Records `incidentId` as the first for `key`, or answers the earlier incident when another one
   * holds the key inside the window. An expired entry is replaced.
   */
  async claim(key: string, incidentId: string): Promise<{ incidentId: string; ageMs: number } | undefined> {
    const file = this.file(key);
    const now = this.now();
    const entry = JSON.stringify({ incidentId, at: now, key });
    await ensureOwnDir(this.dir, path.dirname(path.dirname(this.dir)));
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const handle = await open(
          file,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          0o644,
        );
        try {
          await handle.writeFile(entry);
        } finally {
          await handle.close();
        }
        return undefined;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const first = await this.read(file);
      if (!first) {
        // Being written by another process, or unreadable: give it a moment, then replace it.
        const info = await stat(file).catch(() => undefined);
        if (info && now - info.mtimeMs < 1000) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
      } else if (first.incidentId === incidentId) {
        return undefined;
      } else if (now - first.at <= this.windowMs) {
        return { incidentId: first.incidentId, ageMs: now - first.at };
      }
      // Expired (or unreadable): the window starts again with this incident.
      await writeFileAtomic(file, entry);
      return undefined;
    }
    return undefined;
  }

  /** Frees `key` when `incidentId` holds it (its alert resolved before it ran: a new firing is a new incident). */
  async release(key: string, incidentId: string): Promise<void> {
    const file = this.file(key);
    const entry = await this.read(file);
    if (entry?.incidentId !== incidentId) return;
    const aside = `${file}.released.${incidentId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 60)}`;
    if (
      await rename(file, aside).then(
        () => true,
        () => false,
      )
    ) {
      // Replaced meanwhile by another incident's claim: put that one back.
      const moved = await this.read(aside);
      if (moved?.incidentId !== incidentId) await rename(aside, file).catch(() => undefined);
      else await unlink(aside).catch(() => undefined);
    }
  }

  /** Removes entries older than the window (cheap housekeeping on rescans). */
  async prune(): Promise<number> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    let removed = 0;
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const file = path.join(this.dir, name);
      const entry = await this.read(file);
      if (entry && this.now() - entry.at <= this.windowMs) continue;
      const info = await stat(file).catch(() => undefined);
      if (!info || this.now() - info.mtimeMs <= this.windowMs) continue;
      // Moved aside first so that a replica re-creating the key meanwhile is not deleted.
      const aside = `${file}.expired`;
      if (
        await rename(file, aside).then(
          () => true,
          () => false,
        )
      ) {
        await unlink(aside).catch(() => undefined);
        removed++;
      }
    }
    return removed;
  }
}
