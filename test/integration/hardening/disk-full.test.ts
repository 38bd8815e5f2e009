// Issue 13 #6: a full disk (a real tmpfs of a few MiB filled to ENOSPC under the workspaces root) delays
// writes instead of losing them: /readyz answers 503 naming the disk while it is full and 200 once space
// returns, the runs in flight go on, an incident dropped meanwhile runs, none runs twice and none is
// labelled gone after a daemon restart. Mounting needs root: the test fails (never skips) without it.
import { execFileSync } from 'node:child_process';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readState } from '../../../src/workspace/state.js';
import type { CliDaemon } from '../../support/cli-daemon.js';
import { dropByRename, incidentJson, tempRoot, waitFor, waitForState } from '../../support/incidents.js';
import { afterScans, auditEvents, httpPort, markers, startProcessDaemon } from './support.js';

let dir: string;
let mnt: string;
let cleanup: () => Promise<void>;
let daemon: CliDaemon | undefined;
beforeEach(async () => {
  ({ root: dir, cleanup } = await tempRoot('triage-disk-full-'));
  mnt = path.join(dir, 'mnt');
  await mkdir(mnt);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(
      `this test mounts a 16 MiB tmpfs to fill it and needs root (mount -t tmpfs): ${String(err)}`,
    );
  }
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  execFileSync('umount', ['-l', mnt]);
  await cleanup();
});

/** Writes zeros into `file` until the volume is full. */
function fill(file: string): void {
  for (const bs of ['1M', '4k', '512']) {
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${file}.${bs}`, `bs=${bs}`], { stdio: 'pipe' });
    } catch {
      // ENOSPC: full at this block size
    }
  }
}

async function readyz(d: CliDaemon): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${httpPort(d)}/readyz`);
  return { status: res.status, body: await res.text() };
}

describe('a full disk under the workspaces root', () => {
  it('is reported by /readyz, delays writes, and loses or repeats no run once space returns', async () => {
    const root = path.join(mnt, 'incidents');
    const dirs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const ws = await dropByRename(root, `inflight${i}`, incidentJson({ incidentId: `inflight${i}` }));
      await writeFile(path.join(ws, 'delay'), '0.2');
      await writeFile(path.join(ws, 'hold'), '');
      dirs.push(ws);
    }
    daemon = await startProcessDaemon(dir, root);
    const d = daemon;
    await waitFor(
      'the in-flight agents to start',
      async () => (await Promise.all(dirs.map((w) => markers(w, 'agent-starts.log')))).every((n) => n === 1),
      60_000,
    );
    expect((await readyz(d)).status, 'ready before the disk fills').toBe(200);
    // The late incident is written before the disk fills and renamed into place while it is full.
    const late = path.join(root, 'late');
    await mkdir(late);
    await writeFile(path.join(late, 'delay'), '0.2');
    await writeFile(
      path.join(late, 'incident.json.tmp'),
      JSON.stringify(incidentJson({ incidentId: 'late' })),
    );
    fill(path.join(mnt, 'filler'));
    await rename(path.join(late, 'incident.json.tmp'), path.join(late, 'incident.json'));
    dirs.push(late);
    const full = await waitFor(
      '/readyz to report the full disk',
      async () => {
        const r = await readyz(d);
        return r.status === 503 ? r : undefined;
      },
      30_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}. ${d.tail()}`);
    });
    expect(full.body).toMatch(/"name":"disk","ok":false/);
    expect(full.body).toMatch(/free space/);
    // reason: time passing is the condition: the disk stays full for longer than the lease TTL (2 s).
    await new Promise((r) => setTimeout(r, 3000));
    for (const bs of ['1M', '4k', '512']) await rm(path.join(mnt, `filler.${bs}`), { force: true });
    for (const w of dirs.slice(0, 2)) await rm(path.join(w, 'hold'));
    for (const w of dirs)
      await waitForState(w, ['succeeded', 'failed'], 60_000).catch((err: Error) => {
        throw new Error(`${err.message}. ${d.tail()}`);
      });
    await waitFor(
      '/readyz 200 again',
      async () => ((await readyz(d)).status === 200 ? true : undefined),
      30_000,
    );
    await afterScans(d, 3); // rescans: a second run would start now
    for (const w of dirs) {
      const s = await readState(w);
      expect({ state: s?.state, runs: s?.runs.map((r) => r.status) }, `${w}: ${d.tail()}`).toEqual({
        state: 'succeeded',
        runs: ['succeeded'],
      });
      expect(await markers(w, 'agent-starts.log'), `${w} agent starts`).toBe(1);
      const events = await auditEvents(w);
      expect(JSON.stringify(events)).not.toMatch(/gone from the engine after a daemon restart/);
      expect(events.filter((e) => e.type === 'requeued')).toEqual([]);
    }
  }, 240_000);
});
