import { mkdir, readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Config, SkillSourceConfig } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { waitLock } from '../util/file-lock.js';
import { writeFileAtomic, writeProbe } from '../util/fs.js';
import { localTreeCommit } from './skills-local.js';
import { SkillsHolds, removeHoldFile } from './skills-holds.js';
import { checkout, isDir, mirror, resolveRef, swapLink } from './skills-mirror.js';
import type { SkillsSnapshot, SkillsSourceSnapshot } from './types.js';

// The skills cache under `skills.cache_dir`:
//   .repos/<source>.git          bare clone, fetched on refresh
//   .store/<source>/<commit>/    one immutable checkout per resolved commit (temp dir + rename)
//   <source> -> .store/<source>/<commit>   symlink swapped atomically (temp link + rename)
//   .state.json                  resolved commit, last sync, last error, commit history per source
//   .holds/<source>/<commit>/<pid>.<random>.<host>   one file per snapshot holding a commit
// A run acquires a snapshot of the commit dirs; an update never changes them. Old commit dirs go
// only when no snapshot holds them — in this process or another one sharing the cache (`skills sync`
// next to the daemon) — and they are neither current nor among the last KEEP_COMMITS.
// Here: the state, sync, snapshots, readiness and GC; the git mirror and its atomic steps are in
// skills-mirror.ts, the holds in skills-holds.ts.

export const KEEP_COMMITS = 2;
const CACHE_STATE_FILE = '.state.json';
const STALE_TMP_MS = 60 * 60 * 1000;
const COMMIT_RE = /^[0-9a-f]{40,64}$/;

export type SourceState = 'ok' | 'stale' | 'unavailable';

/** One source as `skills list` shows it. */
export interface SourceStatus {
  name: string;
  scope: 'user' | 'project';
  kind: 'git' | 'path';
  /** git URL or local path. */
  location: string;
  ref?: string;
  commit?: string;
  /** Host path the source is served from. */
  dir?: string;
  lastSync?: string;
  /** ok: current; stale: the last good cache is used because the update failed; unavailable: nothing usable. */
  status: SourceState;
  error?: string;
}

export interface SyncReport {
  sources: SourceStatus[];
  /** Sources whose update failed (with or without a cache to fall back on). */
  failed: string[];
}

export interface SkillsReadiness {
  ready: boolean;
  sources: { name: string; available: boolean; detail?: string }[];
  /** Why the cache folder cannot be written (git sources cannot be fetched or updated), when it cannot. */
  cacheProblem?: string;
}

interface PersistedSource {
  commit: string;
  ref?: string;
  location: string;
  lastSync?: string;
  lastError?: string;
  history: string[];
}

interface PersistedState {
  sources: Record<string, PersistedSource>;
}

/**
 * The sources of a parsed `.state.json` that are as sync writes them; the others are left out (their
 * commits are recovered from the symlinks). A commit names a folder of the cache, so only a commit id
 * is taken: `../x` would hand the agent a folder outside it.
 */
function persistedSources(parsed: unknown): Record<string, PersistedSource> {
  const sources = (parsed as { sources?: unknown } | null)?.sources;
  if (typeof sources !== 'object' || sources === null || Array.isArray(sources)) return {};
  const kept: Record<string, PersistedSource> = {};
  for (const [name, value] of Object.entries(sources)) {
    const s = value as Partial<Record<keyof PersistedSource, unknown>> | null;
    const optional = (v: unknown) => v === undefined || typeof v === 'string';
    if (
      typeof s === 'object' &&
      s !== null &&
      typeof s.commit === 'string' &&
      COMMIT_RE.test(s.commit) &&
      typeof s.location === 'string' &&
      Array.isArray(s.history) &&
      s.history.every((c) => typeof c === 'string' && COMMIT_RE.test(c)) &&
      optional(s.ref) &&
      optional(s.lastSync) &&
      optional(s.lastError)
    )
      kept[name] = s as PersistedSource;
  }
  return kept;
}

export interface SkillsCacheOptions {
  config: Config;
  log: Logger;
  now?: () => Date;
  /** Limit for each git command (clone, fetch, checkout). */
  gitTimeoutMs?: number;
  /** Identifies this process in hold files (defaults: os.hostname(), process.pid). */
  host?: string;
  pid?: number;
}

