// The docker engine against the real engine (Podman's Docker API in CI): hardening, stdin, timeouts,
// removal and listing by label.
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { supervise } from '../../../src/run/supervise.js';
import { createDockerEngine } from '../../../src/engines/docker/index.js';
import { LABEL_PREFIX, RUN_LABELS } from '../../../src/engines/labels.js';
import type { Engine, RunHandle, RunSpec } from '../../../src/engines/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import { TEST_IMAGE, dockerHost, requireEngine, requireTestImage } from '../../support/engine.js';
import { tempDir, testConfig } from '../../support/runs.js';

const docker = await requireEngine();
const MEMORY = 96 * 1024 * 1024;
const PIDS = 48;

const FACTS = `
echo "uid=$(id -u)"
if (echo x > /root-probe) 2>/tmp/err; then echo "root_write=ok"; else echo "root_write=$(cat /tmp/err)"; fi
if (echo x > /data/ro/probe) 2>/tmp/err; then echo "ro_write=ok"; else echo "ro_write=$(cat /tmp/err)"; fi
if echo x > /data/rw/probe; then echo "rw_write=ok"; else echo "rw_write=failed"; fi
if echo x > "$HOME/probe"; then echo "home_write=ok"; else echo "home_write=failed"; fi
echo "ro_read=$(cat /data/ro/hello.txt)"
echo "cap_eff=$(grep '^CapEff:' /proc/self/status | tr -d ' \\t' | cut -d: -f2)"
echo "no_new_privs=$(grep '^NoNewPrivs:' /proc/self/status | tr -d ' \\t' | cut -d: -f2)"
echo "memory_limit=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
echo "pids_limit=$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max)"
echo "secret=$SECRET_TOKEN"
echo "sock=$(ls /var/run/docker.sock /run/podman/podman.sock 2>&1 | head -1)"
`;

