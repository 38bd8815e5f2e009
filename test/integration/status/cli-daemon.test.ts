// `triage-runner daemon` as a real process (process engine, a fake agent CLI), with `status` and
// `retry` asking it over HTTP: the wiring of the status index, API and page as the command does it.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../../../src/cli/io.js';
import { runCli } from '../../../src/cli/program.js';
import type { StatusList } from '../../../src/status/types.js';
import { startCliDaemon, type CliDaemon } from '../../support/cli-daemon.js';
import { dropByRename, incidentJson, tempRoot, waitForState } from '../../support/incidents.js';
import { freePort } from '../../support/net.js';
import { REPO_ROOT } from '../../support/runs.js';

const AGENT = path.join(REPO_ROOT, 'test/fixtures/agents/claude-like-fails-once.sh');
const TOKEN = 'cli-daemon-token-5b2e';

let root: string;
let cleanup: () => Promise<void>;
let daemon: CliDaemon | undefined;

beforeEach(async () => ({ root, cleanup } = await tempRoot('triage-status-cli-daemon-')));
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await cleanup();
});

function io() {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIO = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: { STATUS_TOKEN: TOKEN },
    cwd: root,
  };
  return { cli, out: () => out.join(''), err: () => err.join('') };
}

describe('triage-runner daemon with status and retry', () => {
  it('lists its incidents through the API, retries a failed one in place, and serves the page behind the token', async () => {
    const incidents = path.join(root, 'incidents');
    const port = await freePort();
    daemon = await startCliDaemon({
      dir: root,
      config: {
        workspaces_root: incidents,
        agent: { command: AGENT, min_report_bytes: 10, report_sections: ['Summary'] },
        http: { port, host: '127.0.0.1' },
        secrets: { HTTP_TOKEN: { env: 'STATUS_TOKEN' } },
      },
      args: ['--engine', 'process'],
      env: { PATH: process.env.PATH ?? '', HOME: root, STATUS_TOKEN: TOKEN },
    });
    const config = path.join(root, 'triage-runner.yaml');
    const ok = await dropByRename(incidents, 'ok', incidentJson({ incidentId: 'inc-ok' }));
    expect((await waitForState(ok, ['succeeded', 'failed'], 30_000)).state, daemon.tail()).toBe('succeeded');
    const flakyDir = path.join(incidents, 'flaky');
    await mkdir(flakyDir, { recursive: true });
    await writeFile(path.join(flakyDir, 'fail-once'), '');
    const flaky = await dropByRename(incidents, 'flaky', incidentJson({ incidentId: 'inc-flaky' }));
    expect((await waitForState(flaky, ['succeeded', 'failed'], 30_000)).state, daemon.tail()).toBe('failed');

    const status = io();
    expect(await runCli(['status', '--config', config, '--json'], status.cli)).toBe(0);
    expect(status.err()).toBe('');
    const list = JSON.parse(status.out()) as StatusList;
    expect(list.totals).toMatchObject({ succeeded: 1, failed: 1 });
    expect(list.incidents.find((v) => v.folder === 'ok')).toMatchObject({
      state: 'succeeded',
      agent: 'claude',
      tokens: { input: 1200, output: 300 },
      costUsd: 0.05,
      answer: 'Hypothesis: DATABASE_URL missing; confidence high; first action: restore the key',
      reportPath: path.join(ok, 'output', 'investigation.md'),
    });
    expect(list.incidents.find((v) => v.folder === 'flaky')).toMatchObject({
      state: 'failed',
      reportPath: null,
      reason: expect.stringContaining('the cluster API did not answer'),
    });

    const retry = io();
    expect(await runCli(['retry', flaky, '--config', config], retry.cli)).toBe(0);
    expect(retry.out()).toBe(
      `flaky: queued again (was failed; attempt 2 next); the daemon at http://127.0.0.1:${port} runs it now\n`,
    );
    const again = await waitForState(flaky, ['succeeded', 'failed'], 30_000);
    expect(again.state, daemon.tail()).toBe('succeeded');
    expect(again.runs.map((r) => r.status)).toEqual(['failed', 'succeeded']);

    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/`)).status).toBe(401);
    const exchange = await fetch(`${base}/?token=${TOKEN}`, { redirect: 'manual' });
    expect(exchange.status).toBe(303);
    const cookie = (exchange.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const page = await fetch(`${base}/incidents/flaky`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('DATABASE_URL is missing');
  });
});
