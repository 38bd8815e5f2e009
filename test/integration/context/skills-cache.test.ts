import { execa } from 'execa';
import { chmod, lstat, mkdir, readdir, readFile, readlink, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SkillsCache } from '../../../src/context/skills-cache.js';
import { createLogger } from '../../../src/log/logger.js';
import { makeConfig, tempDir } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
};
const run = async (cwd: string, ...args: string[]) =>
  (await execa('git', args, { cwd, env: GIT_ENV })).stdout.trim();

/** A skills repository with a triage script; returns helpers to commit new versions. */
async function skillsRepo(dir: string) {
  await mkdir(path.join(dir, 'skills/k8s-troubleshooter/scripts'), { recursive: true });
  await run(dir, 'init', '-q', '-b', 'main');
  const commit = async (version: string) => {
    await writeFile(
      path.join(dir, 'skills/k8s-troubleshooter/SKILL.md'),
      `---\nname: k8s-troubleshooter\ndescription: v${version}\n---\n`,
    );
    const script = path.join(dir, 'skills/k8s-troubleshooter/scripts/incident_triage.sh');
    await writeFile(script, `#!/bin/sh\necho triage ${version}\n`);
    await chmod(script, 0o755);
    await run(dir, 'add', '-A');
    await run(dir, 'commit', '-q', '-m', `version ${version}`);
    return run(dir, 'rev-parse', 'HEAD');
  };
  return { commit };
}

function captureLog() {
  const lines: { level: string; msg: string; source?: string }[] = [];
  const log = createLogger({
    level: 'debug',
    destination: { write: (l: string) => void lines.push(JSON.parse(l)) },
  });
  return { log, lines, warnings: () => lines.filter((l) => l.level === 'warn') };
}

async function setup(sourceOver: Record<string, unknown> = {}, skillsOver: Record<string, unknown> = {}) {
  const t = await tempDir('tr-skills-');
  cleanups.push(t.cleanup);
  const repoDir = path.join(t.dir, 'remote');
  await mkdir(repoDir);
  const repo = await skillsRepo(repoDir);
  const cacheDir = path.join(t.dir, 'cache');
  const config = makeConfig({
    skills: {
      cache_dir: cacheDir,
      sources: [{ name: 'k8s4agents', git: repoDir, ref: 'main', ...sourceOver }],
      ...skillsOver,
    },
  });
  const logs = captureLog();
  const cache = new SkillsCache({ config, log: logs.log, gitTimeoutMs: 30_000 });
  cleanups.push(() => cache.stop());
  return { ...t, repoDir, repo, cacheDir, config, cache, logs };
}