export class SkillsCache {
  private readonly config: Config;
  private readonly log: Logger;
  private readonly now: () => Date;
  private readonly gitTimeoutMs: number;
  private readonly root: string;
  private state: PersistedState = { sources: {} };
  private loaded = false;
  private syncing: Promise<SyncReport> | undefined;
  private synced = false;
  private readonly warned = new Set<string>();
  private readonly errors = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly host: string;
  private readonly pid: number;
  private readonly holds: SkillsHolds;

  constructor(options: SkillsCacheOptions) {
    this.config = options.config;
    this.log = options.log;
    this.now = options.now ?? (() => new Date());
    this.gitTimeoutMs = options.gitTimeoutMs ?? 120_000;
    this.root = path.resolve(options.config.skills.cache_dir);
    this.host = (options.host ?? hostname()).replace(/[/\\]/g, '_');
    this.pid = options.pid ?? process.pid;
    this.holds = new SkillsHolds(this.root, { pid: this.pid, host: this.host }, this.log, this.now);
  }

  get cacheDir(): string {
    return this.root;
  }

  private get sources(): SkillSourceConfig[] {
    return this.config.skills.sources;
  }

  /** Fetches every git source now and swaps in new commits; a failing source keeps its last good cache. */
  sync(): Promise<SyncReport> {
    this.syncing ??= this.doSync().finally(() => {
      this.syncing = undefined;
      this.synced = true;
    });
    return this.syncing;
  }

  /** Starts the periodic refresh (`skills.refresh_interval`) after an initial sync. */
  start(): Promise<SyncReport> {
    if (!this.timer) {
      this.timer = setInterval(() => {
        this.sync().catch((err: unknown) =>
          this.log.error({ err: errorMessage(err) }, 'skills refresh failed'),
        );
      }, this.config.skills.refresh_interval);
      this.timer.unref();
    }
    return this.sync();
  }

  /** Stops the periodic refresh and waits for a sync in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.syncing?.catch(() => undefined);
  }

  /** The skills a run uses: immutable commit dirs held until `release()`. Syncs first if never synced and a source has no cache. */
  async acquire(): Promise<SkillsSnapshot> {
    await this.load();
    // A sync that fails as a whole (a cache it cannot write): the run goes on without those sources.
    if (!this.synced && this.sources.some((s) => s.git !== undefined && !this.state.sources[s.name]))
      await this.sync().catch((err: unknown) =>
        this.log.warn(
          { err: errorMessage(err) },
          'skills sync failed; the run goes on without those sources',
        ),
      );
    const sources: SkillsSourceSnapshot[] = [];
    const unavailable: { name: string; reason: string }[] = [];
    const keys: string[] = [];
    const holdFiles: string[] = [];
    for (const source of this.sources) {
      let resolved = await this.resolveCurrent(source);
      if (source.git !== undefined && !('reason' in resolved)) {
        // Hold first, then check the dir is still there: a collector elsewhere either sees the hold
        // or has already removed the dir (then we resolve again, once).
        let hold = await this.holds.write(source.name, resolved.commit);
        if (!(await isDir(resolved.dir))) {
          removeHoldFile(hold);
          resolved = await this.resolveCurrent(source);
          hold = 'reason' in resolved ? undefined : await this.holds.write(source.name, resolved.commit);
        }
        if (hold) holdFiles.push(hold);
      }
      if ('reason' in resolved) {
        unavailable.push({ name: source.name, reason: resolved.reason });
        continue;
      }
      sources.push({ name: source.name, scope: source.scope, dir: resolved.dir, commit: resolved.commit });
      if (source.git !== undefined) {
        const key = `${source.name}/${resolved.commit}`;
        this.holds.hold(key);
        keys.push(key);
      }
    }
    let released = false;
    return {
      sources,
      unavailable,
      release: () => {
        if (released) return;
        released = true;
        this.holds.release(keys, holdFiles);
      },
    };
  }

  /** Every configured source with its commit, last sync and status (no network). */
  async list(): Promise<SourceStatus[]> {
    await this.load();
    return Promise.all(this.sources.map((s) => this.status(s)));
  }

