import { mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { freePort } from '../../support/net.js';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { configSchema, type ConfigInput } from '../../../src/config/schema.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import type { RunExecutor } from '../../../src/run/types.js';
import { readState, writeState } from '../../../src/workspace/state.js';
import { statePath } from '../../../src/workspace/layout.js';
import { silentLogger } from '../../../src/log/logger.js';
import { TransientError } from '../../../src/util/errors.js';
import {
  createMemoryExecutor,
  createProcessFakeExecutor,
  TRANSIENT_EXIT,
} from '../../support/fake-executor.js';
import {
  agentExecutions,
  dropByRename,
  dropInChunks,
  incidentJson,
  tempRoot,
  waitFor,
  waitForReleased,
  waitForState,
} from '../../support/incidents.js';

let root: string;
let cleanup: () => Promise<void>;
let daemons: Daemon[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot());
});
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
  await cleanup();
});

function makeDaemon(
  executor: RunExecutor,
  scheduling: NonNullable<ConfigInput['scheduling']> = {},
  extra: Partial<ConfigInput> = {},
): Daemon {
  const config = configSchema.parse({
    workspaces_root: root,
    engine: 'process',
    http: { port: 0 },
    intake: { write_settle: '300ms' },
    ...extra,
    scheduling: {
      lease_ttl: '5s',
      rescan_interval: '300ms',
      shutdown_timeout: '5s',
      retry_base_delay: 50,
      retry_max_delay: 200,
      ...scheduling,
    },
  });
  const daemon = new Daemon({
    config,
    log: silentLogger(),
    executor,
    audit: new AuditLog(),
    random: () => 0.5,
  });
  daemons.push(daemon);
  return daemon;
}

const executions = agentExecutions;

