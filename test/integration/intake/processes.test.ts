import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyAuditLog } from '../../../src/audit/log.js';
import { readState } from '../../../src/workspace/state.js';
import { killGroup, spawnDaemon, type DaemonProcess } from '../../support/daemon-process.js';
import { dropByRename, incidentJson, tempRoot, waitFor, waitForState } from '../../support/incidents.js';
import { freePort } from '../../support/net.js';
import { afterScans } from '../../support/scans.js';

// Real daemon processes on one workspaces root, with a real fake agent per run.

let root: string;
let cleanup: () => Promise<void>;
let procs: DaemonProcess[] = [];
beforeEach(async () => ({ root, cleanup } = await tempRoot('triage-procs-')));
afterEach(async () => {
  for (const p of procs) killGroup(p.pid);
  procs = [];
  await cleanup();
});

const daemonEnv = (extra: Record<string, string> = {}) => ({
  DAEMON_ROOT: root,
  DAEMON_LEASE_TTL: '2s',
  DAEMON_RESCAN: '300ms',
  DAEMON_MAX_CONCURRENT: '3',
  ...extra,
});

interface Execution {
  run: string;
  pid: string;
  start: bigint;
  end?: bigint;
}

async function executionsOf(dir: string): Promise<Execution[]> {
  const text = await readFile(path.join(dir, 'agent-executions.log'), 'utf8').catch(() => '');
  const byPid = new Map<string, Execution>();
  for (const line of text.split('\n').filter(Boolean)) {
    const [kind, run, pid, ns] = line.split(' ') as [string, string, string, string];
    if (kind === 'start') byPid.set(pid, { run, pid, start: BigInt(ns) });
    else if (byPid.has(pid)) byPid.get(pid)!.end = BigInt(ns);
  }
  return [...byPid.values()].sort((a, b) => (a.start < b.start ? -1 : 1));
}

/** No two executions of one incident overlap in time (an unfinished one overlaps everything after it). */
function assertNoOverlap(name: string, executions: Execution[]): void {
  for (let i = 1; i < executions.length; i++) {
    const prev = executions[i - 1]!;
    const cur = executions[i]!;
    if (prev.end === undefined || prev.end > cur.start) {
      throw new Error(`${name}: execution ${cur.run} started while ${prev.run} was still running`);
    }
  }
}

/** The hash chain verifies once the last append (line, then head file) has landed. */
async function auditIntact(dir: string): Promise<void> {
  const result = await waitFor(
    `${path.basename(dir)} audit log to verify`,
    async () => {
      const r = await verifyAuditLog(path.join(dir, '.triage'));
      return r.ok ? r : undefined;
    },
    5000,
  ).catch(() => verifyAuditLog(path.join(dir, '.triage')));
  expect(result, dir).toMatchObject({ ok: true });
}

async function assertExactlyOnce(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    const state = await readState(dir);
    expect(state?.state, dir).toBe('succeeded');
    expect(
      state?.runs.filter((r) => r.status === 'succeeded'),
      dir,
    ).toHaveLength(1);
    assertNoOverlap(path.basename(dir), await executionsOf(dir));
    await auditIntact(dir);
  }
}

/** A failed wait, with what the workspace and each daemon said about it. */
async function whatHappened(
  dir: string,
  err: unknown,
  daemons: Record<string, DaemonProcess>,
): Promise<string> {
  const name = path.basename(dir);
  const audit = await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8').catch(() => '(none)');
  const lines = [`${(err as Error).message}`, `audit of ${name}:`, ...audit.trim().split('\n').slice(-20)];
  for (const [id, d] of Object.entries(daemons)) {
    const said = d
      .stderr()
      .split('\n')
      .filter((l) => l.includes(`"${name}"`) || l.includes('"error"'));
    lines.push(`${id} about ${name}:`, ...said.slice(-30));
  }
  return lines.join('\n');
}

