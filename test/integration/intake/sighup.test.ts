// `kill -HUP` on the real daemon command (a child process with a config file): a file with problems is
// refused, each problem logged, and the daemon goes on as it was; a valid file restarts it in the same
// process with the new configuration (here: another HTTP port). Before, SIGHUP ended the daemon with
// no log line at all.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startCliDaemon, until, type CliDaemon } from '../../support/cli-daemon.js';
import { freePort } from '../../support/net.js';
import { tempDir } from '../../support/runs.js';

let dir: { dir: string; cleanup: () => Promise<void> };
let daemon: CliDaemon | undefined;
beforeEach(async () => {
  dir = await tempDir('triage-sighup-');
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await dir.cleanup();
});

const health = (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`).then(
    (r) => r.status,
    () => 0,
  );

describe('SIGHUP on the daemon', () => {
  it('refuses a configuration with problems, naming them, and goes on; restarts with a valid one', async () => {
    const configFile = path.join(dir.dir, 'triage-runner.yaml');
    const [first, second] = [await freePort(), await freePort()];
    const config = (port: number, extra: Record<string, unknown> = {}) => ({
      skills: { sources: [], cache_dir: path.join(dir.dir, 'skills'), disable_triage_preload: true },
      log: { level: 'info' },
      workspaces_root: path.join(dir.dir, 'incidents'),
      engine: 'process',
      http: { host: '127.0.0.1', port },
      ...extra,
    });
    daemon = await startCliDaemon({
      dir: dir.dir,
      config: config(first),
      args: [],
      env: { PATH: process.env.PATH ?? '', HOME: dir.dir },
    });
    const d = daemon;
    expect(await health(first)).toBe(200);

    await writeFile(configFile, stringify(config(second, { scheduling: { max_concurrent: 'many' } })));
    d.child.kill('SIGHUP');
    await until('the reload refused', 20_000, async () =>
      d.logs().includes('configuration reload refused') ? true : undefined,
    );
    expect(d.logs()).toContain('scheduling.max_concurrent');
    expect(d.child.exitCode).toBeNull();
    expect(await health(first)).toBe(200);
    expect(await health(second)).toBe(0);

    await writeFile(configFile, stringify(config(second)));
    d.child.kill('SIGHUP');
    await until('the daemon on its new port', 30_000, async () =>
      (await health(second)) === 200 ? true : undefined,
    );
    expect(d.logs()).toContain('configuration valid: restarting the daemon with it');
    expect(await health(first)).toBe(0);
    expect(d.child.exitCode).toBeNull();

    const exited = new Promise<number | null>((r) => d.child.once('exit', (code) => r(code)));
    d.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
