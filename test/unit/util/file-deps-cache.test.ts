import { mkdtempSync, rmSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileDepsCache } from '../../../src/util/file-deps-cache.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'file-deps-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Sets a path's mtime a minute back: written long before the build, so not "racily" recent. */
const settle = (p: string) => utimesSync(p, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));

const readBuild = (file: string) => async () => ({ value: await readFile(file, 'utf8'), deps: [file] });

describe('FileDepsCache', () => {
  it('serves a second get from the cache while the file is unchanged', async () => {
    const file = path.join(dir, 'a.md');
    writeFileSync(file, 'one');
    settle(file);
    const cache = new FileDepsCache<string>();
    expect(await cache.get('a', readBuild(file))).toBe('one');
    expect(await cache.get('a', readBuild(file))).toBe('one');
    expect(cache.builds).toBe(1);
  });

  it('builds again once a dependency changes, even to the same size', async () => {
    const file = path.join(dir, 'a.md');
    writeFileSync(file, 'one');
    settle(file);
    const cache = new FileDepsCache<string>();
    await cache.get('a', readBuild(file));
    writeFileSync(file, 'two');
    expect(await cache.get('a', readBuild(file))).toBe('two');
    expect(cache.builds).toBe(2);
  });

  it('builds again when a folder it listed gains an entry, or an absent file appears', async () => {
    const folder = path.join(dir, 'briefs');
    mkdirSync(folder);
    settle(folder);
    const missing = path.join(dir, 'boot.yml');
    const cache = new FileDepsCache<number>();
    let n = 0;
    const build = async () => ({ value: ++n, deps: [folder, missing] });
    await cache.get('k', build);
    expect(await cache.get('k', build)).toBe(1);
    writeFileSync(path.join(folder, 'new.md'), 'x');
    expect(await cache.get('k', build)).toBe(2);
    settle(folder);
    await cache.get('k', build);
    writeFileSync(missing, 'say: []');
    expect(await cache.get('k', build)).toBe(4);
  });

  it('does not keep a value whose file was modified while (or just before) it was built', async () => {
    const file = path.join(dir, 'a.md');
    writeFileSync(file, 'fresh');
    const cache = new FileDepsCache<string>();
    await cache.get('a', readBuild(file));
    await cache.get('a', readBuild(file));
    expect(cache.builds).toBe(2);
  });

  it('runs that ask at the same time share one build', async () => {
    const file = path.join(dir, 'a.md');
    writeFileSync(file, 'one');
    settle(file);
    const cache = new FileDepsCache<string>();
    const values = await Promise.all(Array.from({ length: 8 }, () => cache.get('a', readBuild(file))));
    expect(values).toEqual(Array(8).fill('one'));
    expect(cache.builds).toBe(1);
  });

  it('keeps no failure: a build that throws is tried again', async () => {
    const cache = new FileDepsCache<string>();
    await expect(cache.get('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(cache.get('a', async () => ({ value: 'ok', deps: [] }))).resolves.toBe('ok');
  });

  it('drops the oldest entry when full', async () => {
    const cache = new FileDepsCache<string>(2);
    const build = (v: string) => async () => ({ value: v, deps: [] });
    await cache.get('a', build('a'));
    await cache.get('b', build('b'));
    await cache.get('c', build('c'));
    await cache.get('b', build('b'));
    expect(cache.builds).toBe(3);
    await cache.get('a', build('a'));
    expect(cache.builds).toBe(4);
  });
});
