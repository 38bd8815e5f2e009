// Supervision against a scripted engine: an engine that stops answering mid-run does not end it.
import { describe, expect, it } from 'vitest';
import { supervise } from '../../../src/run/supervise.js';
import type { RunExit, RunHandle } from '../../../src/engines/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import { isTransient } from '../../../src/util/errors.js';
import { FakeEngine, unreachable } from './fake-engine.js';

const started = async (engine: FakeEngine): Promise<RunHandle> =>
  engine.start({
    runId: 'run-1',
    incidentId: 'inc',
    labels: {},
    image: 'img',
    command: 'agent',
    args: [],
    env: {},
    secretEnv: {},
    stdin: '',
    workdir: '/',
    mounts: [],
    tmpfs: [],
    stateDir: '/state',
    onStdout: () => undefined,
    onStderr: () => undefined,
  });

/** Makes `engine.wait` fail as unreachable for its first `times` calls. */
function dropWaits(engine: FakeEngine, times: number): { calls: number } {
  const seen = { calls: 0 };
  const wait = engine.wait.bind(engine);
  engine.wait = (h, ms) => {
    seen.calls += 1;
    return seen.calls <= times ? Promise.reject(unreachable()) : wait(h, ms);
  };
  return seen;
}

describe('supervise', () => {
  it('keeps waiting through an engine outage and reports the exit code once the engine answers again', async () => {
    const engine = new FakeEngine({ hang: true });
    const handle = await started(engine);
    const seen = dropWaits(engine, 3);
    setTimeout(() => engine.finish(handle.id, { exitCode: 7, signal: null, oomKilled: false }), 50);
    const r = await supervise({
      engine,
      handle,
      timeoutMs: 10_000,
      graceMs: 1_000,
      signal: new AbortController().signal,
      log: silentLogger(),
      engineRetryMs: 10,
    });
    expect(seen.calls).toBeGreaterThanOrEqual(4);
    expect(r).toMatchObject({ timedOut: false, interrupted: false, exit: { exitCode: 7 } });
    expect(engine.signals).toEqual([]);
  });

  it('still enforces the timeout when the engine was unreachable until after the deadline', async () => {
    const engine = new FakeEngine({ hang: true, honour: ['SIGINT'] });
    const handle = await started(engine);
    let down = true;
    const wait = engine.wait.bind(engine);
    engine.wait = (h, ms) => (down ? Promise.reject(unreachable()) : wait(h, ms));
    const signal = engine.signal.bind(engine);
    engine.signal = (h, sig) => (down ? Promise.reject(unreachable()) : signal(h, sig));
    setTimeout(() => (down = false), 400);
    const r = await supervise({
      engine,
      handle,
      timeoutMs: 200,
      graceMs: 500,
      signal: new AbortController().signal,
      log: silentLogger(),
      engineRetryMs: 20,
    });
    // SIGINT went nowhere (engine down); SIGTERM reached it after the engine came back.
    expect(r.timedOut).toBe(true);
    expect(r.exit.exitCode).not.toBeNull();
    expect(engine.signals).toContain('SIGTERM');
  });

  it('gives up after SIGKILL with the engine error when the engine never comes back', async () => {
    const engine = new FakeEngine({ hang: true });
    const handle = await started(engine);
    engine.wait = (): Promise<RunExit> => Promise.reject(unreachable());
    engine.signal = () => Promise.reject(unreachable());
    const controller = new AbortController();
    const r = supervise({
      engine,
      handle,
      timeoutMs: 50,
      graceMs: 50,
      signal: controller.signal,
      log: silentLogger(),
      engineRetryMs: 10,
      killWaitMs: 100,
    });
    // killWaitMs bounds the last wait; the outcome names the engine failure.
    const out = await r;
    expect(out).toMatchObject({ timedOut: true, stoppedWith: 'SIGKILL', exit: { exitCode: null } });
    expect(out.exit.error).toMatch(
      /did not end within 100 ms of SIGKILL; the engine did not answer: .*unreachable/,
    );
  });

  it('passes a non-transient engine error through', async () => {
    const engine = new FakeEngine({ hang: true });
    const handle = await started(engine);
    engine.wait = () => Promise.reject(new Error('boom'));
    const err = await supervise({
      engine,
      handle,
      timeoutMs: 1000,
      graceMs: 100,
      signal: new AbortController().signal,
      log: silentLogger(),
    }).catch((e: unknown) => e);
    expect(isTransient(err)).toBe(false);
    expect(String(err)).toContain('boom');
  });
});
