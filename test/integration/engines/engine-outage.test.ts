// An engine that stops answering for 30 s loses no incident and burns no attempt: incidents wait
// (queued, saying what for) and run once it answers again. The engine goes away for real: the daemon
// talks to Podman through a local proxy socket that this test closes and reopens.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import { readState } from '../../../src/workspace/state.js';
import { createLogger, silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { TEST_IMAGE, dockerHost, requireEngine, requireTestImage } from '../../support/engine.js';
import { dropByRename, incidentJson, waitForState } from '../../support/incidents.js';
import { emptySkills, fakeAdapter, tempDir, testConfig } from '../../support/runs.js';

const docker = await requireEngine();
const OUTAGE_MS = Number(process.env.OUTAGE_MS ?? 30_000);

/** A unix-socket proxy to the engine that can be cut (connections dropped, socket gone) and restored. */
function engineProxy(socketPath: string, upstream: string) {
  let server: Server | undefined;
  const open = new Set<Socket>();
  return {
    async up() {
      await rm(socketPath, { force: true });
      // Half-open both ways: the engine's attach protocol ends stdin and keeps reading the output.
      server = createServer({ allowHalfOpen: true }, (client) => {
        const engine = connect({ path: upstream, allowHalfOpen: true });
        open.add(client).add(engine);
        client.pipe(engine).pipe(client);
        const drop = () => {
          client.destroy();
          engine.destroy();
        };
        client.on('error', drop).on('close', drop);
        engine.on('error', drop).on('close', drop);
      });
      await new Promise<void>((r) => server?.listen(socketPath, r));
    },
    async down() {
      for (const s of open) s.destroy();
      open.clear();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      await rm(socketPath, { force: true });
    },
  };
}

describe.skipIf(!docker)('engine outage', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    await requireTestImage(docker!);
    root = await tempDir('triage-outage-');
  });
  afterAll(async () => root?.cleanup());

  it('keeps incidents queued while the engine is down for 30 s, then runs each once, no attempt burned', async () => {
    const upstream = dockerHost().replace(/^unix:\/\//, '');
    const proxy = engineProxy(path.join(root.dir, 'engine.sock'), upstream);
    const config = testConfig(root.dir, {
      agent: { image: TEST_IMAGE },
      docker: { host: `unix://${path.join(root.dir, 'engine.sock')}`, network: 'none' },
      scheduling: { max_attempts: 2, retry_base_delay: 100, rescan_interval: '1s', lease_ttl: '5s' },
    });
    const log = process.env.OUTAGE_DEBUG ? createLogger({ level: 'debug' }) : silentLogger();
    const redactor = new Redactor();
    const audit = new AuditLog({ redactor });
    const executor = createRunExecutor({
      config,
      log,
      redactor,
      secrets: {},
      audit,
      env: {},
      skills: emptySkills(),
      agents: () => fakeAdapter('/usr/local/bin/fake-agent'),
    });
    const daemon = new Daemon({ config, log, executor, audit, http: false });
    await daemon.start();
    try {
      const dirs = await Promise.all(
        ['a', 'b', 'c'].map((n) =>
          dropByRename(config.workspaces_root, `outage-${n}`, incidentJson({ incidentId: `outage-${n}` })),
        ),
      );
      // The engine is down from the start: every incident waits for it.
      for (const dir of dirs) {
        const state = await waitForState(dir, ['queued'], 10_000);
        expect(state.state).toBe('queued');
      }
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      const states = await Promise.all(dirs.map((dir) => readState(dir)));
      for (const state of states) expect(state).toMatchObject({ state: 'queued', attempts: 0 });
      // The one that tried says what it waits for; the others were held back before trying.
      expect(
        states.map((s) => s?.reason ?? '').filter((r) => /waiting for the container engine/.test(r)).length,
      ).toBeGreaterThanOrEqual(1);
      await proxy.up();
      for (const dir of dirs) {
        const done = await waitForState(dir, ['succeeded'], 60_000);
        // One attempt counted: the waits before it were not attempts.
        expect(done.attempts, dir).toBe(1);
      }
    } finally {
      await daemon.stop();
      await proxy.down();
      await executor.close?.();
    }
  }, 120_000);
});
