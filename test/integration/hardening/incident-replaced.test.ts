// Issue 13 #8: an incident.json replaced during a run, or after success with a new incidentId, is
// recorded (an audit event and a log line) and, per the rule "changed sha256 → a new attempt once the
// current run ends", runs exactly once more; re-saving the same bytes runs nothing. The real daemon
// command with the process engine and a stand-in agent.
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readState } from '../../../src/workspace/state.js';
import type { CliDaemon } from '../../support/cli-daemon.js';
import { dropByRename, incidentJson, tempRoot, waitFor } from '../../support/incidents.js';
import { afterScans, auditEvents, markers, startProcessDaemon } from './support.js';

let dir: string;
let cleanup: () => Promise<void>;
let daemon: CliDaemon | undefined;
beforeEach(async () => ({ root: dir, cleanup } = await tempRoot('triage-replaced-')));
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await cleanup();
});

/** Waits until the workspace has `runs` runs and is final again. */
async function finalWithRuns(workspace: string, runs: number): Promise<string> {
  const s = await waitFor(
    `${path.basename(workspace)} final with ${runs} runs`,
    async () => {
      const st = await readState(workspace);
      return st && st.runs.length === runs && ['succeeded', 'failed'].includes(st.state) ? st : undefined;
    },
    60_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}. ${daemon?.tail() ?? ''}`);
  });
  return s.state;
}

/** Several rescans after the last awaited state: a run that should not happen would have started. */
const settle = () => afterScans(daemon!, 4);

describe('a replaced incident.json', () => {
  it('changed mid-run, or after success with a new incidentId, is audited and logged and runs exactly once more; the same bytes re-saved run nothing', async () => {
    const root = path.join(dir, 'incidents');
    const first = incidentJson({ incidentId: 'orig-1' });
    const ws = await dropByRename(root, 'replaced', first);
    await writeFile(path.join(ws, 'delay'), '4');
    daemon = await startProcessDaemon(dir, root);

    // (a) Replaced while the run goes on (the agent runs 4 s), with changed content (same incidentId).
    await waitFor(
      'the first run to start',
      async () => (await markers(ws, 'agent-starts.log')) === 1,
      60_000,
    );
    // The replacement must land mid-run, which is what this case is about.
    await waitFor(
      'the run to be recorded running',
      async () => (await readState(ws))?.state === 'running',
      60_000,
    );
    await dropByRename(root, 'replaced', { ...first, severity: 'critical' });
    expect(await finalWithRuns(ws, 2)).toBe('succeeded');
    await settle();
    expect(await markers(ws, 'agent-starts.log'), 'runs after a change during the run').toBe(2);
    let changed = (await auditEvents(ws)).filter((e) => e.type === 'incident_changed');
    expect(changed).toEqual([expect.objectContaining({ incidentId: 'orig-1', previousState: 'succeeded' })]);
    expect(daemon.logs()).toMatch(/incident\.json changed during its run/);
    expect(daemon.logs()).toMatch(/incident\.json changed after the incident finished/);

    // Unchanged re-save (a rename of the same bytes, then an in-place rewrite): nothing runs.
    const bytes = await readFile(path.join(ws, 'incident.json'));
    await writeFile(path.join(ws, 'incident.json.tmp'), bytes);
    await rename(path.join(ws, 'incident.json.tmp'), path.join(ws, 'incident.json'));
    await writeFile(path.join(ws, 'incident.json'), bytes);
    await settle();
    expect(await markers(ws, 'agent-starts.log'), 'runs after re-saving the same bytes').toBe(2);
    expect((await readState(ws))?.runs).toHaveLength(2);

    // (b) Replaced after success with a new incidentId.
    await writeFile(path.join(ws, 'delay'), '0.2');
    await dropByRename(root, 'replaced', { ...first, incidentId: 'orig-2', severity: 'critical' });
    expect(await finalWithRuns(ws, 3)).toBe('succeeded');
    await settle();
    expect(await markers(ws, 'agent-starts.log'), 'runs after a new incidentId').toBe(3);
    const state = await readState(ws);
    expect(state?.incidentId).toBe('orig-2');
    changed = (await auditEvents(ws)).filter((e) => e.type === 'incident_changed');
    expect(changed).toHaveLength(2);
    expect(changed[1]).toMatchObject({ incidentId: 'orig-2', previousState: 'succeeded' });
    expect(daemon.logs().match(/incident\.json changed after the incident finished/g)).toHaveLength(2);
  }, 180_000);
});
