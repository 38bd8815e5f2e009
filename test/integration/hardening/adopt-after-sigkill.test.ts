// Issue 13 #4: a process-engine run adopted after the daemon was SIGKILLed is judged by what the agent
// really did (its output and exit code outlive the daemon), whether the agent ends while the new daemon
// runs or while no daemon is alive. The real daemon command, real agent processes, real SIGKILL.
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliDaemon } from '../../support/cli-daemon.js';
import { dropByRename, incidentJson, tempRoot, waitFor, waitForState } from '../../support/incidents.js';
import { auditEvents, markers, startProcessDaemon } from './support.js';

let dir: string;
let cleanup: () => Promise<void>;
const daemons: CliDaemon[] = [];
beforeEach(async () => ({ root: dir, cleanup } = await tempRoot('triage-adopt-kill-')));
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  await cleanup();
});

const INCIDENTS = 5;

describe('a process-engine run adopted after a daemon SIGKILL', () => {
  it('is recorded by its real outcome (succeeded, exit 0, usage from its output), never failed or run twice, in 5-incident kill loops', async () => {
    const root = path.join(dir, 'incidents');
    const rounds = [
      { prefix: 'live', agentEndsFirst: false },
      { prefix: 'dead', agentEndsFirst: true },
    ];
    for (const { prefix, agentEndsFirst } of rounds) {
      const dirs = Array.from({ length: INCIDENTS }, (_, i) => path.join(root, `${prefix}${i}`));
      for (const [i, d] of dirs.entries()) {
        await dropByRename(root, path.basename(d), incidentJson({ incidentId: `${prefix}-${i}` }));
        await writeFile(path.join(d, 'delay'), '0.5');
        await writeFile(path.join(d, 'hold'), ''); // the agent finishes only once this is removed
      }
      const first = await startProcessDaemon(dir, root);
      daemons.push(first);
      await waitFor(
        `every ${prefix} agent to start`,
        async () => (await Promise.all(dirs.map((d) => markers(d, 'agent-starts.log')))).every((n) => n >= 1),
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}. ${first.tail()}`);
      });
      const exited = new Promise((r) => first.child.once('exit', r));
      first.child.kill('SIGKILL'); // the daemon only: the agents lead their own process groups
      await exited;
      const release = () => Promise.all(dirs.map((d) => rm(path.join(d, 'hold'))));
      if (agentEndsFirst) await release();
      if (agentEndsFirst)
        await waitFor(
          `every ${prefix} agent to end with no daemon alive`,
          async () => (await Promise.all(dirs.map((d) => markers(d, 'agent-ends.log')))).every((n) => n >= 1),
          30_000,
        );
      const second = await startProcessDaemon(dir, root);
      daemons.push(second);
      if (!agentEndsFirst) {
        expect(
          await Promise.all(dirs.map((d) => markers(d, 'agent-ends.log'))),
          'no agent ended before the new daemon started',
        ).toEqual(dirs.map(() => 0));
        await release();
      }
      for (const d of dirs) {
        const state = await waitForState(d, ['succeeded', 'failed'], 60_000).catch((err: Error) => {
          throw new Error(`${err.message}. ${second.tail()}`);
        });
        const runId = state.runs.at(-1)!.id;
        const result = JSON.parse(
          await readFile(path.join(d, '.triage', 'runs', runId, 'result.json'), 'utf8'),
        ) as Record<string, unknown>;
        expect({ state: state.state, runs: state.runs.length }, `${d}: ${JSON.stringify(result)}`).toEqual({
          state: 'succeeded',
          runs: 1,
        });
        expect(result).toMatchObject({
          status: 'succeeded',
          exitCode: 0,
          adopted: true,
          tokens: { input: 7, output: 5 },
        });
        expect(await markers(d, 'agent-starts.log'), `${d} agent starts`).toBe(1);
        expect((await auditEvents(d)).filter((e) => e.type === 'adopted').length, d).toBeGreaterThanOrEqual(
          1,
        );
      }
      await second.stop();
      daemons.splice(0);
    }
  }, 300_000);
});
