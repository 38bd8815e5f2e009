import { lstat, mkdir, rename, rm, stat, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomHex } from '../util/random.js';
import { fsyncDir } from '../util/fs.js';
import { git } from './git.js';

// The skills cache's git side and its atomic steps: a bare mirror of a source (cloned once, fetched
// after), a ref resolved to a commit, one immutable checkout per commit (temp dir + rename) and the
// source's symlink swapped to it (temp link + rename). No state, no locks: skills-cache.ts holds those.

export const isDir = async (p: string): Promise<boolean> =>
  (await stat(p).catch(() => undefined))?.isDirectory() ?? false;

/** Clones `url` bare into `repo`, or fetches every branch and tag into the existing mirror. */
export async function mirror(repo: string, url: string, timeoutMs: number): Promise<void> {
  const opts = { timeoutMs };
  if (!(await isDir(repo))) {
    await mkdir(path.dirname(repo), { recursive: true });
    const tmp = `${repo}.tmp-${randomHex(4)}`;
    try {
      await git(['clone', '--bare', '--quiet', '--', url, tmp], opts);
      // Another process may have finished its clone first: theirs is complete, use it.
      await rename(tmp, repo).catch(async (err: unknown) => {
        if (!(await isDir(repo))) throw err;
      });
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    return;
  }
  await git(['--git-dir', repo, 'remote', 'set-url', 'origin', url], opts);
  await git(
    [
      '--git-dir',
      repo,
      'fetch',
      '--quiet',
      '--prune',
      '--force',
      '--tags',
      'origin',
      '+refs/heads/*:refs/heads/*',
    ],
    opts,
  );
}

/** The commit `ref` names in the mirror; a commit no branch or tag reaches is fetched by itself. */
export async function resolveRef(repo: string, ref: string, timeoutMs: number): Promise<string> {
  const opts = { timeoutMs };
  try {
    return await git(['--git-dir', repo, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`], opts);
  } catch {
    try {
      await git(['--git-dir', repo, 'fetch', '--quiet', 'origin', ref], opts);
      return await git(['--git-dir', repo, 'rev-parse', '--verify', '--quiet', 'FETCH_HEAD^{commit}'], opts);
    } catch {
      throw new Error(
        `ref ${JSON.stringify(ref)} is not a branch, tag or commit of the repository; fix skills.sources ref`,
      );
    }
  }
}

/** Checks `commit` out into `dir` through a temp dir and one rename: readers never see a partial tree. */
export async function checkout(repo: string, commit: string, dir: string, timeoutMs: number): Promise<void> {
  const parent = path.dirname(dir);
  await mkdir(parent, { recursive: true });
  const tmp = path.join(parent, `.tmp-${randomHex(6)}`);
  const index = `${tmp}.index`;
  const opts = { timeoutMs, env: { GIT_INDEX_FILE: index } };
  try {
    await mkdir(tmp);
    await git(['--git-dir', repo, 'read-tree', commit], opts);
    await git(['--git-dir', repo, '--work-tree', tmp, 'checkout-index', '--all', '--force'], opts);
    // Another process may have checked the same commit out first: the content is the same.
    await rename(tmp, dir).catch(async (err: unknown) => {
      if (!(await isDir(dir))) throw err;
    });
    await fsyncDir(parent);
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await rm(index, { force: true });
  }
}

/** Points `<root>/<name>` at `dir` in one rename. */
export async function swapLink(root: string, name: string, dir: string): Promise<void> {
  const link = path.join(root, name);
  const existing = await lstat(link).catch(() => undefined);
  if (existing && !existing.isSymbolicLink()) {
    throw new Error(`${link} exists and is not the cache's symlink; move it away so the cache can manage it`);
  }
  const tmp = path.join(root, `.${name}.link-${randomHex(4)}`);
  await symlink(path.relative(root, dir), tmp);
  try {
    await rename(tmp, link);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fsyncDir(root);
}