  /** Ready when every configured source is available (current or last good cache) and the cache writable. */
  async readiness(): Promise<SkillsReadiness> {
    const list = await this.list();
    const sources = list.map((s) => ({
      name: s.name,
      available: s.status !== 'unavailable',
      ...(s.error ? { detail: s.error } : {}),
    }));
    const cacheProblem = this.sources.some((s) => s.git) ? await this.writeProblem() : undefined;
    return {
      ready: sources.every((s) => s.available) && !cacheProblem,
      sources,
      ...(cacheProblem ? { cacheProblem } : {}),
    };
  }

  /** Why the cache folder cannot be written, or undefined. */
  private async writeProblem(): Promise<string | undefined> {
    const code = await writeProbe(this.root);
    if (code === undefined) return undefined;
    return `skills.cache_dir ${this.root} cannot be written (${code}): git sources are neither fetched nor updated; let the daemon's user write it, or point skills.cache_dir (SKILLS_CACHE_DIR) at a folder it owns`;
  }

  private async status(source: SkillSourceConfig): Promise<SourceStatus> {
    const base = {
      name: source.name,
      scope: source.scope,
      kind: source.git !== undefined ? ('git' as const) : ('path' as const),
      location: source.git ?? path.resolve(source.path ?? ''),
      ...(source.git !== undefined ? { ref: source.ref } : {}),
    };
    const resolved = await this.resolveCurrent(source);
    const error = this.errors.get(source.name) ?? this.state.sources[source.name]?.lastError;
    if ('reason' in resolved) return { ...base, status: 'unavailable', error: resolved.reason };
    const persisted = this.state.sources[source.name];
    return {
      ...base,
      commit: resolved.commit,
      dir: resolved.dir,
      ...(persisted?.lastSync ? { lastSync: persisted.lastSync } : {}),
      status: error ? 'stale' : 'ok',
      ...(error ? { error } : {}),
    };
  }

  private async resolveCurrent(
    source: SkillSourceConfig,
  ): Promise<{ dir: string; commit: string } | { reason: string }> {
    if (source.path !== undefined) {
      const dir = path.resolve(source.path);
      try {
        if (!(await stat(dir)).isDirectory()) return { reason: `local path ${dir} is not a directory` };
        return { dir, commit: await localTreeCommit(dir) };
      } catch (err) {
        return {
          reason: `local path ${dir} cannot be read (${errorMessage(err)}); fix skills.sources[${source.name}].path`,
        };
      }
    }
    // The symlink is the truth shared by every process using the cache (another one may have synced).
    const linked = await this.linkedCommit(source.name);
    const persisted = this.state.sources[source.name];
    for (const commit of [linked, persisted?.commit]) {
      if (commit === undefined) continue;
      const dir = this.commitDir(source.name, commit);
      if (await isDir(dir)) return { dir, commit };
    }
    const error = this.errors.get(source.name);
    return { reason: error ?? `not fetched yet into ${this.root}; run \`triage-runner skills sync\`` };
  }

  private commitDir(name: string, commit: string): string {
    return path.join(this.root, '.store', name, commit);
  }

  /** The commit `<cache>/<name>` points at, if it is one of ours. */
  private async linkedCommit(name: string): Promise<string | undefined> {
    const target = await readlink(path.join(this.root, name)).catch(() => undefined);
    const commit = target ? path.basename(target) : undefined;
    return commit && COMMIT_RE.test(commit) ? commit : undefined;
  }

  /** Reads .state.json (again when `force`: another process may have synced since). */
  private async load(force = false): Promise<void> {
    if (this.loaded && !force) return;
    this.loaded = true;
    try {
      const parsed = JSON.parse(await readFile(path.join(this.root, CACHE_STATE_FILE), 'utf8')) as unknown;
      this.state = { sources: persistedSources(parsed) };
    } catch {
      // No state yet (or unreadable): recover the current commits from the symlinks below.
    }
    for (const source of this.sources) {
      if (source.git === undefined || this.state.sources[source.name]) continue;
      const commit = await this.linkedCommit(source.name);
      if (commit) this.state.sources[source.name] = { commit, location: source.git, history: [commit] };
    }
  }

