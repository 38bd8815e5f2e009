// Faults around the daemon rather than inside a run: a folder name too long to reuse as a file name, a
// damaged state.json, a workspaces root deleted under the running daemon, a workspace deleted mid-run,
// and a daemon killed mid-run whose run the next one adopts.
import {
  chmod,
  copyFile,
  link,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { configSchema } from '../../../src/config/schema.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import type { RunExecutor } from '../../../src/run/types.js';
import { unsafeStateDir } from '../../../src/workspace/layout.js';
import { readIncidentFacts } from '../../../src/status/read.js';
import { createLogger, silentLogger } from '../../../src/log/logger.js';
import { dropIncident, startCliDaemon, until, type CliDaemon } from '../../support/cli-daemon.js';
import { createMemoryExecutor } from '../../support/fake-executor.js';
import {
  dropByRename,
  incidentJson,
  tempRoot,
  waitFor,
  waitForReleased,
  waitForState,
} from '../../support/incidents.js';
import { FINISH_ON_HOST } from '../../support/sh-agent.js';
import { afterScans } from '../../support/scans.js';

let root: string;
let cleanup: () => Promise<void>;
let daemons: { stop(): Promise<void> }[] = [];
beforeEach(async () => ({ root, cleanup } = await tempRoot('triage-faults-')));
afterEach(async () => {
  for (const d of daemons) await d.stop();
  daemons = [];
  await cleanup();
  await rm(`${root}-removed`, { recursive: true, force: true, maxRetries: 5 });
});

/** An in-process daemon on `root`; `lines` collects its log lines when given. */
async function startDaemon(executor: RunExecutor, lines?: string[]): Promise<Daemon> {
  const config = configSchema.parse({
    workspaces_root: root,
    engine: 'process',
    http: { port: 0 },
    intake: { write_settle: '200ms' },
    scheduling: { lease_ttl: '1s', rescan_interval: '300ms', shutdown_timeout: '2s' },
  });
  const log = lines
    ? createLogger({
        level: 'info',
        destination: new Writable({
          write(chunk: Buffer, _enc, done) {
            lines.push(chunk.toString());
            done();
          },
        }),
      })
    : silentLogger();
  const daemon = new Daemon({ config, log, executor, audit: new AuditLog(), random: () => 0.5 });
  daemons.push(daemon);
  await daemon.start();
  return daemon;
}

describe('daemon faults', () => {
  for (const [script, unit] of [
    ['é', 2],
    ['事', 3],
  ] as const) {
    it(`records the rejection of an escaping link with a ${unit}-byte-per-character name of 240 bytes under a short state file name`, async () => {
      const outside = await tempRoot('triage-outside-');
      try {
        await writeFile(path.join(outside.root, 'incident.json'), JSON.stringify(incidentJson()));
        const name = script.repeat(240 / unit);
        expect(Buffer.byteLength(name)).toBe(240);
        await symlink(outside.root, path.join(root, name));
        const executor = createMemoryExecutor();
        await startDaemon(executor);
        const file = await waitFor('the unsafe state file', async () =>
          (await readdir(unsafeStateDir(root)).catch(() => [])).find((f) => f.endsWith('.state.json')),
        );
        expect(Buffer.byteLength(file)).toBeLessThanOrEqual(255);
        expect(JSON.parse(await readFile(path.join(unsafeStateDir(root), file), 'utf8'))).toMatchObject({
          state: 'rejected',
          reason: expect.stringContaining(`folder ${path.join(root, name)} resolves to`),
        });
        expect(await readdir(outside.root)).toEqual(['incident.json']);
        expect(executor.calls).toHaveLength(0);
      } finally {
        await outside.cleanup();
      }
    });
  }

  it('rejects a hard-linked incident.json with the reason, then runs it once replaced by a copy', async () => {
    const outside = path.join(`${root}-removed`, 'incident.json');
    await mkdir(path.dirname(outside), { recursive: true });
    await writeFile(outside, JSON.stringify(incidentJson({ incidentId: 'hard-linked' })));
    const ws = path.join(root, 'linked');
    await mkdir(ws);
    await link(outside, path.join(ws, 'incident.json'));
    const executor = createMemoryExecutor({ durationMs: 5 });
    await startDaemon(executor);
    expect((await waitForState(ws, ['rejected'])).reason).toMatch(
      /incident\.json in .*linked has a hard link count of 2: .* copy the file instead/,
    );
    expect(executor.calls).toHaveLength(0);
    // What the reason says: the same bytes, as a file of its own.
    await copyFile(outside, path.join(ws, 'incident.json.tmp'));
    await rename(path.join(ws, 'incident.json.tmp'), path.join(ws, 'incident.json'));
    await waitForState(ws, ['succeeded']);
    expect(executor.calls.map((c) => c.incidentId)).toEqual(['hard-linked']);
  });

  it('never runs a finished incident again when its state.json is damaged: rejected under the root, shown so, run again only once the file is removed', async () => {
    const ws = path.join(root, 'damaged');
    const executor = createMemoryExecutor({ durationMs: 5 });
    const daemon = await startDaemon(executor);
    await dropByRename(root, 'damaged', incidentJson({ incidentId: 'damaged-state' }));
    await waitForState(ws, ['succeeded']);
    await writeFile(path.join(ws, '.triage', 'state.json'), '{"incidentId": "damaged-state", "sta');
    const facts = await waitFor('the damaged state to be reported', async () => {
      const f = await readIncidentFacts(root, 'damaged');
      return f?.state.state === 'rejected' ? f : undefined;
    });
    expect(facts.unsafe).toBe(true);
    expect(facts.state.reason).toContain('.triage/state.json is not a state record the daemon wrote');
    await afterScans(daemon, 3);
    expect(executor.calls).toHaveLength(1);

    await rm(path.join(ws, '.triage', 'state.json'));
    await waitFor('the incident to run again', async () => executor.calls.length === 2 || undefined);
    await waitForState(ws, ['succeeded']);
  });

  it('never re-creates a deleted workspaces root, and watches it again once it is back', async () => {
    const executor = createMemoryExecutor({ durationMs: 5 });
    const daemon = await startDaemon(executor);
    await rm(root, { recursive: true, force: true });
    await waitFor('readiness to report the missing root', async () =>
      (await daemon.readiness()).ok ? undefined : true,
    );
    // Several root checks and rescans later (each one a failed scan of the missing root), still no root.
    await afterScans(daemon, 3);
    expect(await stat(root).catch((err: NodeJS.ErrnoException) => err.code)).toBe('ENOENT');
    expect((await daemon.readiness()).ok).toBe(false);
    await mkdir(root);
    await waitFor('readiness to recover', async () => ((await daemon.readiness()).ok ? true : undefined));
    const ws = await dropByRename(root, 'after', incidentJson({ incidentId: 'after-root-back' }));
    await waitForState(ws, ['succeeded']);
    expect(executor.calls.map((c) => c.incidentId)).toEqual(['after-root-back']);
  });

  for (const removed of ['workspace', 'workspaces root'] as const) {
    it(`stops a run whose ${removed} was deleted, saying so, not that another holder took the lease`, async () => {
      const lines: string[] = [];
      const executor = createMemoryExecutor({ durationMs: 60_000 });
      await startDaemon(executor, lines);
      const ws = await dropByRename(root, 'doomed', incidentJson({ incidentId: 'doomed' }));
      await waitForState(ws, ['running']);
      // Moved out of the way in one step (a recursive rm races with the lease renewals writing into it).
      await rename(removed === 'workspace' ? ws : root, `${root}-removed`);
      const stopped = await waitFor('the run to be stopped', () =>
        lines.find((l) => l.includes('stopping the run without recording it')),
      );
      expect(stopped, lines.join('')).toContain('the workspace folder was removed');
      // Nothing the run was writing when the folder went (state.json, the audit head) made it again.
      expect(
        await stat(removed === 'workspace' ? ws : root).catch((e: NodeJS.ErrnoException) => e.code),
      ).toBe('ENOENT');
      expect(lines.join('')).not.toContain('another holder');
    });
  }

  it('audits "adopted" once when a restarted daemon adopts the run a killed daemon left', async () => {
    const agent = path.join(root, 'waiting-agent.sh');
    await writeFile(
      agent,
      [
        '#!/bin/sh', // Gives up once the workspace is gone (the test failed and cleaned up): never left spinning.
        'while [ ! -e "$TRIAGE_OUTPUT_DIR/go" ]; do [ -d "$TRIAGE_OUTPUT_DIR" ] || exit 1; sleep 0.1; done',
        ...FINISH_ON_HOST,
        '',
      ].join('\n'),
    );
    await chmod(agent, 0o755);
    const incidents = path.join(root, 'incidents');
    const options = {
      dir: root,
      config: {
        workspaces_root: incidents,
        agent: { command: agent, min_report_bytes: 10, report_sections: ['Summary', 'Root Cause'] },
        scheduling: { lease_ttl: '2s', rescan_interval: '300ms' },
      },
      args: ['--engine', 'process'],
      env: { PATH: process.env.PATH, HOME: root },
    };
    const first: CliDaemon = await startCliDaemon(options);
    daemons.push(first);
    const ws = path.join(incidents, 'orphan');
    await dropIncident(ws, incidentJson({ incidentId: 'orphan' }));
    await waitForState(ws, ['running'], 30_000);
    await until('the agent to start', 30_000, async () =>
      (await stat(path.join(ws, 'output')).catch(() => undefined)) ? true : undefined,
    );
    first.child.kill('SIGKILL'); // the daemon only: the agent, in its own process group, lives on
    await until('the first daemon to exit', 10_000, async () => (first.child.signalCode ? true : undefined));

    const second = await startCliDaemon(options);
    daemons.push(second);
    const audit = path.join(ws, '.triage', 'audit.jsonl');
    await until('the adoption', 30_000, async () =>
      (await readFile(audit, 'utf8')).includes('"adopted"') ? true : undefined,
    );
    await writeFile(path.join(ws, 'output', 'go'), '');
    const done = await waitForState(ws, ['succeeded', 'failed'], 30_000);
    expect(done.state, second.tail()).toBe('succeeded');
    await waitForReleased(ws);
    const events = (await readFile(audit, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; runId?: string });
    const runId = done.runs.at(-1)?.id;
    expect(done.runs).toHaveLength(1);
    expect(events.filter((e) => e.type === 'adopted').map((e) => e.runId)).toEqual([runId]);
    expect(events.filter((e) => e.type === 'reattached')).toHaveLength(1);
  });
});
