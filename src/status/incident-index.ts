import path from 'node:path';
import { Limiter } from '../util/limiter.js';
import type { StateChange } from '../incident/store.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { compareEntries, DEFAULT_LIMIT, matchCount, pageOf, sortKeyOf, type PageRequest } from './pages.js';
import { readIncidentFacts, type IncidentFacts } from './read.js';
import { incidentFolders, readAllFacts } from './scan.js';
import type { IncidentView, IndexEvent, ListPage, StatusTotals } from './types.js';
import { emptyTotals, viewOf, withAge, type StoredView } from './view.js';

// The daemon's in-memory index of every incident under the root, for `status`, the API and the status
// page: loaded once at start, then kept current from the store's changes (every applied event), so
// that a listing never reads the disk. A periodic sweep drops folders that were deleted and adds ones
// whose state another process wrote.

interface Entry {
  view: StoredView;
  folder: string;
  state: StoredView['state'];
  /** The registry's name of the incident's cluster (an alias is its entry's name). */
  cluster: string | undefined;
  sortKey: number;
  arrivedAtMs: number;
  /** The view's JSON before and after the age, made on first listing (see `listJson`). */
  json?: [string, string];
}

const AGE_FIELD = '"age":0,';

/**
 * The view as JSON, cut around its `age` (the one field that changes with time): a listing splices the
 * age in instead of serialising 10,000 objects again. A string value cannot contain `"age":0,` (its
 * quotes would be escaped), so the first occurrence is the field.
 */
function jsonParts(view: StoredView): [string, string] {
  const json = JSON.stringify(withAge(view, 0, 0));
  const at = json.indexOf(AGE_FIELD) + AGE_FIELD.length - 2;
  return [json.slice(0, at), json.slice(at + 1)];
}

export interface IncidentIndexOptions {
  root: string;
  log?: Logger;
  now?: () => number;
  /** The cluster registry's name for a cluster (an alias becomes its entry's): `cluster` filters by it. */
  canonicalCluster?: (cluster: string) => string;
}

export type IndexListener = (event: IndexEvent) => void;

/** Folders re-read at once after changes (a burst of alerts). */
const REFRESH_CONCURRENCY = 16;

export class IncidentIndex {
  readonly root: string;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  private readonly counts: StatusTotals = emptyTotals();
  /**
   * Every entry in listing order, kept in order as entries change (a binary search and one splice),
   * so that a listing while incidents change does not sort the whole root again.
   */
  private sorted: Entry[] = [];
  /** While `load()` adds the root's entries: they are sorted once at its end, not placed one by one. */
  private loading = false;
  private readonly listeners = new Set<IndexListener>();
  /** Re-reads in flight per folder; `again` when a change arrived meanwhile. */
  private readonly refreshing = new Map<string, { again: boolean; done: Promise<void> }>();
  private readonly limiter = new Limiter(REFRESH_CONCURRENCY);
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private markLoaded: () => void = () => undefined;
  private readonly loaded = new Promise<void>((resolve) => (this.markLoaded = resolve));