function facts(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

describe.skipIf(!docker)('docker engine on the real container engine', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let engine: Engine;
  const handles: RunHandle[] = [];
  const testLabel = `${LABEL_PREFIX}test`;
  const testRun = `engine-test-${process.pid}-${Date.now()}`;
  let n = 0;

  beforeAll(async () => {
    await requireTestImage(docker!);
    root = await tempDir('triage-docker-engine-');
    const config = testConfig(root.dir, {
      docker: {
        host: dockerHost(),
        memory: MEMORY,
        pids: PIDS,
        cpus: 0.5,
        tmpfs_size: '16m',
        network: 'none',
      },
    });
    engine = createDockerEngine(config, silentLogger());
  });

  afterEach(async () => {
    await Promise.all(handles.splice(0).map((h) => engine.remove(h)));
  });

  afterAll(async () => {
    await engine?.close();
    await root?.cleanup();
  });

  function spec(over: Partial<RunSpec> & { out?: Buffer[]; err?: Buffer[] }): RunSpec {
    n++;
    const out = over.out ?? [];
    const err = over.err ?? [];
    return {
      runId: `${testRun}-${n}`,
      incidentId: 'inc-engine-test',
      labels: { [testLabel]: testRun, [RUN_LABELS.run]: `${testRun}-${n}` },
      image: TEST_IMAGE,
      command: '/usr/local/bin/fake-agent',
      args: [],
      env: { HOME: '/home/agent' },
      secretEnv: {},
      stdin: '',
      workdir: '/home/agent',
      mounts: [],
      tmpfs: ['/home/agent', '/tmp'],
      stateDir: root.dir,
      onStdout: (c) => out.push(c),
      onStderr: (c) => err.push(c),
      ...over,
    };
  }

  async function startTracked(s: RunSpec): Promise<RunHandle> {
    const h = await engine.start(s);
    handles.push(h);
    return h;
  }

  it('applies non-root user, read-only rootfs, dropped caps, no-new-privileges, limits and read-only mounts', async () => {
    const ro = path.join(root.dir, 'ro');
    const rw = path.join(root.dir, 'rw');
    await mkdir(ro, { recursive: true });
    await mkdir(rw, { recursive: true });
    await chmod(rw, 0o777);
    await writeFile(path.join(ro, 'hello.txt'), 'hello');
    const out: Buffer[] = [];
    const h = await startTracked(
      spec({
        command: 'sh',
        args: ['-c', FACTS],
        secretEnv: { SECRET_TOKEN: 'value-from-secret-env' },
        mounts: [
          { source: ro, target: '/data/ro', readOnly: true },
          { source: rw, target: '/data/rw', readOnly: false },
        ],
        out,
      }),
    );
    const exit = await engine.wait(h, 30_000);
    expect(exit.exitCode).toBe(0);
    const f = facts(Buffer.concat(out).toString());
    expect(f.uid).toBe('1000');
    expect(f.root_write).toMatch(/read-only file system/i);
    expect(f.ro_write).toMatch(/read-only file system/i);
    expect(f.rw_write).toBe('ok');
    expect(f.home_write).toBe('ok');
    expect(f.ro_read).toBe('hello');
    expect(f.cap_eff).toBe('0000000000000000');
    expect(f.no_new_privs).toBe('1');
    expect(Number(f.memory_limit)).toBe(MEMORY);
    expect(Number(f.pids_limit)).toBe(PIDS);
    expect(f.secret).toBe('value-from-secret-env');
    expect(f.sock).toMatch(/No such file/);
    expect((await readFile(path.join(rw, 'probe'), 'utf8')).trim()).toBe('x');
  });

  it('delivers a 1 MiB hostile prompt on stdin byte-identical', async () => {
    const out = path.join(root.dir, 'stdin-out');
    await mkdir(out, { recursive: true });
    await chmod(out, 0o777);
    const hostile =
      `'"$(touch /tmp/pwned)\`id\`\n\\x00 ünïcödé 🚀 --flag=-x\r\n${randomBytes(512 * 1024).toString('base64')}`.slice(
        0,
        1024 * 1024,
      );
    const h = await startTracked(
      spec({
        env: { HOME: '/home/agent', FAKE_AGENT_ECHO_STDIN_TO: '/out/stdin.bin', FAKE_AGENT_REPORT: 'none' },
        mounts: [{ source: out, target: '/out', readOnly: false }],
        stdin: hostile,
      }),
    );
    const exit = await engine.wait(h, 30_000);
    expect(exit.exitCode).toBe(0);
    const got = await readFile(path.join(out, 'stdin.bin'));
    expect(got.length).toBe(Buffer.byteLength(hostile));
    expect(createHash('sha256').update(got).digest('hex')).toBe(
      createHash('sha256').update(hostile).digest('hex'),
    );
  });

  it('keeps stdout and stderr apart and reports the exit code unmasked', async () => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const h = await startTracked(
      spec({ env: { HOME: '/home/agent', FAKE_AGENT_EXIT: '3', FAKE_AGENT_REPORT: 'none' }, out, err }),
    );
    const exit = await engine.wait(h, 30_000);
    expect(exit).toMatchObject({ exitCode: 3, oomKilled: false });
    expect(Buffer.concat(out).toString()).toContain('"type":"result"');
    expect(Buffer.concat(err).toString()).toContain('fake-agent: started as uid 1000');
  });

  it('stops a run that ignores SIGINT and SIGTERM with SIGKILL after the grace, then removes it', async () => {
    const err: Buffer[] = [];
    const h = await startTracked(
      spec({ env: { HOME: '/home/agent', FAKE_AGENT_SLEEP: '120', FAKE_AGENT_IGNORE_SIGNALS: '1' }, err }),
    );
    const controller = new AbortController();
    const r = await supervise({
      engine,
      handle: h,
      timeoutMs: 1500,
      graceMs: 700,
      signal: controller.signal,
      log: silentLogger(),
    });
    expect(r.timedOut).toBe(true);
    expect(r.stoppedWith).toBe('SIGKILL');
    expect(r.exit.exitCode).toBe(137);
    await engine.remove(h);
    expect(await engine.list({ [RUN_LABELS.run]: h.runId })).toEqual([]);
    await engine.remove(h); // idempotent
  });

  it('stops a cooperative run at SIGINT (exit 130) when the daemon shuts down', async () => {
    const err: Buffer[] = [];
    const h = await startTracked(spec({ env: { HOME: '/home/agent', FAKE_AGENT_SLEEP: '120' }, err }));
    const controller = new AbortController();
    const supervised = supervise({
      engine,
      handle: h,
      timeoutMs: 60_000,
      graceMs: 10_000,
      signal: controller.signal,
      log: silentLogger(),
    });
    // Abort once the agent is running (it has printed its start line).
    const deadline = Date.now() + 15_000;
    while (!Buffer.concat(err).toString().includes('started as uid')) {
      if (Date.now() > deadline) throw new Error('fake agent did not start within 15000 ms');
      await new Promise((r) => setTimeout(r, 50));
    }
    controller.abort();
    const r = await supervised;
    expect(r).toMatchObject({ interrupted: true, timedOut: false, stoppedWith: 'SIGINT' });
    expect(r.exit.exitCode).toBe(130);
  });

  it('stops a CLI without signal handlers at SIGINT: an init, not the CLI, is PID 1', async () => {
    // As PID 1 a process ignores every signal it has no handler for; busybox sleep has none.
    const h = await startTracked(spec({ command: '/bin/sleep', args: ['120'] }));
    const controller = new AbortController();
    const supervised = supervise({
      engine,
      handle: h,
      timeoutMs: 60_000,
      graceMs: 10_000,
      signal: controller.signal,
      log: silentLogger(),
    });
    const deadline = Date.now() + 15_000;
    while (!(await engine.list({ [RUN_LABELS.run]: h.runId }))[0]?.running) {
      if (Date.now() > deadline) throw new Error('sleep container not running within 15000 ms');
      await new Promise((r) => setTimeout(r, 50));
    }
    controller.abort();
    const r = await supervised;
    expect(r).toMatchObject({ interrupted: true, stoppedWith: 'SIGINT', exit: { exitCode: 130 } });
  });

  it('creates the container while beforeStart runs, and starts the agent only once it has resolved', async () => {
    const ro = path.join(root.dir, 'gate-ro');
    await mkdir(ro, { recursive: true });
    const out: Buffer[] = [];
    const s = spec({
      command: 'sh',
      args: ['-c', 'cat /data/ro/ready.txt'],
      mounts: [{ source: ro, target: '/data/ro', readOnly: true }],
      out,
    });
    const seen: { running: boolean; started: boolean }[] = [];
    const h = await startTracked({
      ...s,
      beforeStart: async () => {
        // The engine creates the container meanwhile. Watch it for ten looks after it exists (an engine
        // that did not wait would start it within them) before making what the agent reads at its start.
        await vi.waitFor(
          async () => {
            const [run] = await engine.list({ [RUN_LABELS.run]: s.runId });
            if (run) seen.push({ running: run.running, started: run.started });
            expect(seen.length >= 10 || seen.some((r) => r.started)).toBe(true);
          },
          { timeout: 30_000, interval: 10 },
        );
        await writeFile(path.join(ro, 'ready.txt'), 'written-by-before-start');
      },
    });
    expect(seen.every((r) => !r.running && !r.started)).toBe(true);
    expect((await engine.wait(h, 30_000)).exitCode).toBe(0);
    expect(Buffer.concat(out).toString()).toBe('written-by-before-start');
  });

  it("removes the created container and throws beforeStart's own error when it fails", async () => {
    const s = spec({ env: { HOME: '/home/agent', FAKE_AGENT_REPORT: 'none' } });
    const notReady = new Error('the kubectl broker could not listen');
    let created = 0;
    const started = engine.start({
      ...s,
      beforeStart: async () => {
        await vi.waitFor(
          async () => {
            created = (await engine.list({ [RUN_LABELS.run]: s.runId })).length;
            expect(created).toBe(1);
          },
          { timeout: 30_000, interval: 20 },
        );
        throw notReady;
      },
    });
    await expect(started).rejects.toBe(notReady);
    expect(created).toBe(1);
    expect(await engine.list({ [RUN_LABELS.run]: s.runId })).toEqual([]);
  });

  it('lists runs by label with their running state', async () => {
    const h = await startTracked(spec({ env: { HOME: '/home/agent', FAKE_AGENT_SLEEP: '120' } }));
    const found = await engine.list({ [RUN_LABELS.run]: h.runId });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ handle: { engine: 'docker', id: h.id, runId: h.runId }, running: true });
    await engine.signal(h, 'SIGKILL');
    await engine.wait(h, 30_000);
    expect((await engine.list({ [RUN_LABELS.run]: h.runId }))[0]?.running).toBe(false);
  });

  it('fails with the build command when the image is missing', async () => {
    await expect(engine.start(spec({ image: 'triage-runner-no-such-image:never' }))).rejects.toThrow(
      /triage-runner-no-such-image:never not found.*build -t triage-runner-no-such-image:never runners\//,
    );
  });
});
