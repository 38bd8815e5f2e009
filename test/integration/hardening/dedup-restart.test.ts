// Issue 13 #9: the dedup window holds across a daemon stop, a daemon SIGKILL and between two daemons
// sharing one root: a duplicate (same cluster + resource + faultType, another folder) arriving later
// inside the window is `rejected` as a duplicate naming the first. The real daemon command.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readState } from '../../../src/workspace/state.js';
import type { CliDaemon } from '../../support/cli-daemon.js';
import { dropByRename, incidentJson, tempRoot, waitFor, waitForState } from '../../support/incidents.js';
import { afterScans, auditEvents, markers, startProcessDaemon } from './support.js';

let dir: string;
let cleanup: () => Promise<void>;
const daemons: CliDaemon[] = [];
beforeEach(async () => ({ root: dir, cleanup } = await tempRoot('triage-dedup-')));
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.stop()));
  await cleanup();
});

// A window short enough to say what it is, long enough for a restart on a loaded machine.
const WINDOW = {
  scheduling: { dedup_window: '2m' },
};

/** An incident for `resource` (the dedup key is cluster + namespace + kind + name + faultType). */
const incidentFor = (incidentId: string, resource: string) =>
  incidentJson({
    incidentId,
    resource: { apiVersion: 'v1', kind: 'Pod', name: resource, namespace: 'shop', uid: `uid-${incidentId}` },
  });

async function start(root: string, name: string): Promise<CliDaemon> {
  const d = await startProcessDaemon(path.join(dir, name), root, WINDOW);
  daemons.push(d);
  return d;
}

async function expectDuplicateOf(workspace: string, first: string, daemon: CliDaemon): Promise<void> {
  const state = await waitForState(workspace, ['rejected', 'succeeded', 'failed'], 60_000).catch(
    (err: Error) => {
      throw new Error(`${err.message}. ${daemon.tail()}`);
    },
  );
  expect({ state: state.state, duplicateOf: state.duplicateOf }, workspace).toEqual({
    state: 'rejected',
    duplicateOf: first,
  });
  expect(await markers(workspace, 'agent-starts.log'), `${workspace} agent starts`).toBe(0);
  // The audit append follows the state write.
  const audited = await waitFor('the duplicate audit event', async () => {
    const events = (await auditEvents(workspace)).filter((e) => e.type === 'duplicate');
    return events.length > 0 ? events : undefined;
  });
  expect(audited).toEqual([expect.objectContaining({ duplicateOf: first })]);
}

describe('the dedup window', () => {
  it('holds across a daemon stop and a daemon SIGKILL: a later duplicate in another folder is rejected naming the first', async () => {
    const root = path.join(dir, 'incidents');
    for (const { id, stopWith } of [
      { id: 'stopped', stopWith: 'SIGTERM' as const },
      { id: 'killed', stopWith: 'SIGKILL' as const },
    ]) {
      const first = await start(root, `${id}-1`);
      const a = await dropByRename(root, `${id}-a`, incidentFor(`${id}-first`, `web-${id}`));
      await waitForState(a, ['succeeded'], 60_000);
      const exited = new Promise((r) => first.child.once('exit', r));
      first.child.kill(stopWith);
      await exited;
      const second = await start(root, `${id}-2`);
      const b = await dropByRename(root, `${id}-b`, incidentFor(`${id}-later`, `web-${id}`));
      await expectDuplicateOf(b, `${id}-first`, second);
      // The first incident is untouched: one run, still succeeded.
      expect(await readState(a)).toMatchObject({ state: 'succeeded', incidentId: `${id}-first` });
      expect(await markers(a, 'agent-starts.log')).toBe(1);
      await second.stop();
    }
  }, 240_000);

  it('holds between two daemons on one root: of two same-key incidents in two folders one runs, the other is its duplicate', async () => {
    const root = path.join(dir, 'incidents');
    const [x, y] = await Promise.all([start(root, 'replica-x'), start(root, 'replica-y')]);
    const pairs: [string, string][] = [];
    for (let i = 0; i < 3; i++) {
      const [p, q] = await Promise.all([
        dropByRename(root, `pair${i}-p`, incidentFor(`pair${i}-p`, `api-${i}`)),
        dropByRename(root, `pair${i}-q`, incidentFor(`pair${i}-q`, `api-${i}`)),
      ]);
      pairs.push([p, q]);
    }
    for (const [p, q] of pairs) {
      const [sp, sq] = await Promise.all(
        [p, q].map((w) =>
          waitForState(w, ['rejected', 'succeeded', 'failed'], 60_000).catch((err: Error) => {
            throw new Error(`${err.message}. ${x.tail()} ${y.tail()}`);
          }),
        ),
      );
      const states = [sp!.state, sq!.state].sort();
      expect(states, `${p} / ${q}`).toEqual(['rejected', 'succeeded']);
      const [ran, dup] = sp!.state === 'succeeded' ? [sp!, sq!] : [sq!, sp!];
      expect(dup.duplicateOf).toBe(ran.incidentId);
    }
    // Both replicas rescan a few times: a late second run would show up now.
    await Promise.all([afterScans(x, 3), afterScans(y, 3)]);
    for (const [p, q] of pairs) {
      expect((await markers(p, 'agent-starts.log')) + (await markers(q, 'agent-starts.log'))).toBe(1);
    }
  }, 180_000);
});
