// The daemon ends by closing everything it opened, not by a forced exit: the real command as a child
// process exits 0 on SIGTERM with an HTTP client still connected, and the same command run in this
// process leaves no handle behind (timers, sockets, watchers, child processes) once it returns.
import { EventEmitter } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import {
  dropIncident,
  startCliDaemon,
  until,
  waitForFinalRun,
  type CliDaemon,
} from '../../support/cli-daemon.js';
import { incidentJson } from '../../support/incidents.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';
import { eventually } from '../../support/wait.js';

const AGENT = path.join(REPO_ROOT, 'test/fixtures/agents/claude-like-agent.sh');

/** A port nothing listens on right now (the daemon's HTTP server takes it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** GET's status code; over a keep-alive `agent` the socket stays open after the answer. */
function get(url: string, agent: Agent | false = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A webhook sink that answers 200 to every delivery and counts them. */
async function webhookSink(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => count,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Handle kinds by count (`process.getActiveResourcesInfo()` lists one entry per handle). */
function handleCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** Handles in `after` beyond those in `before`, as "kind ×n". */
function leftover(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...after]
    .filter(([kind, n]) => n > (before.get(kind) ?? 0))
    .map(([kind, n]) => `${kind} ×${n - (before.get(kind) ?? 0)}`);
}

let dir: { dir: string; cleanup: () => Promise<void> };
let daemon: CliDaemon | undefined;
beforeEach(async () => {
  dir = await tempDir('triage-daemon-exit-');
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await dir.cleanup();
});

const baseConfig = (root: string, port: number) => ({
  workspaces_root: root,
  engine: 'process',
  agent: { command: AGENT, min_report_bytes: 10, report_sections: ['Summary'] },
  http: { port, host: '127.0.0.1' },
});

describe('daemon exit', () => {
  it('exits 0 by itself on SIGTERM after a finished run, with an HTTP keep-alive connection still open', async () => {
    const root = path.join(dir.dir, 'incidents');
    const port = await freePort();
    daemon = await startCliDaemon({
      dir: dir.dir,
      config: baseConfig(root, port),
      args: [],
      env: { PATH: process.env.PATH ?? '', HOME: dir.dir },
    });
    const child = daemon.child;
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (code, signal) => resolve([code, signal])),
    );
    const ws = path.join(root, 'a');
    await dropIncident(ws, incidentJson({ incidentId: 'exit-a' }));
    const done = await waitForFinalRun(ws, 30_000, daemon.tail);
    expect(done.state.state, daemon.tail()).toBe('succeeded');
    const agent = new Agent({ keepAlive: true });
    expect(await get(`http://127.0.0.1:${port}/healthz`, agent)).toBe(200);

    child.kill('SIGTERM');
    const result = await Promise.race([
      exited,
      new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000).unref()),
    ]);
    agent.destroy();
    expect(result, daemon.tail()).toEqual([0, null]);
    expect(daemon.logs()).toMatch(/daemon stopped/);
    // One drop, one run: "agent launched" once, and no change reported for an unchanged file.
    expect(daemon.logs().match(/"msg":"agent launched"/g), daemon.tail()).toHaveLength(1);
    expect(daemon.logs()).not.toContain('changed during its run');
  });

  it('leaves no timer, socket, watcher or child process behind once the daemon command returns', async () => {
    const root = path.join(dir.dir, 'incidents');
    await mkdir(root);
    // The logger writes to stdout and stderr: their handles open on first use, before the baseline.
    void [process.stdout.writable, process.stderr.writable];
    const before = handleCounts();
    const port = await freePort();
    const sink = await webhookSink();
    const configFile = path.join(dir.dir, 'triage-runner.yaml');
    await writeFile(
      configFile,
      stringify({
        ...baseConfig(root, port),
        skills: { sources: [], cache_dir: path.join(dir.dir, 'skills'), disable_triage_preload: true },
        log: { level: 'error' },
        secrets: { WEBHOOK_SECRET: { env: 'WEBHOOK_SECRET' } },
        notify: { sinks: [{ name: 'hook', type: 'webhook', url: sink.url, secret: 'WEBHOOK_SECRET' }] },
      }),
    );
    // SIGTERM arrives through this emitter: the test process's own signal handlers stay out of it.
    const signals = Object.assign(new EventEmitter(), { exit: () => undefined });
    let out = '';
    const io: CliIO = {
      stdout: (t) => void (out += t),
      stderr: (t) => void (out += t),
      env: { PATH: process.env.PATH ?? '', HOME: dir.dir, WEBHOOK_SECRET: 'test-secret' },
      cwd: dir.dir,
      signals: signals as unknown as NodeJS.Process,
    };
    const code = runCli(['--config', configFile, 'daemon'], io);
    await until('the HTTP server', 20_000, async () =>
      (await get(`http://127.0.0.1:${port}/healthz`).catch(() => 0)) === 200 ? true : undefined,
    );
    const ws = path.join(root, 'b');
    await dropIncident(ws, incidentJson({ incidentId: 'exit-b' }));
    const done = await waitForFinalRun(ws, 30_000, () => out);
    expect(done.state.state, out).toBe('succeeded');
    await until('the webhook delivery', 20_000, async () => (sink.count() > 0 ? true : undefined));

    signals.emit('SIGTERM', 'SIGTERM');
    expect(await code, out).toBe(0);
    await sink.close();
    // Closed sockets and killed processes drop off the handle list within a turn or two of the loop.
    await eventually(
      'the handles to be released',
      () => leftover(before, handleCounts()).length === 0,
      5_000,
    ).catch(() => undefined);
    expect(leftover(before, handleCounts()), out).toEqual([]);
  });
});