describe('daemon processes', () => {
  it('after a SIGKILL of the daemon mid-run, a restart adopts the live runs and every incident succeeds exactly once', async () => {
    const dirs: string[] = [];
    for (let i = 0; i < 5; i++)
      dirs.push(await dropByRename(root, `k${i}`, incidentJson({ incidentId: `k${i}` })));
    const first = await spawnDaemon(daemonEnv({ FAKE_AGENT_SLEEP_MS: '1500' }));
    procs.push(first);
    await waitFor(
      'three runs to start',
      // All three slots busy: each claim was recorded before its agent started, so no audit append is in flight.
      async () =>
        (await Promise.all(dirs.map(executionsOf))).filter((e) => e.length > 0).length >= 3 || undefined,
      15_000,
    );
    process.kill(first.pid, 'SIGKILL'); // the daemon only: its agents live on
    await first.exited;
    const second = await spawnDaemon(daemonEnv({ FAKE_AGENT_SLEEP_MS: '1500' }));
    procs.push(second);
    for (const dir of dirs) await waitForState(dir, ['succeeded'], 30_000);
    await assertExactlyOnce(dirs);
    const adopted = await Promise.all(
      dirs.map(async (d) =>
        (await readFile(path.join(d, '.triage', 'audit.jsonl'), 'utf8')).includes('"adopted"'),
      ),
    );
    expect(adopted.some(Boolean)).toBe(true);
    for (const dir of dirs) expect((await executionsOf(dir)).length, dir).toBe(1);
  });

  it('after a SIGKILL of the daemon and its agents, a restart re-queues the gone runs and runs them once more', async () => {
    const dirs: string[] = [];
    for (let i = 0; i < 4; i++)
      dirs.push(await dropByRename(root, `g${i}`, incidentJson({ incidentId: `g${i}` })));
    const first = await spawnDaemon(daemonEnv({ FAKE_AGENT_SLEEP_MS: '2000' }));
    procs.push(first);
    await waitFor(
      'three runs to start',
      // All three slots busy: each claim was recorded before its agent started, so no audit append is in flight.
      async () =>
        (await Promise.all(dirs.map(executionsOf))).filter((e) => e.length > 0).length >= 3 || undefined,
      15_000,
    );
    killGroup(first.pid);
    await first.exited;
    const second = await spawnDaemon(daemonEnv({ FAKE_AGENT_SLEEP_MS: '200' }));
    procs.push(second);
    for (const dir of dirs) await waitForState(dir, ['succeeded'], 30_000);
    // Killed agents never wrote "end": the next execution must start after the kill, so compare per run.
    for (const dir of dirs) {
      const state = await readState(dir);
      expect(state?.runs.filter((r) => r.status === 'succeeded')).toHaveLength(1);
      const finished = (await executionsOf(dir)).filter((e) => e.end !== undefined);
      expect(finished, dir).toHaveLength(1);
      await auditIntact(dir);
    }
    const requeued = await Promise.all(
      dirs.map(async (d) =>
        (await readFile(path.join(d, '.triage', 'audit.jsonl'), 'utf8')).includes('"requeued"'),
      ),
    );
    expect(requeued.some(Boolean)).toBe(true);
  });

  it('two daemons on one root never run the same incident twice', async () => {
    const dirs: string[] = [];
    for (let i = 0; i < 8; i++)
      dirs.push(await dropByRename(root, `pre${i}`, incidentJson({ incidentId: `pre${i}` })));
    const replica = async (id: string) =>
      spawnDaemon(
        daemonEnv({
          FAKE_AGENT_SLEEP_MS: '100',
          DAEMON_ID: id,
          DAEMON_LOG_LEVEL: 'debug',
          DAEMON_HTTP_PORT: String(await freePort()),
        }),
      );
    const [a, b] = await Promise.all([replica('replica-a'), replica('replica-b')]);
    procs.push(a, b);
    for (let i = 0; i < 16; i++)
      dirs.push(await dropByRename(root, `live${i}`, incidentJson({ incidentId: `live${i}` })));
    for (const dir of dirs)
      await waitForState(dir, ['succeeded'], 30_000).catch(async (err: unknown) => {
        throw new Error(await whatHappened(dir, err, { 'replica-a': a, 'replica-b': b }));
      });
    // Both replicas rescan a few times: a late second run would show up now.
    await Promise.all([afterScans(a.port, 3), afterScans(b.port, 3)]);
    await assertExactlyOnce(dirs);
    for (const dir of dirs) expect((await executionsOf(dir)).length, dir).toBe(1);
    const holders = await Promise.all(
      dirs.map(
        async (d) =>
          ((await readFile(path.join(d, '.triage', 'audit.jsonl'), 'utf8')).match(
            /"holder":"(replica-[ab])/,
          ) ?? [])[1],
      ),
    );
    expect(new Set(holders).size).toBe(2);
  });
});