describe('skills cache with real git repositories', () => {
  it('clones a source, checks the commit out into its own folder and points the source symlink at it', async () => {
    const { repo, cache, cacheDir } = await setup();
    const sha = await repo.commit('1');
    const report = await cache.sync();
    expect(report.failed).toEqual([]);
    const link = path.join(cacheDir, 'k8s4agents');
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readlink(link)).toBe(path.join('.store', 'k8s4agents', sha));
    const script = path.join(link, 'skills/k8s-troubleshooter/scripts/incident_triage.sh');
    expect(await readFile(script, 'utf8')).toContain('triage 1');
    expect((await lstat(script)).mode & 0o111).not.toBe(0);
    const [status] = await cache.list();
    expect(status).toMatchObject({
      name: 'k8s4agents',
      scope: 'project',
      kind: 'git',
      ref: 'main',
      commit: sha,
      status: 'ok',
    });
    expect(status?.lastSync).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await cache.readiness()).ready).toBe(true);
  });

  it('keeps the commit a running agent holds while an update swaps in a new one, and collects it after release', async () => {
    const { repo, cache, cacheDir } = await setup();
    const v1 = await repo.commit('1');
    await cache.sync();
    const held = await cache.acquire();
    expect(held.sources[0]?.commit).toBe(v1);
    const v1Dir = held.sources[0]?.dir ?? '';

    const v2 = await repo.commit('2');
    await cache.sync();
    const fresh = await cache.acquire();
    expect(fresh.sources[0]?.commit).toBe(v2);
    expect(await readlink(path.join(cacheDir, 'k8s4agents'))).toBe(path.join('.store', 'k8s4agents', v2));
    expect(await readFile(path.join(v1Dir, 'skills/k8s-troubleshooter/SKILL.md'), 'utf8')).toContain(
      'description: v1',
    );

    // Two more updates push v1 out of the last two commits, but the held snapshot keeps it.
    await repo.commit('3');
    await cache.sync();
    const v4 = await repo.commit('4');
    await cache.sync();
    expect(await readFile(path.join(v1Dir, 'skills/k8s-troubleshooter/SKILL.md'), 'utf8')).toContain(
      'description: v1',
    );

    held.release();
    fresh.release();
    await cache.sync();
    await expect(lstat(v1Dir)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(lstat(path.join(cacheDir, '.store', 'k8s4agents', v2))).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect((await lstat(path.join(cacheDir, '.store', 'k8s4agents', v4))).isDirectory()).toBe(true);
  });

  it('resolves a tag and a commit sha as the ref', async () => {
    const { repo, repoDir, cache, config } = await setup();
    const v1 = await repo.commit('1');
    await run(repoDir, 'tag', 'v1.0.0');
    await repo.commit('2');
    config.skills.sources[0] = {
      ...config.skills.sources[0],
      name: 'k8s4agents',
      ref: 'v1.0.0',
      scope: 'project',
    };
    await cache.sync();
    expect((await cache.list())[0]?.commit).toBe(v1);
    config.skills.sources[0] = {
      ...config.skills.sources[0],
      name: 'k8s4agents',
      ref: v1.slice(0, 12),
      scope: 'project',
    };
    await cache.sync();
    expect((await cache.list())[0]?.commit).toBe(v1);
  });

  it('reports an unknown ref as a failure that says what to fix', async () => {
    const { repo, cache } = await setup({ ref: 'no-such-branch' });
    await repo.commit('1');
    const report = await cache.sync();
    expect(report.failed).toEqual(['k8s4agents']);
    expect(report.sources[0]?.status).toBe('unavailable');
    expect(report.sources[0]?.error).toMatch(/ref "no-such-branch" is not a branch, tag or commit/);
  });

  it('keeps the last good cache when the remote is gone, and warns once across refreshes', async () => {
    const { repo, repoDir, cache, logs } = await setup();
    const v1 = await repo.commit('1');
    await cache.sync();
    await rm(repoDir, { recursive: true, force: true });
    for (let i = 0; i < 3; i += 1) {
      const report = await cache.sync();
      expect(report.failed).toEqual(['k8s4agents']);
    }
    const [status] = await cache.list();
    expect(status).toMatchObject({ status: 'stale', commit: v1 });
    expect(status?.error).toMatch(/git .*fetch.* exited with code/);
    const snapshot = await cache.acquire();
    expect(snapshot.sources.map((s) => s.commit)).toEqual([v1]);
    expect(snapshot.unavailable).toEqual([]);
    const warnings = logs.warnings().filter((w) => w.source === 'k8s4agents');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toBe('skills source update failed; keeping the last good cache');
    expect((await cache.readiness()).ready).toBe(true);
  });

  it('marks a source that was never reachable unavailable with the reason, warns once, and is not ready', async () => {
    const { cache, logs } = await setup({ git: '/nonexistent/k8s4agents' });
    const snapshot = await cache.acquire();
    expect(snapshot.sources).toEqual([]);
    expect(snapshot.unavailable[0]?.name).toBe('k8s4agents');
    expect(snapshot.unavailable[0]?.reason).toMatch(/git clone .*exited with code 128/);
    await cache.sync();
    expect(logs.warnings().filter((w) => w.msg === 'skills source unavailable')).toHaveLength(1);
    const readiness = await cache.readiness();
    expect(readiness.ready).toBe(false);
    expect(readiness.sources[0]).toMatchObject({ name: 'k8s4agents', available: false });
  });

  it('recovers the current commit from the symlink in a new process without network', async () => {
    const { repo, repoDir, cache, config, logs } = await setup();
    const v1 = await repo.commit('1');
    await cache.sync();
    await rm(repoDir, { recursive: true, force: true });
    const again = new SkillsCache({ config, log: logs.log });
    const snapshot = await again.acquire();
    expect(snapshot.sources[0]?.commit).toBe(v1);
    snapshot.release();
  });

  it('takes from a damaged .state.json only what sync writes: a commit that is not one comes from the symlink', async () => {
    const { repo, cache, config, logs } = await setup();
    const v1 = await repo.commit('1');
    await cache.sync();
    const file = path.join(config.skills.cache_dir, '.state.json');
    const state = JSON.parse(await readFile(file, 'utf8')) as { sources: Record<string, object> };
    const source = state.sources.k8s4agents;
    for (const damaged of [
      { sources: { k8s4agents: { ...source, commit: '../../outside' } } },
      { sources: { k8s4agents: { ...source, history: 'x' } } },
      { sources: { k8s4agents: { ...source, commit: 7 } } },
      { sources: 'x' },
      null,
    ]) {
      await writeFile(file, JSON.stringify(damaged));
      const again = new SkillsCache({ config, log: logs.log });
      const snapshot = await again.acquire();
      expect(snapshot.sources[0]?.commit, JSON.stringify(damaged)).toBe(v1);
      snapshot.release();
    }
  });

  it('uses a local path source in place with a content-derived commit that changes when a file changes', async () => {
    const t = await tempDir('tr-skills-local-');
    cleanups.push(t.cleanup);
    const src = path.join(t.dir, 'my-skills');
    await mkdir(path.join(src, 'skills/demo'), { recursive: true });
    await writeFile(path.join(src, 'skills/demo/SKILL.md'), 'a');
    const config = makeConfig({
      skills: { cache_dir: path.join(t.dir, 'cache'), sources: [{ name: 'mine', path: src, scope: 'user' }] },
    });
    const cache = new SkillsCache({ config, log: captureLog().log });
    const first = await cache.acquire();
    expect(first.sources[0]).toMatchObject({ name: 'mine', scope: 'user', dir: src });
    expect(first.sources[0]?.commit).toMatch(/^local:[0-9a-f]{12}$/);
    await writeFile(path.join(src, 'skills/demo/SKILL.md'), 'changed content');
    const second = await cache.acquire();
    expect(second.sources[0]?.commit).not.toBe(first.sources[0]?.commit);
    await rm(src, { recursive: true });
    expect((await cache.acquire()).unavailable[0]?.reason).toMatch(/local path .*my-skills cannot be read/);
  });

  it('refreshes periodically once started', async () => {
    const { repo, cache } = await setup({}, { refresh_interval: 150 });
    await repo.commit('1');
    await cache.start();
    const v2 = await repo.commit('2');
    const deadline = Date.now() + 10_000;
    while ((await cache.list())[0]?.commit !== v2) {
      if (Date.now() > deadline) throw new Error('the cache did not pick up the new commit within 10000 ms');
      await new Promise((r) => setTimeout(r, 50));
    }
    await cache.stop();
    expect((await cache.list())[0]?.commit).toBe(v2);
  });

  it('refuses to replace a real folder where the source symlink belongs', async () => {
    const { repo, cache, cacheDir } = await setup();
    await repo.commit('1');
    await mkdir(path.join(cacheDir, 'k8s4agents'), { recursive: true });
    const report = await cache.sync();
    expect(report.sources[0]?.error).toMatch(/exists and is not the cache's symlink; move it away/);
  });

  it('works with no sources configured', async () => {
    const t = await tempDir();
    cleanups.push(t.cleanup);
    const cache = new SkillsCache({
      config: makeConfig({ skills: { cache_dir: t.dir, sources: [] } }),
      log: captureLog().log,
    });
    expect(await cache.sync()).toEqual({ sources: [], failed: [] });
    const snapshot = await cache.acquire();
    expect(snapshot).toMatchObject({ sources: [], unavailable: [] });
    expect((await cache.readiness()).ready).toBe(true);
  });

  it('removes temp checkouts left by a crash only once they are an hour old', async () => {
    const { repo, cache, cacheDir } = await setup();
    await repo.commit('1');
    await cache.sync();
    const store = path.join(cacheDir, '.store', 'k8s4agents');
    await mkdir(path.join(store, '.tmp-old'));
    await mkdir(path.join(store, '.tmp-fresh'));
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(path.join(store, '.tmp-old'), twoHoursAgo, twoHoursAgo);
    await cache.sync();
    await expect(lstat(path.join(store, '.tmp-old'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await lstat(path.join(store, '.tmp-fresh'))).isDirectory()).toBe(true);
  });
});

describe('skills cache shared by several processes', () => {
  /** Another process using the same cache folder: its own SkillsCache, its own in-memory state. */
  const other = (config: ReturnType<typeof makeConfig>, over: { pid?: number; host?: string } = {}) =>
    new SkillsCache({ config, log: captureLog().log, gitTimeoutMs: 30_000, ...over });

  it('never collects a commit that a snapshot in another process holds, and collects it after release', async () => {
    const { repo, cache: daemon, config } = await setup();
    const v1 = await repo.commit('1');
    await daemon.sync();
    const held = await daemon.acquire();
    const v1Dir = held.sources[0]?.dir ?? '';
    expect(held.sources[0]?.commit).toBe(v1);

    const cli = other(config);
    for (const version of ['2', '3', '4']) {
      await repo.commit(version);
      await cli.sync();
    }
    expect(await readFile(path.join(v1Dir, 'skills/k8s-troubleshooter/SKILL.md'), 'utf8')).toContain(
      'description: v1',
    );
    held.release();
    expect((await other(config).gc()).map((r) => r.split('/')[1])).toContain(v1);
    await expect(lstat(v1Dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('drops the holds of a process that died without releasing them', async () => {
    const { repo, cache, config } = await setup();
    const v1 = await repo.commit('1');
    await cache.sync();
    const child = execa('sh', ['-c', 'exit 0']);
    const deadPid = child.pid;
    await child;
    expect(deadPid).toBeGreaterThan(0);
    const crashed = other(config, { pid: deadPid });
    const snapshot = await crashed.acquire();
    expect(snapshot.sources[0]?.commit).toBe(v1);
    for (const version of ['2', '3']) {
      await repo.commit(version);
      await cache.sync();
    }
    await expect(lstat(snapshot.sources[0]?.dir ?? '')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('honours a hold from another host until it is a day old', async () => {
    const { repo, cache, config, cacheDir } = await setup();
    const v1 = await repo.commit('1');
    await cache.sync();
    const remote = await other(config, { host: 'replica-b', pid: 1 }).acquire();
    const v1Dir = remote.sources[0]?.dir ?? '';
    for (const version of ['2', '3']) {
      await repo.commit(version);
      await cache.sync();
    }
    expect((await lstat(v1Dir)).isDirectory()).toBe(true);
    const holds = path.join(cacheDir, '.holds', 'k8s4agents', v1);
    const [hold] = await readdir(holds);
    expect(hold).toMatch(/^1\.[0-9a-f]+\.replica-b$/);
    const old = new Date(Date.now() - 25 * 3600_000);
    await utimes(path.join(holds, hold ?? ''), old, old);
    await cache.gc();
    await expect(lstat(v1Dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('serves the commit another process swapped in, instead of its own older view', async () => {
    const { repo, cache: daemon, config } = await setup();
    await repo.commit('1');
    await daemon.sync();
    const v2 = await repo.commit('2');
    await other(config).sync();
    const snapshot = await daemon.acquire();
    expect(snapshot.sources[0]?.commit).toBe(v2);
    snapshot.release();
  });

  it('lets two processes sync the same cache at once without failures or a broken tree', async () => {
    const { repo, cache, config, cacheDir } = await setup();
    const second = other(config);
    const v1 = await repo.commit('1');
    const first = await Promise.all([cache.sync(), second.sync()]);
    expect(first.map((r) => r.failed)).toEqual([[], []]);
    const v2 = await repo.commit('2');
    const again = await Promise.all([cache.sync(), second.sync()]);
    expect(again.map((r) => r.failed)).toEqual([[], []]);
    expect(again.map((r) => r.sources[0]?.commit)).toEqual([v2, v2]);
    expect(await readlink(path.join(cacheDir, 'k8s4agents'))).toBe(path.join('.store', 'k8s4agents', v2));
    for (const sha of [v1, v2]) {
      const skill = path.join(cacheDir, '.store', 'k8s4agents', sha, 'skills/k8s-troubleshooter/SKILL.md');
      expect(await readFile(skill, 'utf8')).toContain(`description: v${sha === v1 ? 1 : 2}`);
    }
    const state = JSON.parse(await readFile(path.join(cacheDir, '.state.json'), 'utf8')) as {
      sources: Record<string, { commit: string }>;
    };
    expect(state.sources.k8s4agents?.commit).toBe(v2);
  });

  it("a cache whose state cannot be written: a run's skills come all the same, the failure logged", async () => {
    const { cache, cacheDir, repo, logs } = await setup();
    const commit = await repo.commit('1');
    // A folder where .state.json goes: its write fails whoever the daemon runs as.
    await mkdir(path.join(cacheDir, '.state.json'), { recursive: true });
    const snapshot = await cache.acquire();
    expect(snapshot.sources.map((s) => [s.name, s.commit])).toEqual([['k8s4agents', commit]]);
    snapshot.release();
    expect(logs.warnings().map((l) => l.msg)).toContain('skills cache state cannot be written');
  });

  it('readiness names a cache folder that cannot be written', async () => {
    const { dir, repoDir } = await setup();
    const file = path.join(dir, 'not-a-folder');
    await writeFile(file, '');
    const blocked = new SkillsCache({
      config: makeConfig({
        skills: { cache_dir: path.join(file, 'cache'), sources: [{ name: 'k8s4agents', git: repoDir }] },
      }),
      log: createLogger({ level: 'silent' }),
    });
    cleanups.push(() => blocked.stop());
    const r = await blocked.readiness();
    expect(r.ready).toBe(false);
    expect(r.cacheProblem).toMatch(
      /^skills\.cache_dir \S+not-a-folder\/cache cannot be written \(ENOTDIR\): /,
    );
    const snapshot = await blocked.acquire();
    expect(snapshot.sources).toEqual([]);
    expect(snapshot.unavailable.map((u) => u.name)).toEqual(['k8s4agents']);
  });
});
