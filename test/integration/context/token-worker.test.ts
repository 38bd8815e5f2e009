import { execa } from 'execa';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PIECE_CHARS } from '../../../src/context/token-count.js';
import { TokenWorker } from '../../../src/context/token-pool.js';
import { startHttpServer } from '../../../src/server/http.js';
import { type HttpServer } from '../../../src/server/types.js';
import { REPO_ROOT } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function healthServer(): Promise<HttpServer> {
  const server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    readiness: () => Promise.resolve({ ok: true, checks: [] }),
    metrics: { render: () => Promise.resolve(''), contentType: 'text/plain' },
  });
  cleanups.push(() => server.close());
  return server;
}

/** Asks /healthz every 50 ms until `until` settles; resolves to the number of answers. */
async function probeWhile(port: number, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => (done = true)).catch(() => undefined);
  let answers = 0;
  while (!done) {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(200);
    await res.text();
    answers++;
    await new Promise((r) => setTimeout(r, 50));
  }
  return answers;
}

describe('token counting off the event loop', () => {
  // How fast /healthz answers meanwhile is a figure for bench/, not a bound here.
  it('counts 1 MB of one character while /healthz in the same process keeps answering', async () => {
    const worker = new TokenWorker();
    cleanups.push(() => worker.close());
    const server = await healthServer();
    const text = '['.repeat(1_000_000);
    const counting = worker.count([text, `${'='.repeat(100_000)}\n`.repeat(10)]);
    const answers = await probeWhile(server.port, counting);
    const [brackets = 0, equals = 0] = await counting;
    // o200k spells a run of `[` as pairs: 500,000 tokens; a cut every 256 characters may add up to 2.
    expect(brackets).toBeGreaterThanOrEqual(500_000);
    expect(brackets).toBeLessThanOrEqual(500_000 + 2 * Math.ceil(1_000_000 / MAX_PIECE_CHARS));
    expect(equals).toBeGreaterThan(0);
    // A count on the main thread would hold the loop until it is done: one answer, after it.
    expect(answers).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('fails a pending count with a clear error when the worker is closed, and counts again afterwards', async () => {
    const worker = new TokenWorker();
    cleanups.push(() => worker.close());
    const pending = worker.count(['a'.repeat(200_000)]);
    await worker.close();
    await expect(pending).rejects.toThrow(/token counter (closed|worker exited)/);
    expect(await worker.count(['hello world'])).toEqual([2]);
  });

  it('answers texts counted before from memory and counts only the new ones, in the order asked', async () => {
    const worker = new TokenWorker();
    cleanups.push(() => worker.close());
    expect(await worker.count(['hello world', '['.repeat(1000)])).toEqual([2, 503]);
    // The worker is gone: what was counted is still answered, without one.
    await worker.close();
    expect(await worker.count(['['.repeat(1000), 'hello world', 'hello world'])).toEqual([503, 2, 2]);
    // A new text among known ones starts the worker again; the counts come back in the order asked.
    expect(
      await worker.count(['hello world', 'hello hello world', '['.repeat(1000), 'hello hello world']),
    ).toEqual([2, 3, 503, 3]);
  });

  it('starts the built worker in a process run with Node flags meant for its main script, and lets it exit when done', async () => {
    // The compiled modules (as in dist/), under node_modules so that gpt-tokenizer resolves.
    const out = await mkdtemp(path.join(REPO_ROOT, 'node_modules', '.tr-build-'));
    cleanups.push(() => rm(out, { recursive: true, force: true }));
    const tsc = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsc');
    await execa(tsc, [
      ...['--outDir', out, '--rootDir', path.join(REPO_ROOT, 'src'), '--module', 'nodenext'],
      ...['--moduleResolution', 'nodenext', '--target', 'es2023', '--skipLibCheck', '--types', 'node'],
      path.join(REPO_ROOT, 'src/context/tokens.ts'),
      path.join(REPO_ROOT, 'src/context/token-worker.ts'),
    ]);
    const tokens = pathToFileURL(path.join(out, 'context/tokens.js')).href;
    const child = await execa(
      'node',
      [
        '--input-type=module',
        '-e',
        `const { tokenCounter } = await import(${JSON.stringify(tokens)}); console.log(JSON.stringify(await tokenCounter('o200k').rawMany(['hello world', '['.repeat(1000)])));`,
      ],
      { cwd: REPO_ROOT, reject: false, timeout: 30_000 },
    );
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual([2, 503]);
  }, 90_000);

  it('does not load the o200k tables for `triage-runner --version`', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tr-lazy-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const log = path.join(dir, 'resolved.log');
    await writeFile(
      path.join(dir, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }\n`,
    );
    await writeFile(
      path.join(dir, 'register.mjs'),
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)});\n`,
    );
    const run = (args: string[]) =>
      execa('node', ['--import', 'tsx', '--import', path.join(dir, 'register.mjs'), ...args], {
        cwd: REPO_ROOT,
        reject: false,
      });
    const o200k = /gpt-tokenizer\/(?:esm|cjs)\/(?:encoding|bpeRanks)\/o200k_base/;

    // The detector sees a load of the tables when one happens.
    await writeFile(log, '');
    const control = await run([
      '--input-type=module',
      '-e',
      "await import('gpt-tokenizer/encoding/o200k_base');",
    ]);
    expect(control.exitCode).toBe(0);
    expect(await readFile(log, 'utf8')).toMatch(o200k);

    await writeFile(log, '');
    const version = await run(['src/cli/main.ts', '--version']);
    expect(version.exitCode).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const resolved = await readFile(log, 'utf8');
    expect(resolved).toContain('src/cli/program.ts');
    expect(resolved).not.toMatch(o200k);
  }, 60_000);
});
