// A producer or agent that plants a symbolic link where the daemon writes (`.triage`, `.triage/runs`,
// a run's bundle folder, `output`) must not redirect a single write: the real daemon, run pipeline and
// process engine, with an agent script that swaps folders for links while it runs.
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import type { Config } from '../../../src/config/schema.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { unsafeStateDir, unsafeStatePath } from '../../../src/workspace/layout.js';
import { silentLogger } from '../../../src/log/logger.js';
import { dropByRename, incidentJson, waitFor, waitForState } from '../../support/incidents.js';
import { afterScans } from '../../support/scans.js';
import { tempDir, testConfig } from '../../support/runs.js';
import { FINISH_ON_HOST, shScriptExecutor } from '../../support/sh-agent.js';

let dir: string;
let cleanup: () => Promise<void>;
let daemon: Daemon | undefined;
beforeEach(async () => ({ dir, cleanup } = await tempDir('triage-links-')));
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await cleanup();
});

function config(): Config {
  return testConfig(dir, {
    engine: 'process',
    http: { port: 0 },
    intake: { write_settle: '200ms' },
    scheduling: { rescan_interval: '300ms', lease_ttl: '5s', shutdown_timeout: '5s' },
  });
}

/** Starts the daemon whose agent runs `lines` (sh, on the host), then `finish` (a report, Claude's result line). */
async function startDaemon(cfg: Config, lines: string[] = [], finish = FINISH_ON_HOST): Promise<Daemon> {
  const executor = shScriptExecutor(
    cfg,
    [...lines, ...finish].join('\n'),
    createProcessEngine(cfg, silentLogger()),
    { PATH: process.env.PATH },
  );
  daemon = new Daemon({
    config: cfg,
    log: silentLogger(),
    executor,
    audit: new AuditLog(),
    random: () => 0.5,
  });
  await daemon.start();
  return daemon;
}

/** Every path under `folder`, relative to it (links not followed). */
async function tree(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true });
  return entries.map(String).sort();
}

async function unsafeState(root: string, folder: string): Promise<{ state: string; reason: string }> {
  return waitFor(`the unsafe state of ${folder}`, async () => {
    const name = (await readdir(unsafeStateDir(root)).catch(() => [])).find(
      (f) => f.startsWith(`${folder}-`) && f.endsWith('.state.json'),
    );
    if (!name) return undefined;
    return JSON.parse(await readFile(path.join(unsafeStateDir(root), name), 'utf8')) as {
      state: string;
      reason: string;
    };
  });
}

describe('symbolic links where the daemon writes in a workspace', () => {
  for (const own of ['.triage', 'output']) {
    it(`rejects a workspace whose ${own} is a link, writes nothing into its target and keeps the state under the root`, async () => {
      const cfg = config();
      const root = cfg.workspaces_root;
      const elsewhere = path.join(dir, 'elsewhere');
      await mkdir(path.join(root, 'x'), { recursive: true });
      await mkdir(elsewhere);
      await symlink(elsewhere, path.join(root, 'x', own));
      await startDaemon(cfg);
      await dropByRename(root, 'x', incidentJson({ incidentId: 'planted-link' }));
      expect(await unsafeState(root, 'x')).toMatchObject({
        state: 'rejected',
        reason: expect.stringContaining(
          `${path.join(root, 'x', own)} is a symbolic link; the daemon never writes through links`,
        ),
      });
      // A few rescans later: still nothing in the target, and nothing in the folder's own state.
      await afterScans(daemon!, 3);
      expect(await tree(elsewhere)).toEqual([]);
    });
  }

  it('records the rejection over a damaged state file it kept for the folder before', async () => {
    const cfg = config();
    const root = cfg.workspaces_root;
    const elsewhere = path.join(dir, 'elsewhere');
    await mkdir(path.join(root, 'x'), { recursive: true });
    await mkdir(elsewhere);
    await symlink(elsewhere, path.join(root, 'x', '.triage'));
    await mkdir(unsafeStateDir(root), { recursive: true });
    await writeFile(unsafeStatePath(root, 'x'), '{"state": "rejec');
    await startDaemon(cfg);
    await dropByRename(root, 'x', incidentJson({ incidentId: 'planted-link' }));
    expect(await unsafeState(root, 'x')).toMatchObject({
      state: 'rejected',
      reason: expect.stringContaining('is a symbolic link'),
    });
  });

  // The agent (on the host, as the daemon's user) swaps a folder the daemon writes into for a link, once
  // the daemon's launch-time writes are done; what the daemon writes afterwards (logs, result.json,
  // the scrubbed report, the `finished` event) must not go through it.
  const TOKEN = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  const midRun: { what: string; swap: (to: string) => string[]; leftByAgent: string[] }[] = [
    {
      what: '.triage/runs',
      swap: (to) => [
        'sleep 0.5',
        'ws=$(dirname "$TRIAGE_OUTPUT_DIR")',
        'mv "$ws/.triage/runs" "$ws/.triage/runs-moved"',
        `ln -s ${to} "$ws/.triage/runs"`,
      ],
      leftByAgent: [],
    },
    {
      what: 'the run bundle folder',
      swap: (to) => [
        'sleep 0.5',
        'mv "$TRIAGE_RUN_DIR" "$TRIAGE_RUN_DIR-moved"',
        `ln -s ${to} "$TRIAGE_RUN_DIR"`,
      ],
      // The process engine's exit-code file, written by the agent's own wrapper shell (same user).
      leftByAgent: ['agent.exit'],
    },
    {
      what: 'output',
      swap: (to) => [
        'sleep 0.5',
        'mv "$TRIAGE_OUTPUT_DIR" "$TRIAGE_OUTPUT_DIR-moved"',
        `ln -s ${to} "$TRIAGE_OUTPUT_DIR"`,
      ],
      // The agent writes its report through the link itself; the daemon must neither scrub it in place
      // (a write) nor read it as the report.
      leftByAgent: ['investigation.md'],
    },
  ];
  const linkOf: Record<string, (ws: string, runId: string) => string> = {
    '.triage/runs': (ws) => path.join(ws, '.triage', 'runs'),
    'the run bundle folder': (ws, runId) => path.join(ws, '.triage', 'runs', runId),
    output: (ws) => path.join(ws, 'output'),
  };
  for (const { what, swap, leftByAgent } of midRun) {
    it(`writes nothing through ${what} replaced by a link during the run, which fails naming the link`, async () => {
      const cfg = config();
      const elsewhere = path.join(dir, 'elsewhere');
      await mkdir(elsewhere);
      const [report = '', ...rest] = FINISH_ON_HOST;
      await startDaemon(cfg, swap(elsewhere), [
        report,
        `echo "token ${TOKEN}" >> "$TRIAGE_OUTPUT_DIR/investigation.md"`,
        ...rest,
      ]);
      const ws = await dropByRename(cfg.workspaces_root, 'mid', incidentJson({ incidentId: 'mid-run-link' }));
      const state = await waitForState(ws, ['succeeded', 'failed', 'rejected', 'interrupted'], 30_000);
      const link = linkOf[what]?.(ws, state.runs[0]?.id ?? '') ?? '';
      expect(state).toMatchObject({
        state: 'failed',
        reason: expect.stringContaining(`${link} is a symbolic link; the daemon never writes through links`),
      });
      expect((await tree(elsewhere)).filter((f) => !leftByAgent.includes(f))).toEqual([]);
      if (what === 'output')
        expect(await readFile(path.join(elsewhere, 'investigation.md'), 'utf8')).toContain(TOKEN);
    });
  }
});
