// The real `triage-runner daemon --engine process` command, end to end: a fake agent CLI given as
// agent.command, an incident dropped by rename, then SIGTERM mid-run: exit 0 and the run `interrupted`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { dropByRename, incidentJson, tempRoot, waitFor, waitForState } from '../../support/incidents.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const AGENT = path.join(REPO, 'test/fixtures/agents/claude-like-agent.sh');

let root: string;
let cleanup: () => Promise<void>;
let child: ChildProcess | undefined;
beforeEach(async () => ({ root, cleanup } = await tempRoot('triage-cli-daemon-')));
afterEach(async () => {
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  await cleanup();
});

describe('triage-runner daemon (CLI, process engine)', () => {
  it('runs a dropped incident with agent.command, then on SIGTERM interrupts the run in flight and exits 0', async () => {
    const incidents = path.join(root, 'incidents');
    await mkdir(incidents);
    const config = path.join(root, 'triage-runner.yaml');
    await writeFile(
      config,
      stringify({
        workspaces_root: incidents,
        agent: {
          command: AGENT,
          min_report_bytes: 10,
          report_sections: ['Summary'],
          stop_grace: '300ms',
        },
        skills: { sources: [], cache_dir: path.join(root, 'skills'), disable_triage_preload: true },
        scheduling: { shutdown_timeout: '300ms' },
        http: { port: 0 },
        log: { level: 'info' },
      }),
    );
    let output = '';
    child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO, 'src/cli/main.ts'),
        'daemon',
        '--config',
        config,
        '--engine',
        'process',
      ],
      { cwd: REPO, env: { PATH: process.env.PATH ?? '', HOME: root }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child?.once('exit', (code, signal) => resolve([code, signal])),
    );
    const tail = () => output.slice(-3000);
    await waitFor(
      `the daemon to be ready; output: ${tail()}`,
      () => output.includes('daemon ready') || undefined,
      20_000,
    );

    const quick = await dropByRename(incidents, 'quick', incidentJson({ incidentId: 'quick' }));
    const done = await waitForState(quick, ['succeeded', 'failed'], 20_000);
    expect(done.state, tail()).toBe('succeeded');
    const bundle = path.join(quick, '.triage', 'runs', done.runs[0]!.id);
    expect(JSON.parse(await readFile(path.join(bundle, 'result.json'), 'utf8'))).toMatchObject({
      status: 'succeeded',
      exitCode: 0,
      engine: 'process',
    });

    const slowDir = path.join(incidents, 'slow');
    await mkdir(slowDir, { recursive: true });
    await writeFile(path.join(slowDir, 'slow'), '');
    await dropByRename(incidents, 'slow', incidentJson({ incidentId: 'slow' }));
    await waitFor(
      'the slow agent to start',
      async () =>
        (await readFile(path.join(slowDir, 'agent-starts.log'), 'utf8').catch(() => '')).includes('start') ||
        undefined,
    );
    child.kill('SIGTERM');
    const [code, signal] = await Promise.race([
      exited,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`daemon did not exit within 15000 ms of SIGTERM; output: ${tail()}`)),
          15_000,
        ),
      ),
    ]);
    expect({ code, signal }, tail()).toEqual({ code: 0, signal: null });
    const slow = await waitForState(slowDir, ['interrupted'], 1000);
    expect(slow.runs).toEqual([{ id: expect.any(String), status: 'interrupted' }]);
    expect(output).toMatch(/daemon stopped/);
    // The agent was stopped with the daemon, not left behind.
    const starts = (await readFile(path.join(slowDir, 'agent-starts.log'), 'utf8')).trim().split('\n');
    expect(starts).toHaveLength(1);
    const agentPid = Number(starts[0]!.split(' ')[1]);
    expect(() => process.kill(agentPid, 0)).toThrow(/ESRCH/);
  });
});