  constructor(private readonly options: IncidentIndexOptions) {
    this.root = path.resolve(options.root);
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Reads every folder under the root (none while the root does not exist yet); entries that changes
   * have written meanwhile are kept.
   */
  async load(): Promise<{ count: number; ms: number }> {
    const t0 = performance.now();
    const all = await readAllFacts(this.root).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      this.markLoaded();
      throw err;
    });
    this.loading = true;
    try {
      for (const facts of all) if (!this.entries.has(facts.folder)) this.put(facts);
    } finally {
      this.loading = false;
      this.sorted = [...this.entries.values()].sort(compareEntries);
    }
    this.markLoaded();
    return { count: this.entries.size, ms: Math.round(performance.now() - t0) };
  }

  /** Resolves once `load()` has read the root (listings wait for it: a half-loaded list would mislead). */
  whenLoaded(): Promise<void> {
    return this.loaded;
  }

  /** The store applied a change (DaemonDeps.onChange): re-read that folder (its result on final states). */
  apply(change: StateChange): void {
    if (this.closed || path.dirname(path.resolve(change.dir)) !== this.root) return;
    void this.refresh(path.basename(change.dir));
  }

  /** Re-reads one folder now (coalesced: one more read when changes arrive during a read). */
  refresh(folder: string): Promise<void> {
    const pending = this.refreshing.get(folder);
    if (pending) {
      pending.again = true;
      return pending.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      do {
        entry.again = false;
        try {
          const facts = await this.limiter.run(() => readIncidentFacts(this.root, folder));
          if (this.closed) break;
          if (facts) this.put(facts);
          else this.remove(folder);
        } catch (err) {
          this.options.log?.warn(
            { workspace: folder, err: errorMessage(err) },
            'status index: reading the workspace failed',
          );
        }
      } while (entry.again && !this.closed);
      this.refreshing.delete(folder);
    })();
    this.refreshing.set(folder, entry);
    return entry.done;
  }

  /** Drops folders that are gone and adds folders the index has not seen (state written by another process). */
  async sweep(): Promise<void> {
    let names: string[];
    try {
      names = await incidentFolders(this.root);
    } catch (err) {
      this.options.log?.warn(
        { root: this.root, err: errorMessage(err) },
        'status index: cannot list the root',
      );
      return;
    }
    const present = new Set(names);
    for (const folder of [...this.entries.keys()]) if (!present.has(folder)) this.remove(folder);
    const unknown = names.filter((n) => !this.entries.has(n) && !this.refreshing.has(n));
    await Promise.all(unknown.map((n) => this.refresh(n)));
  }

  /** Sweeps every `intervalMs` until closed. */
  startSweeping(intervalMs: number): void {
    clearInterval(this.sweepTimer);
    this.sweepTimer = setInterval(() => void this.sweep(), intervalMs);
    this.sweepTimer.unref();
  }

  close(): void {
    this.closed = true;
    this.markLoaded();
    clearInterval(this.sweepTimer);
    this.listeners.clear();
  }

  subscribe(listener: IndexListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(folder: string): IncidentView | undefined {
    const entry = this.entries.get(folder);
    return entry ? withAge(entry.view, entry.arrivedAtMs, this.now()) : undefined;
  }

  totals(): StatusTotals {
    return { ...this.counts };
  }

  /** Every incident's stored view (no age), in no particular order: for counting, not for listing. */
  *views(): IterableIterator<StoredView> {
    for (const entry of this.entries.values()) yield entry.view;
  }

  /** The registry's name of `cluster` (as entries are filed under it). */
  clusterName(cluster: string): string {
    return this.options.canonicalCluster?.(cluster) ?? cluster;
  }

  /** One page, newest `updatedAt` first (throws PageQueryError for a cursor this index did not give). */
  list(request: PageRequest = {}): ListPage {
    const now = this.now();
    const filtered = this.filtered(request);
    const page = pageOf(this.sorted, filtered);
    return {
      incidents: page.items.map((e) => withAge(e.view, e.arrivedAtMs, now)),
      totals: this.totals(),
      matched: this.matched(filtered),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  }

  /** `list(request)` with `extra` fields, as JSON text: what `GET /v1/incidents` sends. */
  listJson(request: PageRequest = {}, extra: Record<string, unknown> = {}): string {
    const now = this.now();
    const filtered = this.filtered(request);
    const page = pageOf(this.sorted, filtered);
    const incidents = page.items.map((e) => {
      e.json ??= jsonParts(e.view);
      return `${e.json[0]}${Math.max(0, Math.round(now - e.arrivedAtMs))}${e.json[1]}`;
    });
    const rest = JSON.stringify({
      totals: this.totals(),
      matched: this.matched(filtered),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      ...extra,
    });
    return `{"incidents":[${incidents.join(',')}],${rest.slice(1)}`;
  }

  /** The request with its default limit and its cluster under the registry's name. */
  private filtered(request: PageRequest): PageRequest {
    return {
      ...request,
      limit: request.limit ?? DEFAULT_LIMIT,
      ...(request.cluster !== undefined ? { cluster: this.clusterName(request.cluster) } : {}),
    };
  }

  /** How many incidents match the filters: counted by state, walked only for a cluster. */
  private matched(request: PageRequest): number {
    if (request.cluster !== undefined) return matchCount(this.sorted, request);
    return request.state === undefined ? this.entries.size : this.counts[request.state];
  }

  /** Where `entry` is, or goes, in `sorted` (the order is total: folders are unique). */
  private positionOf(entry: Entry): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareEntries(this.sorted[mid] as Entry, entry) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private place(entry: Entry): void {
    if (!this.loading) this.sorted.splice(this.positionOf(entry), 0, entry);
  }

  private unplace(entry: Entry): void {
    if (this.loading) return;
    const at = this.positionOf(entry);
    if (this.sorted[at] === entry) this.sorted.splice(at, 1);
  }

  private put(facts: IncidentFacts): void {
    const view = viewOf(facts);
    const previous = this.entries.get(facts.folder);
    if (previous) {
      this.counts[previous.state]--;
      this.unplace(previous);
    }
    const cluster = view.subject?.cluster;
    const entry: Entry = {
      view,
      folder: facts.folder,
      state: view.state,
      cluster: cluster === undefined ? undefined : this.clusterName(cluster),
      sortKey: sortKeyOf(view.updatedAt),
      arrivedAtMs: facts.arrivedAtMs,
    };
    this.entries.set(facts.folder, entry);
    this.counts[entry.state]++;
    this.place(entry);
    this.emit({ type: 'upsert', view: withAge(view, entry.arrivedAtMs, this.now()) });
  }

  private remove(folder: string): void {
    const previous = this.entries.get(folder);
    if (!previous) return;
    this.entries.delete(folder);
    this.counts[previous.state]--;
    this.unplace(previous);
    this.emit({ type: 'remove', folder });
  }

  private emit(event: IndexEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.options.log?.warn({ err: errorMessage(err) }, 'status index listener failed');
      }
    }
  }
}
