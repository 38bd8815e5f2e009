import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AlertsDoc } from '../../../../src/intake/webhooks/disk.js';
import { tempRoot } from '../../../support/incidents.js';
import { REPO_ROOT } from '../../../support/runs.js';
import { amAlert, amPayload, type AmAlert } from '../../../support/webhooks/alerts.js';
import { readIncidentFolders } from '../../../support/webhooks/folders.js';

// HTTP intake killed with SIGKILL in the middle of a load of alerts (from outside, and by itself at
// chosen points of a batch's writes), then restarted; the sender sends every alert again, as
// Alertmanager does for what was not acknowledged (and for what was: it re-sends a group's alerts on
// every group_interval). Every alert ends up stored exactly once, each group in one incident: a batch
// cut anywhere between its storm records, its workspaces and its delivery keys loses nothing and
// doubles nothing.

const TOKEN = 'sigkill-intake-7f3a';
const SERVER = path.join(REPO_ROOT, 'test/integration/intake/webhooks/fixtures/intake-server.ts');
const GROUPS = 30;
const PER_GROUP = 10;
const SENDERS = 24;
const POD_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
/**
 * Crash points, one server after the other on one root: at its 1st to 4th fsync (the first batch's
 * file data), then at its 1st to 9th fsync of a folder (the storm records', workspaces' and keys'
 * folders of the first three batches: the steps between which a batch puts its writes in place).
 */
const CRASH_POINTS = [...[1, 2, 3, 4].map(String), ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `dir:${n}`)];

let root: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-intake-sigkill-'));
});
afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await cleanup();
});

async function startServer(crashAtFsync = ''): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, root, TOKEN], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, INTAKE_CRASH_AT_FSYNC: crashAtFsync },
  });
  children.push(child);
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /READY (\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) =>
      reject(new Error(`intake server exited (${code ?? signal}): ${output}`)),
    );
  });
  return { child, url: `http://127.0.0.1:${port}/v1/alerts/alertmanager` };
}

/**
 * Posts each alert (one per request, SENDERS at a time) until the list is done or the server goes
 * away; `killAfter` acknowledged alerts, the server is SIGKILLed. Resolves to the acknowledged indexes.
 */
async function send(
  server: { child: ChildProcess; url: string },
  alerts: readonly AmAlert[],
  killAfter = Infinity,
): Promise<Set<number>> {
  const acked = new Set<number>();
  let next = 0;
  let gone = false;
  await Promise.all(
    Array.from({ length: SENDERS }, async () => {
      while (!gone && next < alerts.length) {
        const i = next++;
        try {
          const res = await fetch(server.url, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify(amPayload([alerts[i] as AmAlert])),
          });
          await res.arrayBuffer();
          if (res.status === 202) acked.add(i);
          if (acked.size >= killAfter && !gone) {
            gone = true;
            server.child.kill('SIGKILL');
          }
        } catch {
          gone = true; // the server is gone: this one was not acknowledged
        }
      }
    }),
  );
  if (server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGKILL');
  }
  await new Promise((r) =>
    server.child.exitCode !== null || server.child.signalCode !== null
      ? r(null)
      : server.child.once('exit', r),
  );
  return acked;
}

/**
 * GROUPS × PER_GROUP firing alerts, the pods of one Deployment per group (one group per workload);
 * `round` gives another GROUPS groups, new ones.
 */
function makeAlerts(round = 0): AmAlert[] {
  return Array.from({ length: GROUPS * PER_GROUP }, (_, i) => {
    const g = round * GROUPS + (i % GROUPS);
    const suffix = [...i.toString(27).padStart(5, '0')].map((c) => POD_CHARS[parseInt(c, 27)]).join('');
    return amAlert(
      { alertname: `SigkillAlert${g}`, namespace: `ns-${g}`, pod: `app${g}-7d4b9c8f6d-${suffix}` },
      { fingerprint: `sigkill${round}-${String(i).padStart(9, '0')}` },
    );
  });
}

/** Every alert stored exactly once, each of `groups` groups in exactly one complete workspace. */
async function expectEachAlertOnce(alerts: readonly AmAlert[], groups = GROUPS): Promise<void> {
  const folders = await readIncidentFolders(root);
  const docs = await Promise.all(
    folders.map(
      async (f) => JSON.parse(await readFile(path.join(root, f, 'alerts.json'), 'utf8')) as AlertsDoc,
    ),
  );
  const stored = docs.flatMap((d) => d.alerts.map((a) => (a.alert as AmAlert).fingerprint));
  expect(stored.length).toBe(alerts.length);
  expect(new Set(stored)).toEqual(new Set(alerts.map((a) => a.fingerprint)));
  // One incident per group: every folder holds the alerts of exactly one group, and no group has two.
  const groupOf = (d: AlertsDoc) => new Set(d.alerts.map((a) => (a.alert as AmAlert).labels.alertname));
  expect(docs.map((d) => groupOf(d).size)).toEqual(docs.map(() => 1));
  expect(folders.length).toBe(groups);
  // Every workspace is complete: an incident.json the daemon can read beside its alerts.json.
  for (const f of folders) {
    const incident = JSON.parse(await readFile(path.join(root, f, 'incident.json'), 'utf8')) as {
      incidentId?: string;
    };
    expect(incident.incidentId).toBe(f);
  }
}

describe('HTTP intake under SIGKILL', () => {
  it('loses no alert and doubles none: after two kills mid-load and a resend, each alert is stored once, each group in one incident', async () => {
    const alerts = makeAlerts();
    const first = await send(await startServer(), alerts, 80);
    const second = await send(await startServer(), alerts, 200);
    const third = await send(await startServer(), alerts);

    // The kills cut the load: neither of the first two servers acknowledged everything.
    expect(first.size).toBeLessThan(alerts.length);
    expect(second.size).toBeLessThan(alerts.length);
    // The last server, never killed, acknowledged every alert (new ones and redeliveries alike).
    expect(third.size).toBe(alerts.length);
    await expectEachAlertOnce(alerts);
  }, 120_000);

  it('a crash at each step of the first batches (file data, storm records, workspaces, keys) leaves each alert stored once', async () => {
    // Each server is sent new alerts (30 new groups) first, then every alert the servers before it
    // were sent: it has new files to write from its first batch on, so each reaches its crash point.
    const rounds: AmAlert[][] = [];
    for (const [round, point] of CRASH_POINTS.entries()) {
      rounds.push(makeAlerts(round));
      const sent = [...rounds[round]!, ...rounds.slice(0, round).flat()];
      const acked = await send(await startServer(point), sent);
      // It crashed: not every alert was acknowledged by this server.
      expect(acked.size).toBeLessThan(sent.length);
    }
    const all = rounds.flat();
    expect((await send(await startServer(), all)).size).toBe(all.length);
    await expectEachAlertOnce(all, rounds.length * GROUPS);
  }, 300_000);
});
