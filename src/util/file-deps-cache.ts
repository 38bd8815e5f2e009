import { statSync } from 'node:fs';

// Results built from files that rarely change (a persona folder, the briefs tree, boot.yml, a said
// brief): kept with the signature of every file and folder they were built from, and rebuilt only when
// one of those changed. A hit costs one stat per dependency instead of reads, walks and parsing.
// A signature is inode, size, mtime and ctime (a folder's mtime moves when an entry is added, removed
// or renamed); a path that did not exist is recorded as absent, so creating it invalidates too.

/** What a dependency looked like when the value was built. */
type Signature = string;

const ABSENT = '-';

/** A file's (or folder's) signature: inode, size, mtime and ctime in ns, or absent. */
export async function signatureOf(file: string): Promise<Signature> {
  let s;
  try {
    // Synchronous: one call of a few microseconds on a local disk (see util/fs.ts).
    s = statSync(file, { bigint: true });
  } catch {
    s = undefined;
  }
  return s ? `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : ABSENT;
}

/** A loader's result: the value and every path whose content or listing it was built from. */
export interface Built<T> {
  value: T;
  deps: readonly string[];
}

/**
 * A change made while the value was being built could leave a signature newer than what was read:
 * a dependency modified this recently is not trusted (the value is used once, not kept), as git does
 * with "racily clean" entries.
 */
const RACY_MS = 1000n;

/** A bounded cache of built values by key; the oldest entry goes first when full. */
export class FileDepsCache<T> {
  private readonly entries = new Map<string, { deps: [string, Signature][]; value: T }>();
  /** Builds under way: runs that start together share one. */
  private readonly pending = new Map<string, Promise<T>>();
  /** How many times a value was built (not served from the cache): what tests observe. */
  builds = 0;

  constructor(
    private readonly maxEntries = 32,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached value of `key` while none of its dependencies changed, else `build()`'s. Failures are not kept. */
  async get(key: string, build: () => Promise<Built<T>>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && (await unchanged(hit.deps))) return hit.value;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.build(key, build).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }

  private async build(key: string, build: () => Promise<Built<T>>): Promise<T> {
    this.entries.delete(key);
    const startedNs = BigInt(Math.floor(this.now())) * 1_000_000n;
    this.builds++;
    const built = await build();
    const deps = await Promise.all(
      [...new Set(built.deps)].map(async (d): Promise<[string, Signature]> => [d, await signatureOf(d)]),
    );
    if (deps.some(([, sig]) => recentlyModified(sig, startedNs))) return built.value;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { deps, value: built.value });
    return built.value;
  }

  clear(): void {
    this.entries.clear();
  }
}

async function unchanged(deps: [string, Signature][]): Promise<boolean> {
  const now = await Promise.all(deps.map(([d]) => signatureOf(d)));
  return deps.every(([, sig], i) => now[i] === sig);
}

/** The signature's mtime is within RACY_MS of `sinceNs` or later: a change in the same clock tick may not show. */
export function recentlyModified(sig: Signature, sinceNs: bigint): boolean {
  if (sig === ABSENT) return false;
  const mtimeNs = BigInt(sig.split(':')[2] ?? '0');
  return mtimeNs >= sinceNs - RACY_MS * 1_000_000n;
}