  private async doSync(): Promise<SyncReport> {
    await this.load(true);
    await mkdir(this.root, { recursive: true }).catch((err: unknown) => {
      throw new Error(
        `skills.cache_dir ${this.root} cannot be created (${errorMessage(err)}); point skills.cache_dir at a writable folder`,
        { cause: err },
      );
    });
    const failed: string[] = [];
    for (const source of this.sources) {
      if (source.git === undefined) continue;
      try {
        await this.syncGit(source, source.git);
        if (this.warned.delete(source.name))
          this.log.info({ source: source.name }, 'skills source reachable again');
        this.errors.delete(source.name);
      } catch (err) {
        failed.push(source.name);
        const message = errorMessage(err);
        const hasCache = this.state.sources[source.name] !== undefined;
        this.errors.set(source.name, message);
        const meta = { source: source.name, git: source.git, ref: source.ref, err: message };
        const msg = hasCache
          ? 'skills source update failed; keeping the last good cache'
          : 'skills source unavailable';
        if (this.warned.has(source.name)) this.log.debug(meta, msg);
        else {
          this.warned.add(source.name);
          this.log.warn(meta, msg);
        }
        const persisted = this.state.sources[source.name];
        if (persisted) persisted.lastError = message;
      }
    }
    // The commits are in place: a state that cannot be written costs only the history and the clean-up.
    try {
      await this.saveState();
      await this.gc();
    } catch (err) {
      this.log.warn({ dir: this.root, err: errorMessage(err) }, 'skills cache state cannot be written');
    }
    return { sources: await this.list(), failed };
  }

  /** Fetch, checkout and swap for one source, one process at a time (git refuses concurrent ref updates). */
  private async syncGit(source: SkillSourceConfig, url: string): Promise<void> {
    const lock = path.join(this.root, '.repos', `${source.name}.lock`);
    await mkdir(path.dirname(lock), { recursive: true });
    const held = await waitLock(lock, {
      staleMs: this.gitTimeoutMs * 2,
      waitMs: this.gitTimeoutMs * 2,
      what: `skills source ${source.name}`,
      identity: { pid: this.pid },
    });
    try {
      await this.syncGitLocked(source, url);
    } finally {
      await held.release();
    }
  }

  private async syncGitLocked(source: SkillSourceConfig, url: string): Promise<void> {
    const repo = path.join(this.root, '.repos', `${source.name}.git`);
    await mirror(repo, url, this.gitTimeoutMs);
    const commit = await resolveRef(repo, source.ref, this.gitTimeoutMs);
    const dir = this.commitDir(source.name, commit);
    if (!(await isDir(dir))) await checkout(repo, commit, dir, this.gitTimeoutMs);
    await swapLink(this.root, source.name, dir);
    const previous = this.state.sources[source.name];
    if (previous?.commit !== commit)
      this.log.info({ source: source.name, commit, previous: previous?.commit }, 'skills source updated');
    this.state.sources[source.name] = {
      commit,
      ref: source.ref,
      location: url,
      lastSync: this.now().toISOString(),
      history: [commit, ...(previous?.history ?? []).filter((c) => c !== commit)].slice(0, 10),
    };
  }

  private async saveState(): Promise<void> {
    await writeFileAtomic(path.join(this.root, CACHE_STATE_FILE), `${JSON.stringify(this.state, null, 2)}\n`);
  }

  /** Removes commit dirs that are neither among the last KEEP_COMMITS nor held by a snapshot. */
  async gc(): Promise<string[]> {
    const removed: string[] = [];
    for (const source of this.sources) {
      if (source.git === undefined) continue;
      const base = path.join(this.root, '.store', source.name);
      const entries = await readdir(base).catch(() => [] as string[]);
      const keep = new Set(this.state.sources[source.name]?.history.slice(0, KEEP_COMMITS) ?? []);
      const linked = await this.linkedCommit(source.name);
      if (linked) keep.add(linked);
      for (const entry of entries) {
        if (keep.has(entry) || (await this.holds.isHeld(source.name, entry, COMMIT_RE.test(entry)))) continue;
        // A temp checkout may belong to another process sharing the cache (`skills sync` next to the
        // daemon): only leftovers older than an hour are removed.
        if (entry.startsWith('.tmp-')) {
          const info = await stat(path.join(base, entry)).catch(() => undefined);
          if (!info || this.now().getTime() - info.mtimeMs < STALE_TMP_MS) continue;
        }
        await rm(path.join(base, entry), { recursive: true, force: true });
        if (COMMIT_RE.test(entry)) {
          await this.holds.forget(source.name, entry);
        }
        removed.push(`${source.name}/${entry}`);
      }
    }
    if (removed.length > 0) this.log.debug({ removed }, 'skills cache: removed old commits');
    return removed;
  }
}
