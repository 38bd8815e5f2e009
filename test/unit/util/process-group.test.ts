import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { markedPids, markedPidsHere, RUN_MARKER_ENV, signalTree } from '../../../src/util/process-group.js';

// Finding a run's processes by the marker in their environment (/proc), and signalling them.

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A sleeping process, in its own session (outside any group this test signals), with `env` added. */
function sleeper(env: Record<string, string>): ChildProcess {
  const child = spawn('sleep', ['300'], { env: { ...process.env, ...env }, detached: true, stdio: 'ignore' });
  children.push(child);
  return child;
}

const exited = (c: ChildProcess) => new Promise((resolve) => c.once('exit', (_code, sig) => resolve(sig)));

describe.runIf(process.platform === 'linux')('markedPids', () => {
  it.each([
    ['on the sweep worker', markedPids],
    ['on this thread (no worker)', markedPidsHere],
  ])(
    'finds exactly the processes whose environment carries the marker, wherever it sits in it, %s',
    async (_how, find) => {
      const marker = `run-${process.pid}-${Date.now()}`;
      const marked = sleeper({ [RUN_MARKER_ENV]: marker });
      const prefixed = sleeper({ [RUN_MARKER_ENV]: `${marker}-other` });
      const unmarked = sleeper({});
      const found = await find(marker);
      expect(found).toContain(marked.pid);
      expect(found).not.toContain(prefixed.pid);
      expect(found).not.toContain(unmarked.pid);
      expect(found).not.toContain(process.pid);
    },
  );

  it('signalTree signals a marked process outside the group before it resolves', async () => {
    const marker = `run-${process.pid}-${Date.now()}-tree`;
    const marked = sleeper({ [RUN_MARKER_ENV]: marker });
    const gone = exited(marked);
    await signalTree(undefined, 'SIGTERM', marker);
    expect(await gone).toBe('SIGTERM');
  });
});
