// The daemon run as a user who owns nothing (`nobody`, through setpriv), as an SRE found it: on a
// workspaces root owned by root, /readyz said ready with disk ok and every intake POST then got 500; a
// skills cache owned by root made every run fail while preflight said runs go on without it. Now the
// disk check writes and removes a file in the root's .triage/, the skills check writes in the cache,
// each saying what to do, and a run goes on without the skills it cannot fetch.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, chown, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  AS_NOBODY,
  dropIncident,
  startCliDaemon,
  waitForFinalRun,
  type CliDaemon,
} from '../../support/cli-daemon.js';
import { incidentJson } from '../../support/incidents.js';
import { freePort } from '../../support/net.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

const AGENT = path.join(REPO_ROOT, 'test/fixtures/agents/claude-like-agent.sh');
const NOBODY = 65534;

let dir: { dir: string; cleanup: () => Promise<void> };
let daemon: CliDaemon | undefined;
beforeEach(async () => {
  dir = await tempDir('triage-non-root-');
  await chmod(dir.dir, 0o755);
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await dir.cleanup();
});

/** A git repository holding one skill, readable by anyone. */
async function skillRepo(): Promise<string> {
  const repo = path.join(dir.dir, 'skill-repo');
  await mkdir(path.join(repo, 'k8s'), { recursive: true });
  await writeFile(path.join(repo, 'k8s', 'SKILL.md'), '---\nname: k8s\ndescription: pods\n---\nLook.\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'skill');
  return repo;
}

/**
 * Starts the daemon as nobody on `root`, with a skills cache folder owned by root; returns its port.
 * `keyFile`: the audit key in nobody's home (else under the root, where nobody may not make it).
 */
async function startAsNobody(root: string, keyFile = true): Promise<number> {
  const home = path.join(dir.dir, 'home');
  await mkdir(home);
  await chown(home, NOBODY, NOBODY);
  const cache = path.join(dir.dir, 'skills-cache');
  await mkdir(cache, { mode: 0o755 });
  const port = await freePort();
  daemon = await startCliDaemon({
    dir: dir.dir,
    wrap: AS_NOBODY,
    config: {
      workspaces_root: root,
      engine: 'process',
      agent: { command: AGENT, min_report_bytes: 10, report_sections: ['Summary'] },
      http: { host: '127.0.0.1', port },
      skills: { sources: [{ name: 'k8s', git: await skillRepo() }], cache_dir: cache },
      ...(keyFile ? { audit: { key_file: path.join(home, 'audit.key') } } : {}),
    },
    args: [],
    env: { PATH: process.env.PATH ?? '', HOME: home },
  });
  return port;
}

interface ReadyBody {
  ok: boolean;
  checks: { name: string; ok: boolean; degraded?: boolean; detail?: string }[];
}

describe('a daemon that cannot write where it should', () => {
  it('is not ready on a workspaces root it cannot write, saying so; the skills check names the cache', async () => {
    const root = path.join(dir.dir, 'incidents');
    await mkdir(path.join(root, '.triage'), { recursive: true, mode: 0o755 });
    const port = await startAsNobody(root);
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    const body = (await res.json()) as ReadyBody;
    expect(res.status, JSON.stringify(body)).toBe(503);
    const disk = body.checks.find((c) => c.name === 'disk');
    expect(disk?.ok).toBe(false);
    expect(disk?.detail).toContain(`cannot write in ${path.join(root, '.triage')} (EACCES)`);
    expect(disk?.detail).toContain("let the daemon's user (uid 65534) write the workspaces root");
    const skills = body.checks.find((c) => c.name === 'skills');
    expect(skills).toMatchObject({ ok: true, degraded: true });
    expect(skills?.detail).toContain(
      `skills.cache_dir ${path.join(dir.dir, 'skills-cache')} cannot be written (EACCES)`,
    );
  });

  it('does not start when it cannot make the audit key in the root, saying why without a stack trace', async () => {
    const root = path.join(dir.dir, 'incidents');
    await mkdir(path.join(root, '.triage'), { recursive: true, mode: 0o755 });
    const config = path.join(dir.dir, 'key.yaml');
    await writeFile(config, stringify({ workspaces_root: root, engine: 'process', http: { port: 0 } }));
    const [command = 'setpriv', ...args] = [
      ...AS_NOBODY,
      process.execPath,
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'src/cli/main.ts'),
      'daemon',
      '--config',
      config,
    ];
    const ran = spawnSync(command, args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(ran.status, ran.stderr).not.toBe(0);
    expect(ran.stderr).toContain(
      `the audit key file ${path.join(root, '.triage', 'audit.key')} cannot be made (EACCES): let the daemon's user write`,
    );
    expect(ran.stderr).not.toContain('at openSync');
  });

  it('runs an incident without the skills of a cache it cannot write', async () => {
    const root = path.join(dir.dir, 'incidents');
    await mkdir(root);
    await chown(root, NOBODY, NOBODY);
    const ws = path.join(root, 'web-crash');
    await dropIncident(ws, incidentJson({ incidentId: 'non-root-run' }));
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, ws]);
    await startAsNobody(root);
    const done = await waitForFinalRun(ws, 60_000, () => daemon?.tail() ?? '');
    expect(done.state.state, daemon?.tail()).toBe('succeeded');
  });
});
