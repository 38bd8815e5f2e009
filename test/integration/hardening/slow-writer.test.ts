// Issue 13 #14: a producer writing incident.json in place more slowly than intake.write_settle (an empty
// file first, then three chunks over about 3 s, no rename) is not judged while it grows: never recorded
// rejected (empty or malformed), not counted as rejected, and accepted and run once it is complete.
import { open, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readState } from '../../../src/workspace/state.js';
import type { CliDaemon } from '../../support/cli-daemon.js';
import { incidentJson, tempRoot, waitFor, waitForState } from '../../support/incidents.js';
import { auditEvents, incidentsTotal, markers, startProcessDaemon } from './support.js';

let dir: string;
let cleanup: () => Promise<void>;
let daemon: CliDaemon | undefined;
beforeEach(async () => ({ root: dir, cleanup } = await tempRoot('triage-slow-writer-')));
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await cleanup();
});

const PAUSE_MS = 900;

describe('an in-place writer slower than write_settle', () => {
  it('is never recorded or counted as rejected while it writes, and is accepted and run once complete', async () => {
    const root = path.join(dir, 'incidents');
    await mkdir(root, { recursive: true });
    daemon = await startProcessDaemon(dir, root, {
      intake: { write_settle: '300ms', incomplete_grace: '5s' },
    });
    const ws = path.join(root, 'slow-writer');
    await mkdir(ws);
    const seen = new Set<string>();
    let writing = true;
    const watch = (async () => {
      while (writing) {
        const s = await readState(ws);
        if (s) seen.add(s.state);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const text = JSON.stringify(incidentJson({ incidentId: 'slow-writer' }), null, 2);
    const third = Math.ceil(text.length / 3);
    const handle = await open(path.join(ws, 'incident.json'), 'w'); // empty at first
    try {
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, PAUSE_MS));
        await handle.write(text.slice(i * third, (i + 1) * third));
        await handle.sync();
      }
    } finally {
      await handle.close();
    }
    const done = await waitForState(ws, ['succeeded', 'failed', 'rejected'], 60_000);
    writing = false;
    await watch;
    expect(done.state, daemon.tail()).toBe('succeeded');
    expect([...seen], 'states seen while writing').not.toContain('rejected');
    expect((await auditEvents(ws)).filter((e) => e.type === 'rejected')).toEqual([]);
    expect(await markers(ws, 'agent-starts.log')).toBe(1);
    // The store bumps the counter after the audit append that follows the state write: wait for it.
    const d = daemon;
    await waitFor(
      'the succeeded counter',
      async () => (await incidentsTotal(d, 'succeeded')) === 1 || undefined,
    );
    expect(await incidentsTotal(d, 'rejected')).toBe(0);
  }, 120_000);
});
