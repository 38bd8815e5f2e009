import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { link, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { fileModeFor } from '../util/fs.js';
import { randomHex } from '../util/random.js';
import { dedupDir } from '../workspace/layout.js';
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

/** A file's text, or undefined when it does not exist (or cannot be read). */
async function readText(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch(() => undefined);
}

function parseEntry(text: string | undefined): DedupEntry | undefined {
  if (text === undefined) return undefined;
  try {
    const e = JSON.parse(text) as Partial<DedupEntry> | null;
    return typeof e?.incidentId === 'string' && Number.isFinite(e.at) ? (e as DedupEntry) : undefined;
  } catch {
    return undefined;
  }
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

  /**
   * Whether an entry made at `at` still holds its key at `now`. One dated more than a window ahead is
   * damaged (no replica's clock is that far off), not held for ever.
   */
  private holds(at: number, now: number): boolean {
    return now - at <= this.windowMs && at - now <= this.windowMs;
  }

  private async read(file: string): Promise<DedupEntry | undefined> {
    return parseEntry(await readText(file));
  }

  /**
   * Records `incidentId` as the first for `key`, or answers the earlier incident when another one
   * holds the key inside the window. An expired (or damaged) entry is replaced by exactly one claimer:
   * the one that creates its successor file, named after the content it replaces; the others that saw
   * the same content are duplicates of that one.
   */
  async claim(key: string, incidentId: string): Promise<{ incidentId: string; ageMs: number } | undefined> {
    const file = this.file(key);
    const now = this.now();
    const entry = JSON.stringify({ incidentId, at: now, key });
    await ensureOwnDir(this.dir, path.dirname(path.dirname(this.dir)));
    const held = (e: DedupEntry | undefined) =>
      e && e.incidentId !== incidentId && this.holds(e.at, now)
        ? { incidentId: e.incidentId, ageMs: now - e.at }
        : undefined;
    for (let attempt = 0; attempt < 8; attempt++) {
      if (await this.create(file, entry)) return undefined;
      const seen = await readText(file);
      if (seen === undefined) continue; // released or pruned meanwhile: create again
      const first = parseEntry(seen);
      if (first?.incidentId === incidentId) return undefined;
      const earlier = held(first);
      if (earlier) return earlier;
      // Expired, or unreadable (a key file is created whole, so an unreadable one is damaged, never
      // half written): the window starts again with the claimer that creates the successor.
      const next = `${file}.${createHash('sha256').update(seen).digest('hex').slice(0, 16)}.next`;
      if (!(await this.create(next, entry))) {
        const successor = await readText(next);
        const holder = parseEntry(successor);
        // A successor counts only while the content it succeeds is still in place: one created after
        // another claimer already replaced that content is about to be dropped by its own claimer.
        if ((await readText(file)) !== seen) continue;
        const taker = held(holder);
        if (taker) return taker;
        if (holder?.incidentId !== incidentId) {
          // Gone (put in place meanwhile: read the key again), or left by a claimer that crashed
          // before putting it in place a whole window ago.
          if (successor !== undefined) await unlink(next).catch(() => undefined);
          continue;
        }
        // Our own, from a claim that crashed before putting it in place: finish it.
      }
      // Put in place only over the content it succeeds; a successor created after another claimer
      // already replaced that content is dropped, and the key is read again.
      if ((await readText(file)) === seen) {
        await rename(next, file);
        return undefined;
      }
      await unlink(next).catch(() => undefined);
    }
    throw new Error(
      `dedup key file ${file} kept changing while incident ${incidentId} claimed it: another process is rewriting ${this.dir}; check that only triage-runner daemons share this workspaces root`,
    );
  }

  /**
   * Creates the key's file with its whole content, or false when it exists. The entry is written to a
   * private file first and linked into place (link fails when the name exists), so another claimer never
   * reads a key file that exists but is still empty.
   */
  private async create(file: string, entry: string): Promise<boolean> {
    const own = `${file}.${process.pid}.${randomHex(6)}.new`;
    const handle = await open(
      own,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      fileModeFor(own),
    );
    try {
      await handle.writeFile(entry);
    } finally {
      await handle.close();
    }
    try {
      await link(own, file);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return false;
    } finally {
      await unlink(own).catch(() => undefined);
    }
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
      if (name.endsWith('.next')) {
        // A successor left by a claimer that crashed before putting it in place.
        const info = await stat(path.join(this.dir, name)).catch(() => undefined);
        if (info && this.now() - info.mtimeMs > this.windowMs)
          await unlink(path.join(this.dir, name)).catch(() => undefined);
        continue;
      }
      if (!name.endsWith('.json')) continue;
      const file = path.join(this.dir, name);
      const entry = await this.read(file);
      if (entry && this.holds(entry.at, this.now())) continue;
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
