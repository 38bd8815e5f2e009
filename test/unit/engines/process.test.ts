// The process engine with real child processes: environment allowlist, stdin, HOME links, process
// groups, and finding a still-running process from its pid file after a restart.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { supervise } from '../../../src/run/supervise.js';
import { isWaitTimeout, RUN_LABELS } from '../../../src/engines/labels.js';
import { PID_FILE, WRAPPER, createProcessEngine } from '../../../src/engines/process.js';
import { processStartTime } from '../../../src/util/process.js';
import type { Engine, RunHandle, RunSpec } from '../../../src/engines/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import { tempDir, testConfig } from '../../support/runs.js';
import { eventually } from '../../support/wait.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const until = async (what: string, timeoutMs: number, fn: () => boolean | Promise<boolean>): Promise<void> =>
  void (await eventually(what, fn, timeoutMs, 25));

describe('process engine', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let engine: Engine;
  const handles: RunHandle[] = [];
  let n = 0;

  beforeEach(async () => {
    root = await tempDir('triage-process-engine-');
    engine = createProcessEngine(testConfig(root.dir), silentLogger(), {
      env: { PATH: process.env.PATH, LANG: 'C.UTF-8', DAEMON_ONLY_SECRET: 'must-not-leak' },
    });
  });

  afterEach(async () => {
    await Promise.all(handles.splice(0).map((h) => engine.remove(h)));
    await root.cleanup();
  });

  function spec(over: Partial<RunSpec> & { out?: Buffer[]; err?: Buffer[] }): RunSpec {
    n++;
    const out = over.out ?? [];
    const err = over.err ?? [];
    return {
      runId: `run-${n}`,
      incidentId: 'inc-1',
      labels: { [RUN_LABELS.run]: `run-${n}`, [RUN_LABELS.daemon]: 'test' },
      image: 'unused',
      command: 'true',
      args: [],
      env: { HOME: path.join(root.dir, `home-${n}`) },
      secretEnv: {},
      stdin: '',
      workdir: root.dir,
      mounts: [],
      tmpfs: [],
      stateDir: path.join(root.dir, `state-${n}`),
      onStdout: (c) => out.push(c),
      onStderr: (c) => err.push(c),
      ...over,
    };
  }

  const start = async (s: RunSpec) => {
    const h = await engine.start(s);
    handles.push(h);
    return h;
  };

  it("passes only the allowlisted daemon variables plus the spec's env and secrets", async () => {
    const out: Buffer[] = [];
    const h = await start(
      spec({
        command: 'env',
        env: { HOME: path.join(root.dir, 'h'), AGENT_VAR: 'a' },
        secretEnv: { API_KEY: 'k-123' },
        out,
      }),
    );
    expect(await engine.wait(h, 10_000)).toMatchObject({ exitCode: 0, signal: null });
    const env = Buffer.concat(out).toString();
    expect(env).toContain('AGENT_VAR=a\n');
    expect(env).toContain('API_KEY=k-123\n');
    expect(env).toContain('LANG=C.UTF-8\n');
    expect(env).toContain(`HOME=${path.join(root.dir, 'h')}\n`);
    expect(env).not.toContain('DAEMON_ONLY_SECRET');
  });

  it('sees the exit of agents that end before start() has returned (40 at once)', async () => {
    const hs = await Promise.all(Array.from({ length: 40 }, () => start(spec({ command: 'true' }))));
    const exits = await Promise.all(hs.map((h) => engine.wait(h, 5_000).catch((e: unknown) => e)));
    expect(exits.filter((e) => (e as { exitCode?: number }).exitCode !== 0)).toEqual([]);
  });

  it('starts the agent only once the daemon has written the pid file that lets a restarted daemon find it', async () => {
    const dir = path.join(root.dir, 'wrapper');
    await mkdir(dir, { recursive: true });
    const pidFile = path.join(dir, 'agent.pid');
    const ran = path.join(dir, 'agent-ran');
    const child = spawn('/bin/sh', ['-c', WRAPPER, 'triage-runner-agent', 'touch', ran], {
      env: {
        PATH: process.env.PATH,
        TRIAGE_PID_FILE: pidFile,
        TRIAGE_EXIT_FILE: path.join(dir, 'agent.exit'),
      },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Without its pid file the wrapper must not start the agent: seen polling for it (three of its
    // `sleep` children, each a turn of the loop that found no file), it has not run the agent.
    const polls = new Set<string>();
    await eventually(
      'the wrapper to poll for its pid file three times',
      async () => {
        const task = `/proc/${child.pid}/task/${child.pid}/children`;
        for (const pid of (await readFile(task, 'utf8').catch(() => '')).split(/\s+/).filter(Boolean))
          if ((await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim() === 'sleep')
            polls.add(pid);
        return polls.size >= 3;
      },
      10_000,
      2,
    );
    await expect(stat(ran)).rejects.toThrow(/ENOENT/);
    await writeFile(pidFile, '{}');
    expect(await exited).toBe(0);
    expect((await stat(ran)).isFile()).toBe(true);
    expect(await readFile(path.join(dir, 'agent.exit'), 'utf8')).toBe('0\n');
  });

  it('delivers a 1 MiB hostile prompt on stdin byte-identical', async () => {
    const out: Buffer[] = [];
    const hostile = `'"$(rm -rf /)\`id\`\n ünïcödé 🚀\r\n${randomBytes(600 * 1024).toString('base64')}`.slice(
      0,
      1024 * 1024,
    );
    const h = await start(spec({ command: 'cat', stdin: hostile, out }));
    expect((await engine.wait(h, 10_000)).exitCode).toBe(0);
    const got = Buffer.concat(out);
    expect(got.length).toBe(Buffer.byteLength(hostile));
    expect(createHash('sha256').update(got).digest('hex')).toBe(
      createHash('sha256').update(hostile).digest('hex'),
    );
  });

  it('links mounts that target HOME and refuses other remapped targets', async () => {
    const skills = path.join(root.dir, 'skills-src');
    await mkdir(skills, { recursive: true });
    await writeFile(path.join(skills, 'SKILL.md'), 'skill body');
    const home = path.join(root.dir, 'home-links');
    const out: Buffer[] = [];
    const h = await start(
      spec({
        command: 'cat',
        args: [path.join(home, '.claude/skills/k8s/SKILL.md')],
        env: { HOME: home },
        mounts: [{ source: skills, target: path.join(home, '.claude/skills/k8s'), readOnly: true }],
        tmpfs: [path.join(home, '.claude')],
        out,
      }),
    );
    expect((await engine.wait(h, 10_000)).exitCode).toBe(0);
    expect(Buffer.concat(out).toString()).toBe('skill body');
    await expect(
      engine.start(spec({ mounts: [{ source: skills, target: '/opt/elsewhere', readOnly: true }] })),
    ).rejects.toThrow(/only targets under HOME/);
  });

  it('fails to start with the command and PATH when the CLI is missing', async () => {
    await expect(engine.start(spec({ command: 'no-such-agent-cli-xyz' }))).rejects.toThrow(
      /no-such-agent-cli-xyz not found \(PATH=/,
    );
  });

  it('escalates to the whole process group: SIGINT is ignored by a background job, SIGTERM ends it', async () => {
    const pidFile = path.join(root.dir, 'grandchild.pid');
    const h = await start(spec({ command: 'sh', args: ['-c', `sleep 300 & echo $! > ${pidFile}; wait`] }));
    await until(
      'grandchild pid written',
      10_000,
      async () =>
        (await stat(pidFile).catch(() => undefined))?.size !== undefined &&
        (await readFile(pidFile, 'utf8')).trim() !== '',
    );
    const grandchild = Number((await readFile(pidFile, 'utf8')).trim());
    const r = await supervise({
      engine,
      handle: h,
      timeoutMs: 200,
      graceMs: 300,
      signal: new AbortController().signal,
      log: silentLogger(),
    });
    expect(r.timedOut).toBe(true);
    expect(['SIGINT', 'SIGTERM']).toContain(r.stoppedWith);
    // What the agent left running in its group goes when the run is removed.
    await engine.remove(h);
    await until(`grandchild ${grandchild} gone`, 10_000, () => !alive(grandchild));
  });

  it('wait rejects with a typed timeout carrying the milliseconds', async () => {
    const h = await start(spec({ command: 'sleep', args: ['30'] }));
    const err = await engine.wait(h, 50).catch((e: unknown) => e);
    expect(isWaitTimeout(err)).toBe(true);
    expect(String(err)).toContain('50 ms');
  });

  it('after a restart finds the process from its pid file, re-reads its whole output and its exit code', async () => {
    const stateDir = path.join(root.dir, 'incidents', 'ws-1', '.triage', 'runs', 'run-restart');
    await mkdir(stateDir, { recursive: true });
    const go = path.join(root.dir, 'go');
    const h = await start(
      spec({
        runId: 'run-restart',
        labels: { [RUN_LABELS.run]: 'run-restart' },
        command: 'sh',
        args: [
          '-c',
          `echo before; while [ ! -e ${go} ]; do sleep 0.05; done; echo after; echo oops >&2; exit 7`,
        ],
        stateDir,
      }),
    );
    const record = JSON.parse(await readFile(path.join(stateDir, PID_FILE), 'utf8')) as {
      pid: number;
      startTime: string;
    };
    expect(record.pid).toBe(Number(h.id));
    expect(record.startTime).toBe(processStartTime(record.pid));

    // A second daemon (the first died) knows nothing but the run's folder.
    const restarted = createProcessEngine(testConfig(root.dir), silentLogger(), {
      env: { PATH: process.env.PATH },
    });
    const found = await restarted.find('run-restart', stateDir);
    expect(found).toMatchObject({
      handle: { engine: 'process', id: h.id, runId: 'run-restart' },
      running: true,
      started: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    await restarted.attach(
      found!.handle,
      (c) => out.push(c),
      (c) => err.push(c),
    );
    const waited = restarted.wait(found!.handle, 10_000);
    await writeFile(go, '');
    const exit = await waited;
    expect(exit).toMatchObject({ exitCode: 7, signal: null });
    expect(Buffer.concat(out).toString()).toBe('before\nafter\n');
    expect(Buffer.concat(err).toString()).toBe('oops\n');
    await restarted.remove(found!.handle);
    await expect(stat(path.join(stateDir, PID_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('after a restart takes no pid file that names pid 1, the daemon, its parent, or leaves out the start time', async () => {
    const stateDir = path.join(root.dir, 'incidents', 'ws-forged', '.triage', 'runs', 'run-forged');
    await mkdir(stateDir, { recursive: true });
    const restarted = createProcessEngine(testConfig(root.dir), silentLogger(), {
      env: { PATH: process.env.PATH },
    });
    const record = {
      pid: process.pid,
      startTime: processStartTime(process.pid),
      runId: 'run-forged',
      command: 'sh',
      labels: { [RUN_LABELS.run]: 'run-forged' },
      startedAt: new Date().toISOString(),
    };
    // Each would be signalled as a process group (kill(-pid)) when the run is stopped.
    for (const forged of [
      { ...record, pid: 1, startTime: processStartTime(1) },
      record,
      { ...record, pid: process.ppid, startTime: processStartTime(process.ppid) },
      { ...record, startTime: null },
      { ...record, labels: ['x'] },
      null,
    ]) {
      await writeFile(path.join(stateDir, PID_FILE), JSON.stringify(forged));
      expect(await restarted.find('run-forged', stateDir), JSON.stringify(forged)).toBeUndefined();
    }
    await restarted.close();
  });

  it('does not mistake a recycled pid for the run (start time differs)', async () => {
    const stateDir = path.join(root.dir, 'incidents', 'ws-2', '.triage', 'runs', 'run-recycled');
    await mkdir(stateDir, { recursive: true });
    // A live process that is not the run: its pid with another start time.
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await writeFile(
        path.join(stateDir, PID_FILE),
        JSON.stringify({
          pid: other.pid,
          startTime: '1',
          runId: 'run-recycled',
          command: 'x',
          labels: { [RUN_LABELS.run]: 'run-recycled' },
          startedAt: '',
        }),
      );
      const found = await engine.find('run-recycled', stateDir);
      expect(found).toBeDefined();
      expect(found?.running).toBe(false);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('kills a setsid descendant that left the process group when the run is removed', async () => {
    const pidFile = path.join(root.dir, 'escaped.pid');
    const h = await start(
      spec({ command: 'sh', args: ['-c', `setsid sleep 300 & echo $! > ${pidFile}; sleep 0.2`] }),
    );
    await engine.wait(h, 10_000);
    await until(
      'escaped pid written',
      10_000,
      async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim() !== '',
    );
    const escaped = Number((await readFile(pidFile, 'utf8')).trim());
    expect(alive(escaped)).toBe(true);
    await engine.remove(h);
    await until(`setsid descendant ${escaped} gone`, 10_000, () => !alive(escaped));
  });
});