describe('Daemon intake', () => {
  it('runs an incident renamed into place, once, with a real fake agent', async () => {
    const daemon = makeDaemon(createProcessFakeExecutor({ sleepMs: 50 }));
    await daemon.start();
    const dir = await dropByRename(root, 'renamed', incidentJson());
    const state = await waitForState(dir, ['succeeded']);
    expect(state.attempts).toBe(1);
    expect(state.runs).toEqual([{ id: expect.any(String), status: 'succeeded' }]);
    expect(await readFile(path.join(dir, 'output', 'investigation.md'), 'utf8')).toMatch(/fake agent run/);
    expect(await executions(dir)).toBe(1);
    // `released` follows the final state write (then the lease goes).
    const audit = await waitFor('the released audit entry', async () => {
      const types = (await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { type: string }).type);
      return types.includes('released') ? types : undefined;
    });
    expect(audit).toEqual(['detected', 'validated', 'queued', 'claimed', 'launched', 'outcome', 'released']);
  });

  it('runs an incident written in place in chunks, after the write completes', async () => {
    const executor = createMemoryExecutor({ durationMs: 10 });
    const daemon = makeDaemon(executor);
    await daemon.start();
    const dir = await dropInChunks(root, 'chunked', incidentJson({ incidentId: 'chunky' }), 4, 120);
    await waitForState(dir, ['succeeded']);
    expect(executor.calls.map((c) => c.incidentId)).toEqual(['chunky']);
  });

  it('does not wait for write_settle on an atomic rename, nor after an in-place write completes', async () => {
    const executor = createMemoryExecutor({ durationMs: 5 });
    const daemon = makeDaemon(executor, {}, { intake: { write_settle: '20s' } });
    await daemon.start();
    const renamed = await dropByRename(root, 'fast-rename', incidentJson());
    const chunked = await dropInChunks(root, 'fast-chunks', incidentJson(), 3, 80);
    // Both finish far inside the 20 s settle time: neither path waited for it.
    await waitForState(renamed, ['succeeded'], 5000);
    await waitForState(chunked, ['succeeded'], 5000);
  });

  it('finds unprocessed workspaces at start-up and leaves finished ones alone', async () => {
    const executor = createMemoryExecutor({ durationMs: 5 });
    const first = makeDaemon(executor);
    const a = await dropByRename(root, 'a', incidentJson({ incidentId: 'a' }));
    await first.start();
    await waitForState(a, ['succeeded']);
    await first.stop();
    const b = await dropByRename(root, 'b', incidentJson({ incidentId: 'b' }));
    const second = makeDaemon(executor);
    await second.start();
    await waitForState(b, ['succeeded']);
    expect(executor.calls.map((c) => c.incidentId).sort()).toEqual(['a', 'b']);
  });

  it('picks up a finished folder that was deleted and recreated under the same name', async () => {
    const executor = createMemoryExecutor({ durationMs: 5 });
    const dir = await dropByRename(root, 'reused', incidentJson({ incidentId: 'old' }));
    const first = makeDaemon(executor);
    await first.start();
    await waitForState(dir, ['succeeded']);
    await waitForReleased(dir);
    await rm(dir, { recursive: true });
    await dropByRename(root, 'reused', incidentJson({ incidentId: 'new' }));
    await waitFor('the new incident to run', () =>
      executor.calls.some((c) => c.incidentId === 'new') ? true : undefined,
    );
    expect(executor.calls.map((c) => c.incidentId)).toEqual(['old', 'new']);
  });

  it.each([
    ['invalid JSON', '{"incidentId": "x",\n  nope }', /not valid JSON \(line 2, column 3\)/],
    ['an empty file', '', /is empty/],
    [
      'wrong types',
      JSON.stringify(incidentJson({ severity: 3, resource: { kind: 'Pod', name: 7 } })),
      /does not match the incident schema \(.*severity: /,
    ],
    [
      'a file over the size limit',
      JSON.stringify(incidentJson({ pad: 'x'.repeat(3000) })),
      /over the 2048-byte limit/,
    ],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /not valid UTF-8/],
  ])('rejects %s with a reason, and re-queues it once the file is fixed', async (_name, content, reason) => {
    const executor = createMemoryExecutor({ durationMs: 5 });
    const daemon = makeDaemon(executor, {}, { intake: { write_settle: '100ms', max_incident_bytes: 2048 } });
    await daemon.start();
    const dir = path.join(root, 'bad');
    await mkdir(dir);
    await writeFile(path.join(dir, 'incident.json'), content);
    const rejected = await waitForState(dir, ['rejected']);
    expect(rejected.reason).toMatch(reason);
    expect(rejected.reason).toMatch(/to retry/);
    expect(executor.calls).toHaveLength(0);
    await dropByRename(root, 'bad', incidentJson({ incidentId: 'fixed' }));
    await waitForState(dir, ['succeeded']);
    expect(executor.calls.map((c) => c.incidentId)).toEqual(['fixed']);
  });

  it('rejects a directory or a symlink in place of incident.json without following it, and re-queues each once replaced', async () => {
    const daemon = makeDaemon(createMemoryExecutor({ durationMs: 5 }));
    const isDir = path.join(root, 'isdir');
    await mkdir(path.join(isDir, 'incident.json'), { recursive: true });
    const link = path.join(root, 'link');
    await mkdir(link);
    const target = path.join(root, 'target.json');
    await writeFile(target, JSON.stringify(incidentJson()));
    await symlink(target, path.join(link, 'incident.json'));
    await daemon.start();
    expect((await waitForState(isDir, ['rejected'])).reason).toMatch(
      /incident\.json in .*isdir is a directory: replace it with a regular file to retry/,
    );
    expect((await waitForState(link, ['rejected'])).reason).toMatch(
      /incident\.json in .*link is a symbolic link, which is never followed: replace it with a regular file to retry/,
    );
    // Doing what the reason says re-queues both.
    await rm(path.join(isDir, 'incident.json'), { recursive: true });
    await rm(path.join(link, 'incident.json'));
    await dropByRename(root, 'isdir', incidentJson({ incidentId: 'was-dir' }));
    await dropByRename(root, 'link', incidentJson({ incidentId: 'was-link' }));
    await waitForState(isDir, ['succeeded']);
    await waitForState(link, ['succeeded']);
  });

  it('records a folder escaping the root under the root, never inside the target', async () => {
    const outside = await tempRoot('triage-outside-');
    try {
      await writeFile(path.join(outside.root, 'incident.json'), JSON.stringify(incidentJson()));
      await symlink(outside.root, path.join(root, 'escape'));
      const executor = createMemoryExecutor();
      const daemon = makeDaemon(executor);
      await daemon.start();
      const unsafe = path.join(root, '.triage', 'unsafe');
      const state = await waitFor('escaped state', async () => {
        const name = (await readdir(unsafe)).find(
          (f) => f.startsWith('escape-') && f.endsWith('.state.json'),
        );
        return name
          ? (JSON.parse(await readFile(path.join(unsafe, name), 'utf8')) as { state: string; reason: string })
          : undefined;
      });
      expect(state).toMatchObject({
        state: 'rejected',
        reason: expect.stringMatching(
          /resolves to .*, outside the workspaces root .*: move the incident into a real folder under the root to retry/,
        ),
      });
      expect(await readState(outside.root)).toBeUndefined();
      expect(executor.calls).toHaveLength(0);
    } finally {
      await outside.cleanup();
    }
  });

  it('records a duplicate inside the dedup window and does not run it', async () => {
    const executor = createMemoryExecutor({ durationMs: 5 });
    const daemon = makeDaemon(executor);
    await daemon.start();
    const resource = { kind: 'Pod', name: 'same', namespace: 'shop' };
    const first = await dropByRename(root, 'first', incidentJson({ incidentId: 'first', resource }));
    await waitForState(first, ['succeeded']);
    const second = await dropByRename(root, 'second', incidentJson({ incidentId: 'second', resource }));
    const dup = await waitForState(second, ['rejected']);
    expect(dup.duplicateOf).toBe('first');
    expect(dup.reason).toMatch(/^duplicate of first .* inside the 10m dedup window/);
    expect(executor.calls.map((c) => c.incidentId)).toEqual(['first']);
  });

  it('defers overflow beyond the queue limit and runs it later, losing nothing', async () => {
    const executor = createMemoryExecutor({ durationMs: 30 });
    const daemon = makeDaemon(executor, { max_concurrent: 1, queue_limit: 2 });
    const dirs: string[] = [];
    for (let i = 0; i < 6; i++)
      dirs.push(await dropByRename(root, `w${i}`, incidentJson({ incidentId: `w${i}` })));
    await daemon.start();
    const states = await Promise.all(dirs.map((d) => readState(d)));
    expect(states.filter((s) => s?.state === 'deferred').length).toBeGreaterThan(0);
    for (const dir of dirs) await waitForState(dir, ['succeeded'], 15_000);
    expect(executor.calls.map((c) => c.incidentId).sort()).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5']);
  });

  it('picks deferred incidents up as soon as the queue drains, without waiting for the rescan interval', async () => {
    const executor = createMemoryExecutor({ durationMs: 20 });
    const daemon = makeDaemon(executor, { max_concurrent: 1, queue_limit: 2, rescan_interval: '10m' });
    const dirs: string[] = [];
    for (let i = 0; i < 6; i++)
      dirs.push(await dropByRename(root, `d${i}`, incidentJson({ incidentId: `d${i}` })));
    await daemon.start();
    expect(
      (await Promise.all(dirs.map((d) => readState(d)))).filter((s) => s?.state === 'deferred').length,
    ).toBeGreaterThan(0);
    for (const dir of dirs) await waitForState(dir, ['succeeded'], 5000);
    expect(executor.calls.map((c) => c.incidentId).sort()).toEqual(['d0', 'd1', 'd2', 'd3', 'd4', 'd5']);
  });

  it('keeps max_concurrent and max_per_cluster', async () => {
    const executor = createMemoryExecutor({ durationMs: 40 });
    const daemon = makeDaemon(executor, { max_concurrent: 3, max_per_cluster: 2 });
    const dirs: string[] = [];
    for (let i = 0; i < 8; i++)
      dirs.push(await dropByRename(root, `w${i}`, incidentJson({ cluster: `c${i % 2}` })));
    await daemon.start();
    for (const dir of dirs) await waitForState(dir, ['succeeded']);
    expect(executor.maxConcurrent).toBe(3);
    expect(Math.max(...executor.maxPerCluster.values())).toBe(2);
  });

  it('starts critical before high before the rest, then first-come', async () => {
    const executor = createMemoryExecutor({ durationMs: 5 });
    const daemon = makeDaemon(executor, { max_concurrent: 1 });
    const order: [string, string][] = [
      ['low-a', 'low'],
      ['high-a', 'high'],
      ['crit', 'critical'],
      ['low-b', 'info'],
      ['high-b', 'High'],
    ];
    const dirs: string[] = [];
    for (const [id, severity] of order) {
      dirs.push(await dropByRename(root, id, incidentJson({ incidentId: id, severity })));
      await new Promise((r) => setTimeout(r, 15)); // distinct arrival times (mtime) for first-come order
    }
    await daemon.start();
    for (const dir of dirs) await waitForState(dir, ['succeeded']);
    expect(executor.calls.map((c) => c.incidentId)).toEqual(['crit', 'high-a', 'high-b', 'low-a', 'low-b']);
  });

  it('retries a transient failure with backoff and never a permanent one', async () => {
    const executor = createProcessFakeExecutor({
      sleepMs: 10,
      exitCode: ({ workspace, attempt }) =>
        workspace.incident.incidentId === 'flaky' ? (attempt < 3 ? TRANSIENT_EXIT : 0) : 3,
    });
    const daemon = makeDaemon(executor, { max_attempts: 3 });
    await daemon.start();
    const flaky = await dropByRename(root, 'flaky', incidentJson({ incidentId: 'flaky' }));
    const broken = await dropByRename(root, 'broken', incidentJson({ incidentId: 'broken' }));
    const ok = await waitForState(flaky, ['succeeded', 'failed']);
    expect(ok).toMatchObject({ state: 'succeeded', attempts: 3 });
    expect(ok.runs.map((r) => r.status)).toEqual(['failed', 'failed', 'succeeded']);
    const failed = await waitForState(broken, ['failed']);
    expect(failed.attempts).toBe(1);
    expect(failed.reason).toMatch(/exited with 3/);
  });

  it('re-queues a run the executor reports interrupted while the daemon keeps running', async () => {
    const executor = createMemoryExecutor({
      durationMs: 5,
      outcome: (req) =>
        req.attempt === 1 ? { status: 'interrupted', reason: 'engine restarted' } : { status: 'succeeded' },
    });
    const daemon = makeDaemon(executor);
    await daemon.start();
    const dir = await dropByRename(root, 'bumped', incidentJson());
    const state = await waitForState(dir, ['succeeded']);
    expect(state.attempts).toBe(2);
    expect(state.runs.map((r) => r.status)).toEqual(['interrupted', 'succeeded']);
  });

  it('gives up on a thrown TransientError after max_attempts', async () => {
    const executor = createMemoryExecutor({
      durationMs: 1,
      outcome: () => Promise.reject(new TransientError('engine unreachable')),
    });
    const daemon = makeDaemon(executor, { max_attempts: 2 });
    await daemon.start();
    const dir = await dropByRename(root, 'down', incidentJson());
    const state = await waitForState(dir, ['failed']);
    expect(state.attempts).toBe(2);
    expect(state.reason).toMatch(/gave up after 2 attempts.*engine unreachable/);
  });

  it.each(['deferred', 'interrupted'] as const)(
    'runs a queued incident whose state another replica changed to %s meanwhile, and frees its lease',
    async (changedTo) => {
      let openGate: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const executor = createMemoryExecutor({
        durationMs: 5,
        outcome: async (req) => {
          if (req.workspace.incident.incidentId === 'blocker') await gate;
          return { status: 'succeeded' };
        },
      });
      // No rescan in time to paper over a stuck incident.
      const daemon = makeDaemon(executor, { max_concurrent: 1, rescan_interval: '10m' });
      try {
        await daemon.start();
        const blocker = await dropByRename(root, 'blocker', incidentJson({ incidentId: 'blocker' }));
        await waitForState(blocker, ['running']);
        const next = await dropByRename(root, 'next', incidentJson({ incidentId: 'next' }));
        const queued = await waitForState(next, ['queued']);
        await waitFor('the incident to be queued in memory', () =>
          daemon.stats().queued === 1 ? true : undefined,
        );
        // What another replica writes: deferred (its queue was full) or interrupted (it ran and was stopped).
        await writeState(statePath(next), {
          ...queued,
          state: changedTo,
          updatedAt: new Date().toISOString(),
        });
        openGate();
        const done = await waitForState(next, ['succeeded']);
        expect(done.attempts).toBe(1);
        expect(executor.calls.map((c) => c.incidentId)).toEqual(['blocker', 'next']);
        await waitForReleased(next);
      } finally {
        openGate(); // a failed wait must not leave the blocker hanging the daemon's shutdown
      }
    },
  );

  it('interrupts runs still in flight at shutdown_timeout and re-queues them at the next start', async () => {
    const slow = createMemoryExecutor({ durationMs: 60_000 });
    const daemon = makeDaemon(slow, { shutdown_timeout: 200 });
    await daemon.start();
    const dir = await dropByRename(root, 'long', incidentJson({ incidentId: 'long' }));
    await waitForState(dir, ['running']);
    await daemon.stop();
    const state = await readState(dir);
    expect(state).toMatchObject({ state: 'interrupted', runs: [{ status: 'interrupted' }] });
    const fast = createMemoryExecutor({ durationMs: 5 });
    const next = makeDaemon(fast);
    await next.start();
    const done = await waitForState(dir, ['succeeded']);
    expect(done.attempts).toBe(2);
    expect(fast.calls.map((c) => c.incidentId)).toEqual(['long']);
  });

  it('records a run that ignores its abort as interrupted once the stop grace is over', async () => {
    const stuck: RunExecutor = {
      ...createMemoryExecutor(),
      // An agent that launches and then never ends, whatever it is told.
      run: async (req) => {
        await req.onStage?.({ type: 'launched', engine: 'process', id: 'stuck' });
        return new Promise(() => undefined);
      },
    };
    const daemon = makeDaemon(stuck, { shutdown_timeout: 100 }, { agent: { stop_grace: '100ms' } });
    await daemon.start();
    const dir = await dropByRename(root, 'stuck', incidentJson());
    await waitForState(dir, ['running']);
    await daemon.stop();
    expect(await readState(dir)).toMatchObject({
      state: 'interrupted',
      reason: expect.stringMatching(/did not stop/),
    });
    await expect(readFile(path.join(dir, '.triage', 'lease'))).rejects.toThrow(/ENOENT/);
  });

  it.each([
    ['still on the engine: adopts it and never starts a second agent', { status: 'succeeded' } as const, 0],
    ['gone from the engine: re-queues it and runs it once', 'gone' as const, 1],
  ])('at the next start, a run that did not stop at shutdown is %s', async (_name, adopted, expectedRuns) => {
    const stuck: RunExecutor = {
      ...createMemoryExecutor(),
      // An agent that launches and then never ends, whatever it is told.
      run: async (req) => {
        await req.onStage?.({ type: 'launched', engine: 'process', id: 'stuck' });
        return new Promise(() => undefined);
      },
    };
    const first = makeDaemon(stuck, { shutdown_timeout: 100 }, { agent: { stop_grace: '100ms' } });
    await first.start();
    const dir = await dropByRename(root, 'unstopped', incidentJson());
    await waitForState(dir, ['running']);
    await first.stop();
    expect(await readState(dir)).toMatchObject({ state: 'interrupted', unstopped: true });

    const adoptions: string[] = [];
    const fresh = createMemoryExecutor({ durationMs: 5 });
    const next = makeDaemon({
      ...fresh,
      adopt: async (req) => {
        adoptions.push(req.runId);
        return adopted;
      },
    });
    await next.start();
    const done = await waitForState(dir, ['succeeded']);
    expect(adoptions).toHaveLength(1);
    expect(fresh.calls).toHaveLength(expectedRuns);
    expect(done.unstopped).toBeUndefined();
  });

  it('lets in-flight runs finish within shutdown_timeout', async () => {
    const executor = createMemoryExecutor({ durationMs: 300 });
    const daemon = makeDaemon(executor, { shutdown_timeout: 5000 });
    await daemon.start();
    const dir = await dropByRename(root, 'finish', incidentJson());
    await waitForState(dir, ['running']);
    await daemon.stop();
    expect((await readState(dir))?.state).toBe('succeeded');
  });

  it('stopped during start-up, leaves no watcher, timer or HTTP server behind and never turns ready', async () => {
    const fsWatchers = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
    const before = fsWatchers();
    const port = await freePort();
    const executor = createMemoryExecutor({ durationMs: 5 });
    const daemon = makeDaemon(executor, {}, { http: { port, host: '127.0.0.1' } });
    await dropByRename(root, 'early', incidentJson());
    const starting = daemon.start();
    await daemon.stop();
    await starting;
    expect(daemon.stats()).toMatchObject({ ready: false, stopping: true });
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    expect(fsWatchers()).toBe(before);
    expect(executor.calls).toHaveLength(0);
  });

  it('survives its workspaces root being removed: reports it not ready, then watches the re-created root', async () => {
    const executor = createMemoryExecutor({ durationMs: 5 });
    // A long rescan interval: only the watcher (or the root check) can find the second incident in time.
    const daemon = makeDaemon(executor, { rescan_interval: '10m' });
    await daemon.start();
    const first = await dropByRename(root, 'before', incidentJson({ incidentId: 'before' }));
    await waitForState(first, ['succeeded']);
    await waitForReleased(first);
    await rm(root, { recursive: true, force: true });
    // The disk check may say first that .triage cannot be written (ENOENT): the root is never made again.
    const down = await waitFor('readiness to report the missing root', async () => {
      const r = await daemon.readiness();
      return r.ok || r.checks[0]?.ok ? undefined : r;
    });
    expect(down.ok).toBe(false);
    expect(down.checks[0]).toMatchObject({
      name: 'intake',
      ok: false,
      detail: expect.stringMatching(/unavailable/),
    });
    await mkdir(root);
    await waitFor('readiness to recover', async () => ((await daemon.readiness()).ok ? true : undefined));
    const second = await dropByRename(root, 'after', incidentJson({ incidentId: 'after' }));
    await waitForState(second, ['succeeded']);
    await waitForReleased(second);
    // Removed and re-created at once (no moment without a root to notice): still found again.
    await rm(root, { recursive: true, force: true });
    await mkdir(root);
    const third = await dropByRename(root, 'replaced', incidentJson({ incidentId: 'replaced' }));
    await waitForState(third, ['succeeded']);
    expect(executor.calls.map((c) => c.incidentId)).toEqual(['before', 'after', 'replaced']);
  });

  it('refuses to start with a message naming the root and the fix when workspaces_root is a file', async () => {
    const file = path.join(root, 'not-a-folder');
    await writeFile(file, '');
    const config = configSchema.parse({ workspaces_root: file, engine: 'process', http: { port: 0 } });
    const daemon = new Daemon({
      config,
      log: silentLogger(),
      executor: createMemoryExecutor(),
      audit: new AuditLog(),
    });
    daemons.push(daemon);
    await expect(daemon.start()).rejects.toThrow(
      /workspaces root .*not-a-folder is not a folder: point workspaces_root \/ --workspaces-root at a folder/,
    );
  });

  it('refuses to start with a message naming the address and the fix when the HTTP port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const daemon = makeDaemon(createMemoryExecutor(), {}, { http: { port, host: '127.0.0.1' } });
      await expect(daemon.start()).rejects.toThrow(
        new RegExp(
          `cannot serve /healthz, /readyz and /metrics on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\): free the port or set http\\.port`,
        ),
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('serves /healthz, /readyz and /metrics with incident outcomes and queue depth', async () => {
    const port = await freePort();
    const daemon = makeDaemon(
      createMemoryExecutor({ durationMs: 5 }),
      {},
      { http: { port, host: '127.0.0.1' } },
    );
    await daemon.start();
    expect(daemon.httpPort).toBe(port);
    const dir = await dropByRename(root, 'metrics', incidentJson());
    await waitForState(dir, ['succeeded']);
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      ok: true,
      checks: [
        { name: 'intake', ok: true },
        { name: 'disk', ok: true },
        { name: 'memory-executor', ok: true },
      ],
    });
    // The store writes state.json, appends the audit events, then bumps the counter (docs/architecture.md):
    // a final state may be visible a moment before its count.
    const metrics = await waitFor('the succeeded outcome counted', async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      return /triage_runner_incidents_total\{outcome="succeeded"\} 1/.test(text) &&
        /triage_runner_run_duration_seconds_count\{status="succeeded"\} 1/.test(text)
        ? text
        : undefined;
    });
    expect(metrics).toMatch(/triage_runner_incidents_total\{outcome="succeeded"\} 1/);
    expect(metrics).toMatch(/triage_runner_queue_depth 0/);
    expect(metrics).toMatch(/triage_runner_run_duration_seconds_count\{status="succeeded"\} 1/);
    expect(metrics).not.toMatch(/process_cpu/);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('answers /readyz 503 with the failing check when the executor is not ready', async () => {
    const port = await freePort();
    const executor = {
      ...createMemoryExecutor(),
      readiness: async () => ({
        ok: false,
        checks: [{ name: 'engine', ok: false, detail: 'docker socket refused' }],
      }),
    };
    const daemon = makeDaemon(executor, {}, { http: { port, host: '127.0.0.1' } });
    await daemon.start();
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      ok: false,
      checks: [
        { name: 'intake', ok: true },
        { name: 'disk', ok: true },
        { name: 'engine', ok: false, detail: 'docker socket refused' },
      ],
    });
  });
});
