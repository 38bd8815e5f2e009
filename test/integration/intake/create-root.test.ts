// `triage-runner daemon --create-root` run outside the checkout, with a configuration that does not name
// workspaces_root: the default ./incidents is made and watched in the working directory, never inside
// the package (where the shipped configs/ and agent-home/ are).
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCliDaemon, type CliDaemon } from '../../support/cli-daemon.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

let dir: { dir: string; cleanup: () => Promise<void> };
let daemon: CliDaemon | undefined;
beforeEach(async () => {
  dir = await tempDir('triage-create-root-');
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await dir.cleanup();
});

describe('daemon --create-root outside the checkout', () => {
  it('creates and watches ./incidents in the working directory, not the package', async () => {
    const cwd = path.join(dir.dir, 'srv');
    await mkdir(cwd);
    const packageRoot = path.join(REPO_ROOT, 'incidents');
    const packageRootBefore = existsSync(packageRoot);
    daemon = await startCliDaemon({
      dir: dir.dir,
      cwd,
      config: { engine: 'process' },
      args: ['--create-root'],
      env: { PATH: process.env.PATH ?? '', HOME: dir.dir },
    });
    const ready = daemon
      .logs()
      .split('\n')
      .find((line) => line.includes('"daemon ready"'));
    expect(ready, daemon.tail()).toBeDefined();
    expect((JSON.parse(ready ?? '{}') as { root?: string }).root).toBe(path.join(cwd, 'incidents'));
    expect(existsSync(path.join(cwd, 'incidents'))).toBe(true);
    expect(existsSync(packageRoot)).toBe(packageRootBefore);
  });
});
