// A daemon SIGKILLed while its agent runs takes the run's kubectl broker with it; the daemon that
// adopts the run starts the broker again on the same socket, so the agent's later calls are decided,
// passed through and recorded as before, and result.json counts the calls of both daemons.
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDirOf, RUN_FILES } from '../../../src/workspace/layout.js';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { RAW_STDOUT } from '../../../src/engines/process.js';
import { readCallLog } from '../../../src/kubectl/broker/calls.js';
import { silentLogger } from '../../../src/log/logger.js';
import { until } from '../../support/cli-daemon.js';
import { guardFixture, type GuardFixture } from '../../support/guard.js';
import { REPO_ROOT, makeWorkspace } from '../../support/runs.js';
import { guardOrphanConfig, guardOrphanExecutor } from './fixtures/guard-orphan.js';

const canConnect = (socket: string) =>
  new Promise<boolean>((resolve) => {
    const s = net.createConnection(socket);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

describe('kubectl guard across a daemon restart', () => {
  let fx: GuardFixture;
  beforeAll(async () => {
    fx = await guardFixture('triage-guard-adopt-');
  });
  afterAll(async () => fx?.root.cleanup());

  it('serves the adopted agent from a new broker on the same socket', async () => {
    const workspace = await makeWorkspace(fx.root.dir);
    const runId = `guard-orphan-${process.pid}`;
    const bundle = runDirOf(workspace.dir, runId);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'test/integration/kubectl/fixtures/guard-orphan-daemon.ts')],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          ORPHAN_ROOT: fx.root.dir,
          ORPHAN_KUBECTL: fx.real.command,
          ORPHAN_WORKSPACE: workspace.dir,
          ORPHAN_RUN_ID: runId,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Killed once the agent has its first answer (the broker records a call before it answers): not
    // between the real kubectl's run and the broker's reply, which would lose that call's record.
    await until(
      'the first call through the first broker, answered',
      30_000,
      async () =>
        (await readFile(path.join(bundle, RAW_STDOUT), 'utf8').catch(() => '')).includes('before exit=')
          ? true
          : undefined,
      () => output,
    );
    expect(await fx.real.calls()).toHaveLength(1);
    child.kill('SIGKILL');
    await exited;
    const socket = path.join(bundle, RUN_FILES.brokerSocket);
    expect(await canConnect(socket)).toBe(false);

    // What the launching daemon recorded for an adopting one: the prompt's digest and triage status,
    // and the gaps the evidence check must name. A gap is added here as a launching daemon whose
    // triage timed out would have written it.
    const manifestFile = path.join(bundle, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Record<string, unknown>;
    const context = JSON.parse(await readFile(path.join(bundle, 'context.json'), 'utf8')) as {
      promptSha256: string;
      triage: { status: string };
    };
    expect(manifest).toMatchObject({
      promptSha256: context.promptSha256,
      triageStatus: context.triage.status,
    });
    const timedOut = 'the triage script timed out: its output is partial';
    await writeFile(manifestFile, JSON.stringify({ ...manifest, knownGaps: [timedOut] }));

    const config = guardOrphanConfig(fx.root.dir, fx.real.command);
    const executor = guardOrphanExecutor(config);
    const adopted = executor.adopt({
      workspace,
      runId,
      signal: new AbortController().signal,
      log: silentLogger(),
    });
    await until('the new broker to listen', 30_000, async () =>
      (await canConnect(socket)) ? true : undefined,
    );
    await writeFile(path.join(workspace.dir, 'output', 'go'), '');
    expect(await adopted).toMatchObject({ status: 'succeeded', exitCode: 0 });

    const stdout = await readFile(path.join(bundle, 'agent-stdout.log'), 'utf8');
    expect(stdout).toContain('before exit=0');
    expect(stdout).toContain('after exit=0');
    expect(stdout).toContain('delete exit=1');
    expect((await fx.real.calls()).map((l) => l.split(' | ')[0])).toEqual([
      'get pods -n before',
      'get pods -n after',
    ]);
    const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
    expect(records.map((r) => [r.decision, r.normalized])).toEqual([
      ['allowed', 'get pods --namespace=before'],
      ['allowed', 'get pods --namespace=after'],
      ['refused', 'delete pods/web-1'],
    ]);
    const result = await readRunResult(bundle);
    // The adopting daemon never built the context: what the result says of it came from the manifest.
    expect(result.ok && result.value).toMatchObject({
      promptSha256: context.promptSha256,
      triage: { status: context.triage.status },
      adopted: true,
    });
    expect(result.ok && result.value.evidence?.gaps).toContain(timedOut);
    expect(result.ok && result.value.kubectl).toEqual({
      guard: 'broker',
      calls: 3,
      refused: 1,
      log: RUN_FILES.clusterCalls,
    });
  });
});
