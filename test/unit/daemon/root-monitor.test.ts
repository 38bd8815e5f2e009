import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rootWriteProblem } from '../../../src/daemon/lifecycle.js';
import { RootMonitor } from '../../../src/daemon/root-monitor.js';
import { silentLogger } from '../../../src/log/logger.js';
import { tempDir } from '../../support/runs.js';

// The root monitor's periodic check on fake interval timers: a check runs only when the clock says so,
// and the real stat(2) it makes is let through by turning the event loop, never by waiting on time.

let dir: { dir: string; cleanup: () => Promise<void> };
let root: string;
let monitor: RootMonitor | undefined;
let rescans: number;

/** Turns the event loop (real setImmediate, not faked) until `check` holds: real file I/O completes. */
async function settled(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setImmediate(r));
  if (!check()) throw new Error(`never happened: ${what}`);
}

beforeEach(async () => {
  dir = await tempDir('triage-root-monitor-');
  root = path.join(dir.dir, 'incidents');
  await mkdir(root);
  rescans = 0;
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});
afterEach(async () => {
  await monitor?.close();
  monitor = undefined;
  vi.useRealTimers();
  await dir.cleanup();
});

function open(checkMs: number): Promise<void> {
  monitor = new RootMonitor({
    root,
    log: silentLogger(),
    checkMs,
    onFolder: () => undefined,
    onRescanNeeded: () => void rescans++,
    skipFolder: () => false,
  });
  return monitor.open();
}

describe('workspaces root monitor', () => {
  it('notices a removed root at its next check, not before, and asks for a rescan at every check while it is down', async () => {
    await open(60_000);
    await rm(root, { recursive: true });
    await vi.advanceTimersByTimeAsync(999);
    expect(monitor!.down).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await settled('the check to find the root gone', () => monitor!.down !== undefined);
    expect(monitor!.down).toMatch(/cannot stat it: ENOENT/);
    expect(rescans).toBe(0);
    await vi.advanceTimersByTimeAsync(3000);
    expect(rescans).toBe(3);
  });

  it('checks as often as the rescan interval when that is shorter than a second', async () => {
    await open(300);
    await rm(root, { recursive: true });
    await vi.advanceTimersByTimeAsync(300);
    await settled('the check to find the root gone', () => monitor!.down !== undefined);
    await vi.advanceTimersByTimeAsync(900);
    expect(rescans).toBe(3);
  });

  it('once a scan lists the root again, asks for one rescan and no more while it stays', async () => {
    await open(1000);
    await rm(root, { recursive: true });
    await vi.advanceTimersByTimeAsync(1000);
    await settled('the check to find the root gone', () => monitor!.down !== undefined);
    await mkdir(root);
    monitor!.listed(true);
    expect(monitor!.down).toBeUndefined();
    await settled('the rescan after the root is back', () => rescans === 1);
    await vi.advanceTimersByTimeAsync(5000);
    // Let each of those five checks' stat(2) finish: none finds anything wrong.
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    expect({ rescans, down: monitor!.down }).toEqual({ rescans: 1, down: undefined });
  });

  it('stops checking once closed', async () => {
    await open(1000);
    await rm(root, { recursive: true });
    await monitor!.close();
    await vi.advanceTimersByTimeAsync(5000);
    expect({ rescans, down: monitor!.down }).toEqual({ rescans: 0, down: undefined });
  });
});

describe('the readiness write probe of the root', () => {
  it('never makes a removed root again: it says why it cannot write, and the root stays gone', async () => {
    expect(await rootWriteProblem(root)).toBeUndefined();
    await rm(root, { recursive: true, force: true });
    expect(await rootWriteProblem(root)).toContain(`cannot write in ${path.join(root, '.triage')} (ENOENT)`);
    await expect(stat(root)).rejects.toMatchObject({ code: 'ENOENT' });
    // A root that is there gets its .triage folder as before.
    await mkdir(root);
    expect(await rootWriteProblem(root)).toBeUndefined();
    expect((await stat(path.join(root, '.triage'))).isDirectory()).toBe(true);
  });
});
